// The operator and an agent end to end under exactly the RBAC of config/rbac, watched the way a
// cluster watches them: /metrics over HTTPS behind TokenReview + SubjectAccessReview, scraped by
// a real Prometheus (Debian's) that is then queried; and no request of either component was
// ever refused by the API server.
#include <filesystem>
#include <map>

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "base/files.h"
#include "base/process.h"
#include "http/pki.h"
#include "kube/transport.h"
#include "support/eventually.h"
#include "support/https_get.h"
#include "support/operator_env.h"
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

// An instant query of the Prometheus HTTP API into `out`; false when Prometheus refused it.
bool query(int port, const std::string& q, json::Document* out) {
  auto t = kube::Transport::create("http://127.0.0.1:" + std::to_string(port), {});
  if (!t.ok()) return false;
  std::string target = "/api/v1/query?query=";
  for (unsigned char c : q) {
    static const char* kHex = "0123456789ABCDEF";
    if (std::isalnum(c) != 0 || c == '_') {
      target += static_cast<char>(c);
    } else {
      target += '%';
      target += kHex[c >> 4];
      target += kHex[c & 15];
    }
  }
  auto r = (*t)->send({"GET", target, "", "", "application/json", {}}, 5s);
  if (!r.ok() || r->status != 200) return false;
  return !out->Parse(r->body.c_str()).HasParseError();
}

// Debian's Prometheus with `config` (prometheus.yml) in `dir`, its data and log there too, on a
// free port (`port`); stopped with the test.
ChildProcess startPrometheus(const std::string& dir, const std::string& config, int* port) {
  REQUIRE(writeFileAtomic(dir + "/prometheus.yml", config, 0644).isOk());
  *port = testing::freePort();
  ProcessSpec spec;
  spec.argv = {"prometheus", "--config.file=" + dir + "/prometheus.yml",
               "--storage.tsdb.path=" + dir + "/data",
               "--web.listen-address=127.0.0.1:" + std::to_string(*port)};
  spec.kill_with_parent = true;
  spec.stdout_path = dir + "/prometheus.log";
  spec.stderr_path = dir + "/prometheus.log";
  auto prometheus = ChildProcess::spawn(spec);
  REQUIRE(prometheus.ok());
  return std::move(*prometheus);
}

// The number of series an instant query returned.
size_t seriesCount(int port, const std::string& q) {
  json::Document doc;
  if (!query(port, q, &doc)) return 0;
  const json::Value* result = json::at(doc, {"data", "result"});
  return result != nullptr && result->IsArray() ? result->Size() : 0;
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
    auto prometheus = startPrometheus(prom.path(), config, &port);
    auto log = [&] {
      auto text = readFile(prom.path() + "/prometheus.log");
      return text.ok() ? *text : std::string("(no log)");
    };
    eventually([&] { return seriesCount(port, "up == 1") == 2; }, 60s, log);
    CHECK(seriesCount(port,
                      "controller_runtime_reconcile_total{job=\"sriov-dra-operator\","
                      "controller=\"sriovnodestate\",result=\"success\"} > 0") == 1);
    CHECK(seriesCount(port, "workqueue_depth{job=\"sriov-dra-operator\"}") >= 3);
    CHECK(seriesCount(port, "sriov_dra_vfs{resource=\"cx6_vfs\",state=\"desired\"} == 8") == 1);
    CHECK(seriesCount(port, "controller_runtime_reconcile_total{job=\"sriov-dra-agent\"} > 0") >=
          1);
    CHECK(seriesCount(
              port, "sriov_dra_node_vfs{job=\"sriov-dra-agent\",state=\"advertised\"} == 8") == 1);
    CHECK(seriesCount(port, "sriov_dra_node_sync_status{status=\"Succeeded\"} == 1") == 1);
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
        CHECK(query(port, expr, &answer));
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
  auto prometheus = startPrometheus(prom.path(), config, &port);
  auto log = [&] {
    auto text = readFile(prom.path() + "/prometheus.log");
    return (text.ok() ? *text : std::string("(no log)")) + agent->logs();
  };
  eventually([&] { return seriesCount(port, "up == 1") == 2; }, 60s, log);
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
