// The admission webhook through the real API server's admission chain, and the same invalid
// object with the webhook off: Degraded status, everything else keeps reconciling.
#include <csignal>
#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/networks.h"
#include "base/base64.h"
#include "base/files.h"
#include "base/process.h"
#include "http/pki.h"
#include "support/dra_objects.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/https_get.h"
#include "support/logged_process.h"
#include "support/operator_env.h"
#include "support/policy_fixtures.h"
#include "support/skip.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::OperatorEnv;
using sriovdra::testing::yamlObject;

namespace {

std::string webhookConfigs(const std::string& ns, int port, const std::string& ca) {
  std::string common =
      "  clientConfig:\n    url: https://127.0.0.1:" + std::to_string(port) + "/PATH\n" +
      "    caBundle: " + base64Encode(ca) + "\n" +
      "  rules:\n  - apiGroups: [sriovnetwork.openshift.io, sriovnetwork.k8snetworkplumbingwg.io]\n"
      "    apiVersions: ['*']\n    operations: [CREATE, UPDATE]\n"
      "    resources: [sriovnetworknodepolicies, sriovresourcepolicies, deviceattributes,\n"
      "                sriovnetworks, sriovibnetworks, sriovoperatorconfigs,\n"
      "                sriovnetworkpoolconfigs]\n"
      "  namespaceSelector: {matchLabels: {sriov-dra-webhook-test: " +
      ns +
      "}}\n"
      "  failurePolicy: Fail\n  sideEffects: None\n  admissionReviewVersions: [v1]\n"
      "  timeoutSeconds: 10\n";
  auto with = [&](const std::string& path) {
    std::string c = common;
    c.replace(c.find("PATH"), 4, path.substr(1));
    return c;
  };
  return "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
         "metadata: {name: sriov-dra-" +
         ns + "}\nwebhooks:\n- name: mutate.sriov-dra.io\n" + with("/mutating-custom-resource") +
         "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
         "metadata: {name: sriov-dra-" +
         ns + "}\nwebhooks:\n- name: validate.sriov-dra.io\n" + with("/validating-custom-resource");
}

// A policy for the labelled nodes' PF `pf_name` (a pfNames entry, range allowed).
json::Document nodePolicy(const std::string& name, int num_vfs, const std::string& pf_name) {
  return yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: )" +
                    name + R"(}
spec:
  resourceName: )" + name +
                    R"(
  numVfs: )" + std::to_string(num_vfs) +
                    R"(
  nodeSelector: {dra-sriov-cx6: "true"}
  nicSelector: {pfNames: [")" +
                    pf_name + R"("]}
)");
}

json::Document badRange(const std::string& name) { return nodePolicy(name, 4, "ibp14s0#2-9"); }

// An operator serving the webhook with a fresh certificate, registered with the API server for
// this test's namespace.
struct WebhookOperator {
  std::unique_ptr<testing::OperatorProcess> op;
  http::Pem ca;
};

WebhookOperator startWithWebhook(OperatorEnv& env, std::vector<std::string> extra_args = {}) {
  std::string certs = env.cp().dir() + "/webhook-" + env.ns();
  std::filesystem::create_directories(certs);
  WebhookOperator w{nullptr, http::makeCa("webhook-ca")};
  auto serving = http::makeCert(w.ca, {.common_name = "sriov-dra-webhook",
                                       .ip_addresses = {"127.0.0.1"},
                                       .server = true,
                                       .client = false});
  REQUIRE(writeFileAtomic(certs + "/tls.key", serving.key, 0600).isOk());
  REQUIRE(writeFileAtomic(certs + "/tls.crt", serving.cert).isOk());
  w.op = env.startOperator({.webhook_cert_dir = certs, .extra_args = std::move(extra_args)});
  w.op->waitReady();
  REQUIRE(env.admin()
              .patch(kube::resources::kNamespaces, "", env.ns(), kube::PatchType::kMerge,
                     R"({"metadata":{"labels":{"sriov-dra-webhook-test":")" + env.ns() + "\"}}}")
              .ok());
  env.cp().applyYaml(webhookConfigs(env.ns(), w.op->webhookPort(), w.ca.cert));
  return w;
}

}  // namespace

TEST_CASE(
    "the webhook rejects invalid policies with a message that says what to change; "
    "without it the policy is Degraded and the rest keeps working",
    "[operator][webhook][integration]") {
  OperatorEnv env("webhook");
  std::string certs = env.cp().dir() + "/webhook-" + env.ns();
  std::filesystem::create_directories(certs);
  auto ca = http::makeCa("webhook-ca");
  auto serving = http::makeCert(ca, {.common_name = "sriov-dra-webhook",
                                     .ip_addresses = {"127.0.0.1"},
                                     .server = true,
                                     .client = false});
  // The certificate's Secret may be mounted after the pod started: the operator runs without the
  // webhook, then serves it once tls.crt and tls.key appear.
  auto op =
      env.startOperator({.webhook_cert_dir = certs, .extra_args = {"--advertise-node-policy-vfs"}});
  op->waitReady();
  eventually([&] { return op->logs().find("admission webhook not started") != std::string::npos; },
             10s, [&] { return op->logs(); });
  REQUIRE(writeFileAtomic(certs + "/tls.key", serving.key, 0600).isOk());
  REQUIRE(writeFileAtomic(certs + "/tls.crt", serving.cert).isOk());
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  REQUIRE(env.admin()
              .patch(kube::resources::kNamespaces, "", env.ns(), kube::PatchType::kMerge,
                     R"({"metadata":{"labels":{"sriov-dra-webhook-test":")" + env.ns() + "\"}}}")
              .ok());
  env.cp().applyYaml(webhookConfigs(env.ns(), op->webhookPort(), ca.cert));

  // The API server picks up new webhook configurations asynchronously.
  Status rejected;
  eventually(
      [&] {
        auto obj = badRange("bad-range");
        testing::retarget(obj, env.ns());
        auto created = env.admin().create(api::resources::kSriovNetworkNodePolicies, env.ns(), obj);
        if (created.ok()) {
          (void)env.admin().remove(api::resources::kSriovNetworkNodePolicies, env.ns(),
                                   "bad-range");
          return false;
        }
        rejected = created.status();
        // "failed calling webhook": the webhook is not serving yet.
        return rejected.code() != Code::kUnavailable;
      },
      40s, [&] { return "never rejected; operator log:\n" + op->logs(); });
  CHECK(rejected.code() == Code::kInvalid);
  CHECK_THAT(rejected.message(),
             Catch::Contains("denied the request") &&
                 Catch::Contains("spec.nicSelector.pfNames entry \"ibp14s0#2-9\": the range ends "
                                 "at VF 9 but numVfs is 4; VFs are numbered 0 to numVfs-1"));

  // Against what the node reports (8 VFs at most per PF), in the upstream webhook's words.
  env.reportStatus(node, testing::fixture::a100Status(1));
  Status too_many;
  eventually(
      [&] {
        auto obj = nodePolicy("too-many", 200, "ibp14s0");
        testing::retarget(obj, env.ns());
        auto created = env.admin().create(api::resources::kSriovNetworkNodePolicies, env.ns(), obj);
        if (created.ok()) {
          (void)env.admin().remove(api::resources::kSriovNetworkNodePolicies, env.ns(), "too-many");
          return false;  // the operator's cache has not seen the node's status yet
        }
        too_many = created.status();
        return true;
      },
      30s, [&] { return op->logs(); });
  CHECK_THAT(too_many.message(),
             Catch::Contains("numVfs(200) in CR too-many exceed the maximum allowed value(128) "
                             "interface(ibp14s0) node(" +
                             node + ")"));

  // A rotated certificate (cert-manager renewing the Secret) is served without a restart.
  auto ca2 = http::makeCa("webhook-ca-2");
  auto serving2 = http::makeCert(ca2, {.common_name = "sriov-dra-webhook",
                                       .ip_addresses = {"127.0.0.1"},
                                       .server = true,
                                       .client = false});
  REQUIRE(writeFileAtomic(certs + "/tls.key", serving2.key, 0600).isOk());
  REQUIRE(writeFileAtomic(certs + "/tls.crt", serving2.cert).isOk());
  eventually([&] { return testing::httpsGet(op->webhookPort(), ca2.cert, "/healthz").ok(); }, 30s,
             [] { return "the webhook does not serve the new certificate"; });
  auto old = testing::httpsGet(op->webhookPort(), ca.cert, "/healthz");
  REQUIRE_FALSE(old.ok());
  CHECK(old.status().code() == Code::kTlsVerification);
  env.cp().applyYaml(webhookConfigs(env.ns(), op->webhookPort(), ca2.cert));

  // Anyone who reaches the port may send anything: 200,000 nested arrays (400 KB, under the body
  // limit) are a 400 with the reason, and the operator goes on serving.
  auto bomb = testing::httpsRequest(op->webhookPort(), ca2.cert, "POST",
                                    "/validating-custom-resource", std::string(200000, '['));
  REQUIRE(bomb.ok());
  CHECK(bomb->status == 400);
  CHECK_THAT(bomb->body, Catch::Contains("nested deeper than 512"));
  CHECK(op->healthy());

  // The mutating webhook adds isRdma for an InfiniBand policy that leaves it out. (The API server
  // takes the new caBundle asynchronously: until then the webhook call fails and is retried.)
  eventually(
      [&] {
        auto obj = yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: ib}
spec:
  resourceName: ib_vfs
  numVfs: 2
  linkType: ib
  nodeSelector: {dra-sriov-cx6: "true"}
  nicSelector: {pfNames: [ibp17s0]}
)");
        testing::retarget(obj, env.ns());
        auto created = env.admin().create(api::resources::kSriovNetworkNodePolicies, env.ns(), obj);
        return created.ok() || created.status().code() == Code::kAlreadyExists;
      },
      30s, [] { return "the API server never accepted the ib policy through the webhook"; });
  auto ib = env.admin().get(api::resources::kSriovNetworkNodePolicies, env.ns(), "ib");
  REQUIRE(ib.ok());
  auto decoded = api::SriovNetworkNodePolicy::decode(*ib);
  REQUIRE(decoded.ok());
  CHECK(decoded->spec.is_rdma == true);
  CHECK(decoded->spec.priority == 99);

  // An UPDATE is checked as a CREATE is: a range past numVfs is refused, the stored policy kept.
  auto updated = env.admin().patch(api::resources::kSriovNetworkNodePolicies, env.ns(), "ib",
                                   kube::PatchType::kMerge,
                                   R"({"spec":{"nicSelector":{"pfNames":["ibp17s0#0-5"]}}})");
  REQUIRE_FALSE(updated.ok());
  CHECK(updated.status().code() == Code::kInvalid);
  CHECK_THAT(updated.status().message(),
             Catch::Contains("denied the request") &&
                 Catch::Contains("the range ends at VF 5 but numVfs is 2"));
  auto kept = env.admin().get(api::resources::kSriovNetworkNodePolicies, env.ns(), "ib");
  REQUIRE(kept.ok());
  CHECK(api::SriovNetworkNodePolicy::decode(*kept)->spec.nic_selector.pf_names ==
        std::vector<std::string>{"ibp17s0"});

  // Without the webhook the API server accepts the same object; its status says what is wrong.
  for (const auto* rt : {&kube::resources::kValidatingWebhookConfigurations,
                         &kube::resources::kMutatingWebhookConfigurations}) {
    REQUIRE(env.admin().remove(*rt, "", "sriov-dra-" + env.ns()).isOk());
  }
  eventually(
      [&] {
        auto obj = badRange("bad-range-2");
        testing::retarget(obj, env.ns());
        auto created = env.admin().create(api::resources::kSriovNetworkNodePolicies, env.ns(), obj);
        return created.ok() || created.status().code() == Code::kAlreadyExists;
      },
      20s, [] { return "the API server still calls the removed webhook"; });
  env.reportStatus(node, testing::fixture::a100Status(2));
  eventually(
      [&] {
        auto s = env.policyStatus(api::resources::kSriovNetworkNodePolicies, "bad-range-2");
        auto d = s ? api::findCondition(s->conditions, "Degraded") : nullptr;
        return d && d->status == "True" && d->reason == "InvalidSpec";
      },
      30s, [&] { return op->logs(); });
  auto s = *env.policyStatus(api::resources::kSriovNetworkNodePolicies, "bad-range-2");
  CHECK_THAT(api::findCondition(s.conditions, "Degraded")->message,
             Catch::Contains("the range ends at VF 9 but numVfs is 4"));
  CHECK(api::findCondition(s.conditions, "Ready")->status == "False");
  // The valid policy still configures the node.
  eventually(
      [&] {
        auto state = env.nodeState(node);
        return state && state->spec.interfaces.size() == 1 &&
               state->spec.interfaces[0].name == "ibp17s0" && state->spec.devices.size() == 2;
      },
      30s, [&] { return op->logs(); });
}

TEST_CASE("sriov-dra validate decides as the webhook does, given what kubectl shows",
          "[operator][webhook][integration]") {
  OperatorEnv env("agree");
  auto w = startWithWebhook(env);
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  auto status = testing::fixture::a100Status(1);
  status.interfaces[0].alt_names = {"enp14s0np0"};  // ibp14s0
  env.reportStatus(node, status);
  const auto& kPolicies = api::resources::kSriovNetworkNodePolicies;
  // A policy already in place; the webhook's caches must have it and the node's report before
  // the rows are meaningful (an overlap with it is refused once they do).
  auto existing = nodePolicy("existing", 4, "ibp14s0#0-3");
  testing::retarget(existing, env.ns());
  eventually(
      [&] {
        auto created = env.admin().create(kPolicies, env.ns(), existing);
        return created.ok() || created.status().code() == Code::kAlreadyExists;
      },
      40s, [&] { return "the webhook never admitted a valid policy:\n" + w.op->logs(); });
  eventually(
      [&] {
        auto probe = nodePolicy("probe", 8, "enp14s0np0#2-5");
        testing::retarget(probe, env.ns());
        auto created = env.admin().create(kPolicies, env.ns(), probe);
        if (created.ok()) (void)env.admin().remove(kPolicies, env.ns(), "probe");
        return !created.ok();
      },
      30s, [&] { return "the webhook never saw the policy and the node's altName"; });

  struct Row {
    std::string name;
    std::string yaml;  // the object, in this test's namespace
  };
  auto policy = [&](const std::string& name, const std::string& extra) {
    return "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodePolicy\n"
           "metadata: {name: " +
           name + "}\nspec:\n  resourceName: " + name +
           "\n  nodeSelector: {dra-sriov-cx6: \"true\"}\n" + extra;
  };
  auto network = [&](const std::string& kind, const std::string& name, const std::string& spec) {
    return "apiVersion: sriovnetwork.openshift.io/v1\nkind: " + kind +
           "\nmetadata: {name: " + name + "}\nspec:\n  resourceName: r\n" + spec;
  };
  std::vector<Row> rows = {
      {"valid", policy("valid", "  numVfs: 8\n  nicSelector: {pfNames: ['ibp14s0#4-7']}\n")},
      {"range past numVfs",
       policy("past", "  numVfs: 4\n  nicSelector: {pfNames: ['ibp17s0#2-9']}\n")},
      {"more VFs than the PF has",
       policy("too-many", "  numVfs: 200\n  nicSelector: {pfNames: [ibp17s0]}\n")},
      {"overlap through an altName",
       policy("alias", "  numVfs: 8\n  nicSelector: {pfNames: ['enp14s0np0#3-5']}\n")},
      {"externally managed above the PF's MTU",
       policy("ext-mtu",
              "  numVfs: 1\n  mtu: 9000\n  externallyManaged: true\n"
              "  nicSelector: {pfNames: [ibp82s0]}\n")},
      {"externally managed with another link type",
       policy("ext-link",
              "  numVfs: 1\n  linkType: eth\n  externallyManaged: true\n"
              "  nicSelector: {pfNames: [ibp83s0]}\n")},
      {"a network", network("SriovNetwork", "net", "  vlan: 10\n  ipam: '{\"type\": \"dhcp\"}'\n")},
      {"a network whose ipam is not JSON",
       network("SriovNetwork", "bad-ipam", "  ipam: '{type: dhcp}'\n")},
      {"an InfiniBand network with metaPlugins without a type",
       network("SriovIBNetwork", "bad-meta", "  metaPlugins: '{\"mtu\": 9000}'\n")},
  };
  int denied = 0;
  for (const auto& row : rows) {
    INFO(row.name);
    auto obj = yamlObject(row.yaml);
    testing::retarget(obj, env.ns());
    std::string kind(json::stringOr(obj, "kind"));
    const auto& rt = kind == "SriovNetworkNodePolicy" ? kPolicies
                     : kind == "SriovNetwork"         ? api::resources::kSriovNetworks
                                                      : api::resources::kSriovIBNetworks;
    std::string name = kube::ObjectMeta::decode(obj).name;
    auto created = env.admin().create(rt, env.ns(), obj);
    if (created.ok()) REQUIRE(env.admin().remove(rt, env.ns(), name).isOk());

    // What a user runs: the cluster as kubectl shows it, and the object they are about to apply.
    testing::TempDir dir;
    auto nodes = env.cp().kubectl({"get", "nodes", "-o", "yaml"});
    auto objects = env.cp().kubectl(
        {"get", "-n", env.ns(), "-o", "yaml", "sriovnodestates,sriovnetworknodepolicies"});
    INFO(nodes.err << objects.err);
    REQUIRE((nodes.exit_code == 0 && objects.exit_code == 0));
    ProcessSpec spec;
    spec.argv = {testing::binDir() + "/sriov-dra",
                 "validate",
                 "-n",
                 env.ns(),
                 "-f",
                 dir.write("nodes.yaml", nodes.out),
                 "-f",
                 dir.write("objects.yaml", objects.out),
                 "-f",
                 dir.write("mine.yaml", row.yaml)};
    auto validated = runProcess(spec, std::chrono::seconds(30));
    REQUIRE(validated.ok());
    INFO("webhook: " << (created.ok() ? "allowed" : created.status().message()));
    INFO("validate: " << validated->out << validated->err);
    CHECK((validated->exit_code == 0) == created.ok());
    if (created.ok()) continue;
    ++denied;
    // Every error validate names for the object is in the webhook's answer.
    std::istringstream lines(validated->out);
    std::string line;
    std::string prefix = kind;
    prefix.append("/").append(name).append(": error: ");
    int errors = 0;
    while (std::getline(lines, line)) {
      if (!line.starts_with(prefix)) continue;
      ++errors;
      CHECK_THAT(created.status().message(), Catch::Contains(line.substr(prefix.size())));
    }
    CHECK(errors > 0);
  }
  CHECK(denied == 7);
}

TEST_CASE("the webhook admits the operator and pool configs it honours and refuses the rest",
          "[operator][webhook][config][integration]") {
  OperatorEnv env("webhook-config");
  auto w = startWithWebhook(env);
  const auto& kConfigs = api::resources::kSriovOperatorConfigs;
  const auto& kPools = api::resources::kSriovNetworkPoolConfigs;
  auto config = [&](const std::string& name, const std::string& spec) {
    return "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovOperatorConfig\n"
           "metadata: {name: " +
           name + "}\nspec: " + spec + "\n";
  };
  auto pool = [&](const std::string& name, const std::string& spec) {
    return "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkPoolConfig\n"
           "metadata: {name: " +
           name + "}\nspec: " + spec + "\n";
  };
  auto create = [&](const std::string& yaml) {
    auto obj = yamlObject(yaml);
    testing::retarget(obj, env.ns());
    bool is_config = json::stringOr(obj, "kind") == "SriovOperatorConfig";
    return env.admin().create(is_config ? kConfigs : kPools, env.ns(), obj);
  };
  // Until the API server calls the webhook, a refused object is created: take it back.
  Status refused;
  eventually(
      [&] {
        auto created = create(config("mine", "{}"));
        if (created.ok()) {
          (void)env.admin().remove(kConfigs, env.ns(), "mine");
          return false;
        }
        refused = created.status();
        return refused.code() != Code::kUnavailable;
      },
      40s, [&] { return "never refused; operator log:\n" + w.op->logs(); });
  CHECK_THAT(refused.message(), Catch::Contains("only default SriovOperatorConfig in " + env.ns() +
                                                " namespace is used"));

  struct Row {
    std::string name;
    std::string yaml;
    std::string refusal;  // "" = admitted
  };
  std::vector<Row> rows = {
      {"the injector", config("default", "{enableInjector: true}"),
       "pods ask for VFs with ResourceClaims"},
      {"systemd mode", config("default", "{configurationMode: systemd}"), "DaemonSet only"},
      {"an RDMA mode",
       pool("rdma", "{nodeSelector: {matchLabels: {rdma: isolated}}, rdmaMode: exclusive}"), ""},
      {"maxUnavailable not a percentage", pool("bad", "{maxUnavailable: some}"),
       "SriovNetworkPoolConfig invalid maxUnavailable"},
      {"a pool", pool("gpu-nodes", "{nodeSelector: {matchLabels: {gpu: a100}}, maxUnavailable: 2}"),
       ""},
      {"upstream's default object",
       config("default",
              "{enableInjector: false, enableOperatorWebhook: true, configDaemonNodeSelector: {}, "
              "logLevel: 2, disableDrain: false, configurationMode: daemon}"),
       ""},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto created = create(row.yaml);
    if (row.refusal.empty()) {
      CHECK(created.ok());
    } else {
      REQUIRE_FALSE(created.ok());
      CHECK(created.status().code() == Code::kInvalid);
      CHECK_THAT(created.status().message(), Catch::Contains(row.refusal));
    }
  }

  // disableDrain may not turn true while a node is being reconfigured (it would stay cordoned).
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  auto status = testing::fixture::a100Status(1);
  status.sync_status = "InProgress";
  env.reportStatus(node, status);
  Status drain_refused;
  eventually(
      [&] {
        auto patched = env.admin().patch(kConfigs, env.ns(), "default", kube::PatchType::kMerge,
                                         R"({"spec":{"disableDrain":true}})");
        if (patched.ok()) {
          (void)env.admin().patch(kConfigs, env.ns(), "default", kube::PatchType::kMerge,
                                  R"({"spec":{"disableDrain":false}})");
          return false;  // the webhook's cache has not seen the node's report yet
        }
        drain_refused = patched.status();
        return true;
      },
      30s, [&] { return w.op->logs(); });
  CHECK_THAT(
      drain_refused.message(),
      Catch::Contains("can't set Spec.DisableDrain = true while node[" + node + "] is updating"));
}

TEST_CASE(
    "side by side with the SR-IOV network operator: its objects stay its own, a network "
    "copied here takes over its NetworkAttachmentDefinition in place",
    "[operator][webhook][networks][migration][integration]") {
  OperatorEnv env("side");
  std::string upstream = env.cp().newNamespace("sno");
  std::string app = env.cp().newNamespace("app");
  const auto& kNetworks = api::resources::kSriovNetworks;
  const auto& kNads = api::resources::kNetworkAttachmentDefinitions;
  env.cp().applyYaml(
      readFile(testing::sourceDir() + "/tests/fixtures/crds/network-attachment-definitions.yaml")
          .valueOr(""));
  // What the SR-IOV network operator left in its namespace: its config, a network for `app` with
  // its finalizer, and the NAD it rendered (its owner-ref annotation).
  std::string upstream_owner = "SriovNetwork.sriovnetwork.openshift.io/" + upstream + "/rdma-net";
  env.cp().applyYaml(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovOperatorConfig\nmetadata: {name: "
      "default, namespace: " +
      upstream +
      "}\nspec: {enableOperatorWebhook: true, logLevel: 2}\n"
      "---\napiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetwork\nmetadata:\n  name: "
      "rdma-net\n  namespace: " +
      upstream +
      "\n  finalizers: [netattdef.finalizers.sriovnetwork.openshift.io]\nspec:\n  resourceName: "
      "cx6_vfs\n  networkNamespace: " +
      app +
      "\n  ipam: '{\"type\":\"dhcp\"}'\n---\napiVersion: k8s.cni.cncf.io/v1\nkind: "
      "NetworkAttachmentDefinition\nmetadata:\n  name: rdma-net\n  namespace: " +
      app + "\n  annotations:\n    sriovnetwork.openshift.io/owner-ref: " + upstream_owner +
      "\nspec:\n  config: '{\"cniVersion\":\"1.0.0\",\"name\":\"rdma-net\",\"type\":"
      "\"sriov\",\"vlan\":0,\"vlanQoS\":0,\"ipam\":{\"type\":\"dhcp\"}}'\n");
  auto nad_uid = [&] {
    auto got = env.admin().get(kNads, app, "rdma-net");
    return got.ok() ? kube::ObjectMeta::decode(*got).uid : std::string();
  };
  std::string uid = nad_uid();
  REQUIRE_FALSE(uid.empty());

  // 1. Install with --upstream-namespace; our webhook also sees the upstream namespace.
  auto w = startWithWebhook(env, {"--upstream-namespace=" + upstream});
  REQUIRE(env.admin()
              .patch(kube::resources::kNamespaces, "", upstream, kube::PatchType::kMerge,
                     R"({"metadata":{"labels":{"sriov-dra-webhook-test":")" + env.ns() + "\"}}}")
              .ok());
  // Our webhook is called (a config of ours it refuses) ...
  eventually(
      [&] {
        auto obj = yamlObject(
            "apiVersion: sriovnetwork.openshift.io/v1\nkind: "
            "SriovOperatorConfig\nmetadata: {name: default, namespace: " +
            env.ns() + "}\nspec: {enableInjector: true}\n");
        auto created = env.admin().create(api::resources::kSriovOperatorConfigs, env.ns(), obj);
        if (created.ok()) {
          (void)env.admin().remove(api::resources::kSriovOperatorConfigs, env.ns(), "default");
          return false;
        }
        return created.status().code() == Code::kInvalid;
      },
      40s, [&] { return w.op->logs(); });
  // ... and leaves the upstream operator's objects to it: turning its webhook off (step 2 of
  // docs/migration.md) and editing its network are admitted.
  REQUIRE(env.admin()
              .patch(api::resources::kSriovOperatorConfigs, upstream, "default",
                     kube::PatchType::kMerge, R"({"spec":{"enableOperatorWebhook":false}})")
              .ok());
  REQUIRE(env.admin()
              .patch(kNetworks, upstream, "rdma-net", kube::PatchType::kMerge,
                     R"({"spec":{"vlan":100}})")
              .ok());

  // 3. The network copied into our namespace takes the NAD over in place: same object (pods that
  // use it are not disturbed), our owner-ref and render, an Adopted Event.
  auto copy = yamlObject(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetwork\n"
      "metadata: {name: rdma-net}\nspec:\n  resourceName: cx6_vfs\n"
      "  networkNamespace: " +
      app +
      "\n  vlan: 100\n"
      "  ipam: '{\"type\":\"dhcp\"}'\n");
  testing::retarget(copy, env.ns());
  REQUIRE(env.admin().create(kNetworks, env.ns(), copy).ok());
  std::string ours = "SriovNetwork.sriovnetwork.openshift.io/" + env.ns() + "/rdma-net";
  auto owner = [&] {
    auto got = env.admin().get(kNads, app, "rdma-net");
    if (!got.ok()) return std::string();
    auto meta = kube::ObjectMeta::decode(*got);
    auto it = meta.annotations.find("sriovnetwork.openshift.io/owner-ref");
    return it == meta.annotations.end() ? std::string() : it->second;
  };
  eventually([&] { return owner() == ours; }, 30s, [&] { return owner() + "\n" + w.op->logs(); });
  CHECK(nad_uid() == uid);
  auto nad = api::NetworkAttachmentDefinition::decode(*env.admin().get(kNads, app, "rdma-net"));
  REQUIRE(nad.ok());
  CHECK_THAT(nad->config, Catch::Contains("\"vlan\": 100"));
  eventually([&] { return env.findEvent("Adopted", "Normal", "rdma-net").has_value(); }, 30s,
             [&] { return w.op->logs(); });
  CHECK_THAT(*env.findEvent("Adopted", "Normal", "rdma-net"), Catch::Contains(upstream_owner));
  // The upstream network got nothing from us: no status, no finalizer of ours added.
  auto theirs = env.admin().get(kNetworks, upstream, "rdma-net");
  REQUIRE(theirs.ok());
  CHECK(json::at(*theirs, {"status", "conditions"}) == nullptr);

  // 4. Upstream's network goes (its operator is stopped: its finalizer is removed by hand); the
  // NAD stays ours.
  REQUIRE(env.admin()
              .patch(kNetworks, upstream, "rdma-net", kube::PatchType::kMerge,
                     R"({"metadata":{"finalizers":null}})")
              .ok());
  REQUIRE(env.admin().remove(kNetworks, upstream, "rdma-net").isOk());
  eventually([&] { return !env.admin().get(kNetworks, upstream, "rdma-net").ok(); }, 30s,
             [&] { return w.op->logs(); });
  CHECK(nad_uid() == uid);
  CHECK(owner() == ours);
}

namespace {

// The SR-IOV network operator's own controller (scripts/build-sriov-network-operator.sh,
// $SRIOV_DRA_SNO), run as its Deployment runs it on Kubernetes: in `ns`, with its manifests in
// its working directory and its Deployment's environment (placeholder images: nothing here runs
// its DaemonSets).
std::optional<ChildProcess> startUpstreamOperator(testing::ControlPlane& cp, const std::string& ns,
                                                  const std::string& log) {
  const char* dir = std::getenv("SRIOV_DRA_SNO");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  std::vector<std::string> argv = {"env",
                                   "-C",
                                   dir,
                                   std::string(dir) + "/bin/sriov-network-operator",
                                   "--metrics-bind-address=0",
                                   "--health-probe-bind-address=127.0.0.1:0"};
  std::vector<std::pair<std::string, std::string>> env = {
      {"KUBECONFIG", cp.kubeconfig()},
      {"NAMESPACE", ns},
      {"CLUSTER_TYPE", "kubernetes"},
      {"RESOURCE_PREFIX", "openshift.io"},
      {"OPERATOR_NAME", "sriov-network-operator"},
      {"RELEASE_VERSION", "4.7.0"},
      {"ADMISSION_CONTROLLERS_ENABLED", "false"},
      {"SRIOV_CNI_IMAGE", "registry.invalid/sriov-cni:test"},
      {"SRIOV_INFINIBAND_CNI_IMAGE", "registry.invalid/ib-sriov-cni:test"},
      {"OVS_CNI_IMAGE", "registry.invalid/ovs-cni:test"},
      {"RDMA_CNI_IMAGE", "registry.invalid/rdma-cni:test"},
      {"SRIOV_DEVICE_PLUGIN_IMAGE", "registry.invalid/sriov-device-plugin:test"},
      {"NETWORK_RESOURCES_INJECTOR_IMAGE", "registry.invalid/injector:test"},
      {"SRIOV_NETWORK_CONFIG_DAEMON_IMAGE", "registry.invalid/config-daemon:test"},
      {"SRIOV_NETWORK_WEBHOOK_IMAGE", "registry.invalid/webhook:test"},
      {"METRICS_EXPORTER_IMAGE", "registry.invalid/metrics-exporter:test"}};
  return testing::spawnLogged(std::move(argv), std::move(env), log);
}

}  // namespace

TEST_CASE(
    "migration from the SR-IOV network operator, walked with its own operator: its network's NAD "
    "becomes ours in place, it goes, and the pod that uses the network keeps its VF",
    "[operator][webhook][networks][migration][integration]") {
  if (std::getenv("SRIOV_DRA_SNO") == nullptr) {
    testing::skip("SRIOV_DRA_SNO is not set: run scripts/build-sriov-network-operator.sh");
    return;
  }
  auto cp = testing::ControlPlane::start(OperatorEnv::controlPlaneOptions());
  OperatorEnv env("migrate", *cp);
  const std::string upstream = cp->newNamespace("sriov-network-operator");
  const std::string app = cp->newNamespace("app");
  const std::string sno_dir = std::getenv("SRIOV_DRA_SNO");
  const auto& kNetworks = api::resources::kSriovNetworks;
  const auto& kNads = api::resources::kNetworkAttachmentDefinitions;
  cp->applyYaml(
      readFile(testing::sourceDir() + "/tests/fixtures/crds/network-attachment-definitions.yaml")
          .valueOr(""));
  // Its kinds that are not ours; the shared ones are served by our CRDs, with upstream's schemas.
  for (const char* crd : {"sriovnetwork.openshift.io_sriovnetworknodestates.yaml",
                          "sriovnetwork.openshift.io_ovsnetworks.yaml"}) {
    cp->applyYamlFile(sno_dir + "/crds/" + crd);
  }

  // The SR-IOV network operator as installed: its supported NICs, its config (webhooks off, as
  // step 1 of docs/migration.md leaves them), its controller.
  cp->applyYaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: supported-nic-ids, namespace: " +
                upstream +
                "}\ndata: {Mellanox_ConnectX_6: '15b3 101b 101c'}\n---\n"
                "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovOperatorConfig\n"
                "metadata: {name: default, namespace: " +
                upstream +
                "}\nspec: {enableInjector: false, enableOperatorWebhook: false, logLevel: 2}\n");
  const std::string log = cp->dir() + "/sriov-network-operator.log";
  auto sno = startUpstreamOperator(*cp, upstream, log);
  REQUIRE(sno.has_value());
  auto sno_log = [&] { return readFile(log).valueOr("(no log)"); };

  // Its network for `app`, rendered by it into a NAD (v1.6.0 writes no owner-ref annotation; its
  // later versions do, see the side-by-side test), and its finalizer on the network.
  cp->applyYaml(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetwork\nmetadata: {name: rdma-net, "
      "namespace: " +
      upstream + "}\nspec:\n  resourceName: cx6_vfs\n  networkNamespace: " + app +
      "\n  vlan: 100\n  ipam: '{\"type\":\"dhcp\"}'\n");
  auto annotation = [&](const std::string& key) {
    auto got = env.admin().get(kNads, app, "rdma-net");
    if (!got.ok()) return std::string("(no NAD)");
    auto meta = kube::ObjectMeta::decode(*got);
    auto it = meta.annotations.find(key);
    return it == meta.annotations.end() ? std::string() : it->second;
  };
  auto owner = [&] { return annotation("sriovnetwork.openshift.io/owner-ref"); };
  auto nad_uid = [&] {
    auto got = env.admin().get(kNads, app, "rdma-net");
    return got.ok() ? kube::ObjectMeta::decode(*got).uid : std::string();
  };
  eventually([&] { return !nad_uid().empty(); }, 60s, sno_log);
  const std::string uid = nad_uid();
  CHECK(annotation("k8s.v1.cni.cncf.io/resourceName") == "openshift.io/cx6_vfs");
  CHECK(owner().empty());
  auto finalizers = [&] {
    auto got = env.admin().get(kNetworks, upstream, "rdma-net");
    return got.ok() ? kube::ObjectMeta::decode(*got).finalizers : std::vector<std::string>{};
  };
  CHECK(finalizers() == std::vector<std::string>{"netattdef.finalizers.sriovnetwork.openshift.io"});

  // A pod that uses the network and one of our VFs (no kubelet here: what the API server holds
  // for it is what must not change).
  auto pod = yamlObject(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: inference-0\n"
      "  annotations: {k8s.v1.cni.cncf.io/networks: rdma-net}\n"
      "spec:\n  nodeName: node-a\n"
      "  containers: [{name: c, image: registry.k8s.io/pause:3.10}]\n");
  Result<json::Document> created = Status(Code::kUnavailable, "not tried");
  eventually([&] { return (created = env.admin().create(kube::resources::kPods, app, pod)).ok(); },
             30s, [&] { return created.status().toString(); });
  const std::string pod_uid = kube::ObjectMeta::decode(*created).uid;
  testing::createAllocatedClaim(env.admin(),
                                {.ns = app,
                                 .name = "inference-0-vf",
                                 .node = "node-a",
                                 .results = {{"vf", std::string(api::kDriverName), "0000-0e-00-1"}},
                                 .pod_name = "inference-0",
                                 .pod_uid = pod_uid});

  // Ours installed beside it, told where it runs.
  auto w = startWithWebhook(env, {"--upstream-namespace=" + upstream});
  REQUIRE(env.admin()
              .patch(kube::resources::kNamespaces, "", upstream, kube::PatchType::kMerge,
                     R"({"metadata":{"labels":{"sriov-dra-webhook-test":")" + env.ns() + "\"}}}")
              .ok());
  CHECK(owner().empty());  // ours leaves its NAD alone while it runs

  // Step 2: stop it. Its graceful stop clears its finalizer from its SriovNetworks.
  sno->stop(SIGTERM, 30s);
  CHECK(finalizers().empty());

  // Step 3: the network copied into our namespace takes the NAD over in place.
  auto copy = yamlObject(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetwork\n"
      "metadata: {name: rdma-net}\nspec:\n  resourceName: cx6_vfs\n  networkNamespace: " +
      app + "\n  vlan: 100\n  ipam: '{\"type\":\"dhcp\"}'\n");
  testing::retarget(copy, env.ns());
  REQUIRE(env.admin().create(kNetworks, env.ns(), copy).ok());
  const std::string ours = "SriovNetwork.sriovnetwork.openshift.io/" + env.ns() + "/rdma-net";
  eventually([&] { return owner() == ours; }, 30s, [&] { return owner() + "\n" + w.op->logs(); });
  CHECK(nad_uid() == uid);

  // Step 4: its network goes; step 5: so does it (its namespace, its own kinds' CRDs).
  REQUIRE(env.admin().remove(kNetworks, upstream, "rdma-net").isOk());
  eventually([&] { return !env.admin().get(kNetworks, upstream, "rdma-net").ok(); }, 30s,
             [&] { return w.op->logs(); });
  REQUIRE(env.admin().remove(kube::resources::kNamespaces, "", upstream).isOk());
  CHECK(cp->kubectl({"delete", "crd", "sriovnetworknodestates.sriovnetwork.openshift.io",
                     "ovsnetworks.sriovnetwork.openshift.io"})
            .exit_code == 0);

  // The NAD is the same object, ours; the network is Ready; the pod and its VF are untouched.
  CHECK(nad_uid() == uid);
  CHECK(owner() == ours);
  eventually(
      [&] {
        auto got = env.admin().get(kNetworks, env.ns(), "rdma-net");
        if (!got.ok()) return false;
        auto n = api::SriovNetwork::decode(*got);
        const api::Condition* ready =
            n.ok() ? api::findCondition(n->status.conditions, "Ready") : nullptr;
        return ready != nullptr && ready->status == "True";
      },
      30s, [&] { return w.op->logs(); });
  auto still = env.admin().get(kube::resources::kPods, app, "inference-0");
  REQUIRE(still.ok());
  CHECK(kube::ObjectMeta::decode(*still).uid == pod_uid);
  CHECK(kube::ObjectMeta::decode(*still).deletion_timestamp.empty());
  auto claim = env.admin().get(api::resources::kResourceClaims, app, "inference-0-vf");
  REQUIRE(claim.ok());
  auto rc = api::ResourceClaim::decode(*claim);
  REQUIRE(rc.ok());
  REQUIRE(rc->status.allocation.has_value());
  CHECK(rc->status.allocation->results.at(0).device == "0000-0e-00-1");
  REQUIRE(rc->status.reserved_for.size() == 1);
  CHECK(rc->status.reserved_for[0].uid == pod_uid);
}
