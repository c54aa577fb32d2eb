// The admission webhook through the real API server's admission chain, and the same invalid
// object with the webhook off: Degraded status, everything else keeps reconciling.
#include <filesystem>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "base/base64.h"
#include "base/files.h"
#include "http/pki.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/https_get.h"
#include "support/operator_env.h"
#include "support/policy_fixtures.h"

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
      "    resources: [sriovnetworknodepolicies, sriovresourcepolicies, deviceattributes]\n"
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
        auto obj = nodePolicy("too-many", 16, "ibp14s0");
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
             Catch::Contains("numVfs(16) in CR too-many exceed the maximum allowed value(8) "
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
