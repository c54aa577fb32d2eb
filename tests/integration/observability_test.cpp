// The operator and an agent end to end under exactly the RBAC of config/rbac, watched the way a
// cluster watches them: /metrics over HTTPS behind TokenReview + SubjectAccessReview, scraped by
// a real Prometheus (Debian's) that is then queried; and no request of either component was
// ever refused by the API server. And the agent's per-VF families under upstream's exporter
// names, joined to the pods as upstream documents it.
#include <filesystem>
#include <map>
#include <tuple>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "base/base64.h"
#include "base/files.h"
#include "base/process.h"
#include "host/simulated_kernel.h"
#include "http/pki.h"
#include "kube/transport.h"
#include "support/dra_objects.h"
#include "support/eventually.h"
#include "support/https_get.h"
#include "support/kubelet_client.h"
#include "support/metrics_text.h"
#include "support/operator_env.h"
#include "support/prometheus.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::OperatorEnv;

namespace {

// GET /metrics over HTTPS, verifying the serving certificate against `ca`.
kube::HttpResponse scrape(int port, const std::string& ca, const std::string& token) {
  auto r = testing::httpsGet(port, ca, "/metrics", token);
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("secure metrics, a real Prometheus scrape, and no request refused",
          "[observability][integration]") {
  auto options = OperatorEnv::controlPlaneOptions();
  options.users.push_back({"prometheus", {}});
  auto cp = testing::ControlPlane::start(options);
  OperatorEnv env("obs", *cp);
  cp->applyYamlFile(testing::sourceDir() + "/config/rbac/metrics_reader_role.yaml");
  cp->bindRole("ClusterRole", "sriov-dra-metrics-reader", "prometheus", env.ns());

  // The scrapers verify the endpoints against this CA.
  testing::TempDir certs;
  auto ca = http::makeCa("metrics-ca");
  auto serving = http::makeCert(ca, {.common_name = "localhost",
                                     .dns_names = {"localhost"},
                                     .ip_addresses = {"127.0.0.1"},
                                     .client = false});
  REQUIRE(writeFileAtomic(certs.path() + "/tls.crt", serving.cert, 0644).isOk());
  REQUIRE(writeFileAtomic(certs.path() + "/tls.key", serving.key, 0600).isOk());
  REQUIRE(writeFileAtomic(certs.path() + "/ca.crt", ca.cert, 0644).isOk());

  auto op = env.startOperator({.metrics_cert_dir = certs.path()});
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  auto agent = env.startAgent(node, "a100-reference", "", certs.path());
  env.applyReferencePolicies();
  eventually([&] { return env.deviceCount(node) == 8; }, 90s, [&] { return agent->logs(); });

  SECTION("/metrics wants a token that may read it") {
    for (int port : {op->metricsPort(), agent->metricsPort()}) {
      auto anonymous = scrape(port, ca.cert, "");
      CHECK(anonymous.status == 401);
      auto bogus = scrape(port, ca.cert, "not-a-token");
      CHECK(bogus.status == 401);
      auto restricted = scrape(port, ca.cert, cp->token("restricted"));
      CHECK(restricted.status == 403);
      CHECK_THAT(restricted.body, Catch::Contains("user \"restricted\" may not get /metrics"));
      auto allowed = scrape(port, ca.cert, cp->token("prometheus"));
      CHECK(allowed.status == 200);
      CHECK_THAT(allowed.body,
                 Catch::Contains("# TYPE controller_runtime_reconcile_total counter"));
    }
    // New tokens cost a TokenReview each, sent with the component's credentials: a flood of
    // them from one address is answered 429 past that source's review budget (burst 8, then 2
    // per second; review_budget_test.cpp has the rest of the rules), nothing sent, while the
    // scraper whose answer is cached goes on.
    for (auto [port, user] : {std::pair{op->metricsPort(), std::string("operator")},
                              std::pair{agent->metricsPort(), env.agentUser()}}) {
      INFO(user);
      auto reviews = [&, &who = user] {
        int n = 0;
        for (const auto& e : cp->auditEvents()) {
          n += e.user == who && e.resource == "tokenreviews" && e.verb == "create" ? 1 : 0;
        }
        return n;
      };
      int before = reviews();
      auto start = std::chrono::steady_clock::now();
      int refused = 0;
      int unauthorized = 0;
      for (int i = 0; i < 80; ++i) {
        auto r = scrape(port, ca.cert, "flood-" + std::to_string(i));
        refused += r.status == 429 ? 1 : 0;
        unauthorized += r.status == 401 ? 1 : 0;
      }
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      CHECK(refused + unauthorized == 80);
      CHECK(refused > 0);
      CHECK(unauthorized <= 8 + static_cast<int>(seconds * 2) + 1);
      CHECK(scrape(port, ca.cert, cp->token("prometheus")).status == 200);
      eventually([&] { return reviews() - before >= unauthorized; }, 10s,
                 [&] { return "TokenReviews not in the audit log yet"; });
      CHECK(reviews() - before == unauthorized);
    }
    // Tokens never reach the logs.
    CHECK_THAT(op->logs(), !Catch::Contains(cp->token("prometheus")));
    CHECK_THAT(agent->logs(), !Catch::Contains(cp->token("prometheus")));
  }

  SECTION("a rotated certificate is served without a restart") {
    auto ca2 = http::makeCa("metrics-ca-2");
    auto serving2 = http::makeCert(ca2, {.common_name = "localhost",
                                         .dns_names = {"localhost"},
                                         .ip_addresses = {"127.0.0.1"},
                                         .client = false});
    REQUIRE(writeFileAtomic(certs.path() + "/tls.key", serving2.key, 0600).isOk());
    REQUIRE(writeFileAtomic(certs.path() + "/tls.crt", serving2.cert, 0644).isOk());
    for (int port : {op->metricsPort(), agent->metricsPort()}) {
      INFO("port " << port);
      eventually(
          [&] {
            auto r = testing::httpsGet(port, ca2.cert, "/metrics", cp->token("prometheus"));
            return r.ok() && r->status == 200;
          },
          30s, [&] { return "the new certificate is not served"; });
      auto old = testing::httpsGet(port, ca.cert, "/metrics", cp->token("prometheus"));
      REQUIRE_FALSE(old.ok());
      CHECK(old.status().code() == Code::kTlsVerification);
    }
  }

  SECTION("Prometheus scrapes both and answers queries") {
    testing::TempDir prom;
    REQUIRE(writeFileAtomic(prom.path() + "/token", cp->token("prometheus"), 0600).isOk());
    std::string job_tls =
        "    scheme: https\n    authorization:\n      credentials_file: " + prom.path() +
        "/token\n    tls_config:\n      ca_file: " + certs.path() + "/ca.crt\n";
    std::string config =
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
        "  - job_name: sriov-dra-operator\n" +
        job_tls +
        "    static_configs:\n      - targets: ['127.0.0.1:" + std::to_string(op->metricsPort()) +
        "']\n"
        "  - job_name: sriov-dra-agent\n" +
        job_tls + "    static_configs:\n      - targets: ['127.0.0.1:" +
        std::to_string(agent->metricsPort()) + "']\n";
    int port = 0;
    auto prometheus = testing::startPrometheus(prom.path(), config, &port);
    auto log = [&] { return testing::prometheusLog(prom.path()); };
    eventually([&] { return testing::seriesCount(port, "up == 1") == 2; }, 60s, log);
    CHECK(testing::seriesCount(port,
                               "controller_runtime_reconcile_total{job=\"sriov-dra-operator\","
                               "controller=\"sriovnodestate\",result=\"success\"} > 0") == 1);
    CHECK(testing::seriesCount(port, "workqueue_depth{job=\"sriov-dra-operator\"}") >= 3);
    CHECK(testing::seriesCount(port,
                               "sriov_dra_vfs{resource=\"cx6_vfs\",state=\"desired\"} == 8") == 1);
    CHECK(testing::seriesCount(
              port, "controller_runtime_reconcile_total{job=\"sriov-dra-agent\"} > 0") >= 1);
    CHECK(testing::seriesCount(
              port, "sriov_dra_node_vfs{job=\"sriov-dra-agent\",state=\"advertised\"} == 8") == 1);
    CHECK(testing::seriesCount(port, "sriov_dra_node_sync_status{status=\"Succeeded\"} == 1") == 1);
    // Every query of the Grafana dashboard is one Prometheus accepts, over metrics that exist.
    auto text = readFile(testing::sourceDir() + "/config/grafana/sriov-dra-dashboard.json");
    REQUIRE(text.ok());
    auto dashboard = json::parse(*text);
    REQUIRE(dashboard.ok());
    std::string scraped = scrape(op->metricsPort(), ca.cert, cp->token("prometheus")).body +
                          scrape(agent->metricsPort(), ca.cert, cp->token("prometheus")).body;
    for (const auto& panel : (*dashboard)["panels"].GetArray()) {
      for (const auto& target : panel["targets"].GetArray()) {
        std::string expr = target["expr"].GetString();
        INFO(panel["title"].GetString() << ": " << expr);
        json::Document answer;
        CHECK(testing::prometheusQuery(port, expr, &answer));
        auto metric = expr.find("sriov_dra_");
        if (metric == std::string::npos) metric = expr.find("controller_runtime_");
        REQUIRE(metric != std::string::npos);
        std::string name = expr.substr(metric, expr.find_first_of("{[) ", metric) - metric);
        if (name.ends_with("_bucket")) name = name.substr(0, name.size() - 7);
        CHECK_THAT(scraped, Catch::Contains("# TYPE " + name + " "));
      }
    }
    prometheus.stop(SIGTERM, 10s);
  }

  // Everything the two components asked for was allowed: config/rbac is complete.
  for (const auto& e : cp->auditEvents()) {
    if (e.user != "operator" && e.user != env.agentUser()) continue;
    INFO(e.user << " " << e.verb << " " << e.resource << "/" << e.subresource << " " << e.namespace_
                << "/" << e.name);
    CHECK(e.code != 403);
  }
  CHECK_THAT(op->logs(), !Catch::Contains("Forbidden"));
  CHECK_THAT(agent->logs(), !Catch::Contains("Forbidden"));
}

namespace {

// The Secret's data, decoded, as a kubelet writes a Secret volume into `dir` (tls.crt, tls.key).
std::map<std::string, std::string> secretData(const json::Value& secret) {
  std::map<std::string, std::string> out;
  const json::Value* data = json::objectMember(secret, "data");
  if (data == nullptr) return out;
  for (const auto& m : data->GetObject()) {
    auto decoded = base64Decode(m.value.GetString());
    if (decoded.ok()) out[m.name.GetString()] = *decoded;
  }
  return out;
}

void mountSecret(const std::map<std::string, std::string>& data, const std::string& dir) {
  for (const char* key : {"tls.key", "tls.crt"}) {
    REQUIRE(writeFileAtomic(dir + "/" + key, data.at(key), 0600).isOk());
  }
}

}  // namespace

TEST_CASE("the operator's metrics CA: scrapers verify the operator and every agent by name",
          "[observability][integration]") {
  auto options = OperatorEnv::controlPlaneOptions();
  options.users.push_back({"prometheus", {}});
  auto cp = testing::ControlPlane::start(options);
  OperatorEnv env("obs-ca", *cp);
  cp->applyYamlFile(testing::sourceDir() + "/config/rbac/metrics_reader_role.yaml");
  cp->bindRole("ClusterRole", "sriov-dra-metrics-reader", "prometheus", env.ns());

  // The pods' Secret volumes are empty until the operator has written the Secret.
  testing::TempDir op_certs, agent_certs;
  auto op = env.startOperator({.metrics_cert_dir = op_certs.path()});
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  auto agent = env.startAgent(node, "a100-reference", "", agent_certs.path());

  std::optional<json::Document> secret, agent_secret;
  eventually(
      [&] {
        auto got = env.admin().get(kube::resources::kSecrets, env.ns(), "sriov-dra-metrics-cert");
        auto agents =
            env.admin().get(kube::resources::kSecrets, env.ns(), "sriov-dra-agent-metrics-cert");
        if (got.ok()) secret = std::move(*got);
        if (agents.ok()) agent_secret = std::move(*agents);
        return secret.has_value() && agent_secret.has_value();
      },
      30s, [&] { return op->logs(); });
  auto data = secretData(*secret);
  auto agent_data = secretData(*agent_secret);
  REQUIRE(data.count("ca.crt") == 1);
  CHECK(agent_data.at("ca.crt") == data.at("ca.crt"));
  CHECK(agent_data.at("tls.key") != data.at("tls.key"));  // a node holds the agents' key only
  const std::string operator_name = "sriov-dra-operator-metrics." + env.ns() + ".svc";
  const std::string agent_name = "sriov-dra-agent-metrics." + env.ns() + ".svc";
  CHECK(kube::ObjectMeta::decode(*secret).labels.at("app.kubernetes.io/part-of") == "sriov-dra");

  // Until the volume is filled both serve a self-signed certificate, which the CA does not verify.
  for (auto [port, name] :
       {std::pair{op->metricsPort(), operator_name}, std::pair{agent->metricsPort(), agent_name}}) {
    auto r = testing::httpsGet(port, data.at("ca.crt"), "/metrics", cp->token("prometheus"), name);
    CHECK_FALSE(
        r.ok());  // the handshake fails: neither the CA nor the name is the self-signed one's
  }
  mountSecret(data, op_certs.path());
  mountSecret(agent_data, agent_certs.path());

  // Prometheus, configured as the ServiceMonitors of config/prometheus: the CA of the Secret's
  // ca.crt and the Service's name as server_name; no verification is skipped.
  testing::TempDir prom;
  REQUIRE(writeFileAtomic(prom.path() + "/token", cp->token("prometheus"), 0600).isOk());
  REQUIRE(writeFileAtomic(prom.path() + "/ca.crt", data.at("ca.crt"), 0644).isOk());
  auto job = [&](const std::string& job_name, const std::string& server_name, int port) {
    return "  - job_name: " + job_name +
           "\n    scheme: https\n    authorization:\n      credentials_file: " + prom.path() +
           "/token\n    tls_config:\n      ca_file: " + prom.path() +
           "/ca.crt\n      server_name: " + server_name +
           "\n    static_configs:\n      - targets: ['127.0.0.1:" + std::to_string(port) + "']\n";
  };
  std::string config = "global:\n  scrape_interval: 1s\nscrape_configs:\n" +
                       job("sriov-dra-operator", operator_name, op->metricsPort()) +
                       job("sriov-dra-agent", agent_name, agent->metricsPort());
  int port = 0;
  auto prometheus = testing::startPrometheus(prom.path(), config, &port);
  auto log = [&] { return testing::prometheusLog(prom.path()) + agent->logs(); };
  eventually([&] { return testing::seriesCount(port, "up == 1") == 2; }, 60s, log);
  // The agents' certificate is not the operator's: a node's key cannot pass for the operator.
  auto wrong = testing::httpsGet(agent->metricsPort(), data.at("ca.crt"), "/metrics",
                                 cp->token("prometheus"), operator_name);
  CHECK_FALSE(wrong.ok());
  auto right = testing::httpsGet(agent->metricsPort(), data.at("ca.crt"), "/metrics",
                                 cp->token("prometheus"), agent_name);
  CHECK(right.ok());
  prometheus.stop(SIGTERM, 10s);

  // A deleted serving Secret is issued again under the same CA (here at the operator's restart;
  // a running one looks every hour).
  op.reset();
  REQUIRE(env.admin().remove(kube::resources::kSecrets, env.ns(), "sriov-dra-metrics-cert").isOk());
  op = env.startOperator({.metrics_cert_dir = op_certs.path()});
  eventually(
      [&] {
        auto got = env.admin().get(kube::resources::kSecrets, env.ns(), "sriov-dra-metrics-cert");
        if (!got.ok()) return false;
        auto again = secretData(*got);
        return again.at("ca.crt") == data.at("ca.crt") && again.at("tls.crt") != data.at("tls.crt");
      },
      30s, [&] { return op->logs(); });
  CHECK_THAT(op->logs(), Catch::Contains("the Secret sriov-dra-metrics-cert is missing"));

  for (const auto& e : cp->auditEvents()) {
    if (e.user != "operator") continue;
    INFO(e.verb << " " << e.resource << " " << e.namespace_ << "/" << e.name);
    CHECK(e.code != 403);
  }
}

TEST_CASE("upstream's exporter families: a VF's counters joined to its pod by a real Prometheus",
          "[observability][integration]") {
  auto cp = testing::ControlPlane::start(OperatorEnv::controlPlaneOptions());
  OperatorEnv env("vfstats", *cp);
  auto op = env.startOperator();
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  testing::TempDir kubelet;
  auto agent =
      env.startAgent(node, "a100-reference", kubelet.path(), "", {"--configuration-mode=multus"});
  env.applyReferencePolicies();
  eventually([&] { return env.deviceCount(node) == 8; }, 90s, [&] { return agent->logs(); });
  auto registered = testing::KubeletClient::registerPlugin(
      testing::KubeletDirs::under(kubelet.path()).registry, std::string(api::kDriverName));
  REQUIRE(registered.ok());

  // The VF's PF as the node reports it, and traffic through the VF (the simulated PF driver
  // counts it, as a NIC's switch would).
  const std::string vf_address = "0000:11:00.1";
  std::string pf_name;
  int64_t vf_index = -1;
  auto state = env.nodeState(node);
  REQUIRE(state);
  for (const auto& pf : state->status.interfaces) {
    for (const auto& vf : pf.vfs) {
      if (vf.pci_address == vf_address) std::tie(pf_name, vf_index) = std::pair{pf.name, vf.vf_id};
    }
  }
  REQUIRE(!pf_name.empty());
  host::SimulatedKernel kernel(env.sysfsRoot(node));
  REQUIRE(kernel
              .addVfTraffic(pf_name, {.vf = static_cast<int32_t>(vf_index),
                                      .rx_packets = 1000,
                                      .tx_packets = 2000,
                                      .rx_bytes = 1500000,
                                      .tx_bytes = 3000000})
              .isOk());

  std::string uid = testing::createAllocatedClaim(
      env.admin(), {.ns = env.ns(),
                    .name = "client-devices",
                    .node = node,
                    .results = {{"vf", std::string(api::kDriverName), "0000-11-00-1"}},
                    .vf_config = R"("ifName":"net1","netAttachDefName":"cx6-vf")",
                    .pod_name = "llm-client",
                    .pod_uid = "8f4829c3-6499-4f8f-b57f-edabd7f0282a"});
  testing::KubeletClaim claim{env.ns(), uid, "client-devices"};
  auto prepared = testing::KubeletClient::prepare(registered->endpoint, "v1", {claim});
  REQUIRE(prepared.ok());
  REQUIRE(prepared->at(uid).error == "");

  std::string labels = "numa_node=\"0\",pciAddr=\"" + vf_address + "\",pf=\"" + pf_name +
                       "\",vf=\"" + std::to_string(vf_index) + "\"";
  std::string text = agent->metrics();
  CHECK(testing::sampleValue(text, "sriov_vf_rx_bytes{" + labels + "}") == 1500000);
  CHECK(testing::sampleValue(text, "sriov_vf_tx_packets{" + labels + "}") == 2000);
  CHECK(testing::sampleValue(text,
                             "sriov_kubepoddevice{container=\"\",dev_type=\"openshift.io/"
                             "cx6_vfs\",namespace=\"" +
                                 env.ns() + "\",pciAddr=\"" + vf_address +
                                 "\",pod=\"llm-client\"}") == 1);

  // Prometheus scrapes the agent and answers upstream's documented join with the pod's labels.
  testing::TempDir prom;
  int port = 0;
  auto prometheus = testing::startPrometheus(
      prom.path(),
      "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
      "  - job_name: sriov-dra-agent\n    static_configs:\n      - targets: ['127.0.0.1:" +
          std::to_string(agent->metricsPort()) + "']\n",
      &port);
  const std::string join =
      "sriov_vf_rx_bytes * on (pciAddr) group_left(pod, namespace) "
      "sriov_kubepoddevice";
  eventually([&] { return testing::seriesCount(port, join) == 1; }, 60s,
             [&] { return testing::prometheusLog(prom.path()); });
  json::Document answer;
  REQUIRE(testing::prometheusQuery(port, join, &answer));
  const json::Value& series = answer["data"]["result"][0];
  CHECK(std::string(series["metric"]["pod"].GetString()) == "llm-client");
  CHECK(std::string(series["metric"]["namespace"].GetString()) == env.ns());
  CHECK(std::string(series["metric"]["pf"].GetString()) == pf_name);
  CHECK(std::string(series["value"][1].GetString()) == "1500000");
  // Every VF of the node is counted, in use or not.
  CHECK(testing::seriesCount(port, "sriov_vf_tx_bytes") == 8);

  // The pod's claim unprepared: its device leaves the metrics; the VF's counters stay.
  auto undone = testing::KubeletClient::unprepare(registered->endpoint, "v1", {claim});
  REQUIRE(undone.ok());
  text = agent->metrics();
  CHECK_THAT(text, !Catch::Contains("sriov_kubepoddevice{"));
  CHECK(testing::sampleValue(text, "sriov_vf_rx_bytes{" + labels + "}") == 1500000);
  prometheus.stop(SIGTERM, 10s);
}
