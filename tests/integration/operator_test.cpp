// The operator process against the real API server, under its own RBAC: the reference policies
// render the reference node, labels and policy deletion take effect, conflicts are explained.
#include <csignal>
#include <thread>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "metrics/registry.h"
#include "support/audit.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/metrics_text.h"
#include "support/olm.h"
#include "support/operator_env.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::conditionSummary;
using sriovdra::testing::eventually;
using sriovdra::testing::OperatorEnv;

namespace {

const kube::ResourceType kDaemonSets{"apps", "v1", "daemonsets", "DaemonSet", true};

const char* kCx6Class = "cx6-vfs.sriovnetwork.k8snetworkplumbingwg.io";

std::string describeState(const OperatorEnv& env, const std::string& node) {
  auto s = env.nodeState(node);
  if (!s) return node + ": no SriovNodeState";
  return node + ": " + std::to_string(s->spec.interfaces.size()) + " interfaces, " +
         std::to_string(s->spec.devices.size()) + " devices";
}

void applyReference(OperatorEnv& env) { env.applyReferencePolicies(); }

}  // namespace

TEST_CASE("the reference policies configure the labelled node and create its DeviceClass",
          "[operator][integration]") {
  OperatorEnv env("ref");
  auto op = env.startOperator();
  std::string labelled = env.createNode("a100-04", {{"dra-sriov-cx6", "true"}});
  std::string other = env.createNode("a100-05", {});
  applyReference(env);
  env.reportStatus(labelled, testing::fixture::a100Status(1));
  env.reportStatus(other, testing::fixture::a100Status(1));

  eventually(
      [&] {
        auto s = env.nodeState(labelled);
        return s && s->spec.interfaces.size() == 8 && s->spec.devices.size() == 8;
      },
      30s, [&] { return describeState(env, labelled) + "\n" + op->logs(); });
  auto state = *env.nodeState(labelled);
  for (const auto& i : state.spec.interfaces) {
    CHECK(i.num_vfs == 1);
    CHECK(i.link_type == "ib");
    REQUIRE(i.vf_groups.size() == 1);
    CHECK(i.vf_groups[0].is_rdma);
  }
  for (const auto& d : state.spec.devices) {
    CHECK(d.attributes == api::Attributes{{std::string(api::attr::kResourceName),
                                           api::AttributeValue::ofString("cx6_vfs")},
                                          {std::string(api::attr::kCniResourceName),
                                           api::AttributeValue::ofString("openshift.io/cx6_vfs")}});
  }
  CHECK(state.metadata.labels.at("app.kubernetes.io/managed-by") == "sriov-dra-operator");
  REQUIRE(state.metadata.owner_references.size() == 1);
  CHECK(state.metadata.owner_references[0].kind == "Node");

  auto unlabelled = env.nodeState(other);
  REQUIRE(unlabelled);
  CHECK(unlabelled->spec.interfaces.empty());
  CHECK(unlabelled->spec.devices.empty());

  eventually([&] { return env.deviceClassExists(kCx6Class); }, 30s, [&] { return op->logs(); });
  CHECK(env.deviceClassExists("sriovnetwork.k8snetworkplumbingwg.io"));
  eventually(
      [&] {
        auto s = env.policyStatus(api::resources::kSriovNetworkNodePolicies, "cx6-vfs");
        auto ready = s ? api::findCondition(s->conditions, "Ready") : nullptr;
        return ready && ready->status == "True" && s->matched_devices == 8 && s->matched_nodes == 1;
      },
      30s,
      [&] {
        auto s = env.policyStatus(api::resources::kSriovNetworkNodePolicies, "cx6-vfs");
        return s ? conditionSummary(*s) : "no status";
      });

  SECTION("metrics count nodes and VFs per resource") {
    std::string text;
    eventually(
        [&] {
          text = op->metrics();
          return testing::sampleValue(text,
                                      "sriov_dra_vfs{resource=\"cx6_vfs\",state=\"desired\"}") == 8;
        },
        30s, [&] { return text; });
    CHECK(testing::sampleValue(text, "sriov_dra_nodes") == 2);
    CHECK(testing::sampleValue(text, "sriov_dra_policy_conflicts") == 0);
    CHECK(testing::sampleValue(text,
                               "controller_runtime_reconcile_total{controller=\"sriovnodestate\","
                               "result=\"success\"}") > 0);
    CHECK(testing::sampleValue(
              text, "workqueue_depth{controller=\"sriovnodestate\",name=\"sriovnodestate\"}") >= 0);
  }
  SECTION("removing the node label empties that node's spec; what others put in the state stays") {
    REQUIRE(env.admin()
                .patch(api::resources::kSriovNodeStates, env.ns(), labelled,
                       kube::PatchType::kMerge,
                       R"({"metadata":{"labels":{"team":"net"},"annotations":{"note":"kept"}}})")
                .ok());
    env.setNodeLabel(labelled, "dra-sriov-cx6", std::nullopt);
    eventually(
        [&] {
          auto s = env.nodeState(labelled);
          return s && s->spec.interfaces.empty() && s->spec.devices.empty();
        },
        30s, [&] { return describeState(env, labelled) + "\n" + op->logs(); });
    auto s = *env.nodeState(labelled);
    CHECK(s.metadata.labels.at("team") == "net");
    CHECK(s.metadata.annotations.at("note") == "kept");
    CHECK(s.metadata.labels.at("app.kubernetes.io/managed-by") == "sriov-dra-operator");
    CHECK(s.status.interfaces.size() == 8);  // the agent's report
  }
  SECTION("a deleted node loses its SriovNodeState") {
    REQUIRE(env.admin().remove(kube::resources::kNodes, "", labelled).isOk());
    eventually([&] { return !env.nodeState(labelled).has_value(); }, 30s,
               [&] { return describeState(env, labelled) + "\n" + op->logs(); });
    CHECK(env.nodeState(other).has_value());
  }
  SECTION("a node the agent no longer runs on (--agent-node-selector) loses its SriovNodeState") {
    env.setNodeLabel(labelled, "sriov-dra-test", std::nullopt);
    eventually([&] { return !env.nodeState(labelled).has_value(); }, 30s,
               [&] { return describeState(env, labelled) + "\n" + op->logs(); });
    CHECK(env.nodeState(other).has_value());
  }
  SECTION("deleting the policies removes the resource's DeviceClass") {
    REQUIRE(
        env.admin().remove(api::resources::kSriovNetworkNodePolicies, env.ns(), "cx6-vfs").isOk());
    REQUIRE(
        env.admin().remove(api::resources::kDeviceAttributes, env.ns(), "cx6-vfs-attrs").isOk());
    eventually([&] { return !env.deviceClassExists(kCx6Class); }, 30s, [&] { return op->logs(); });
    CHECK(env.deviceClassExists("sriovnetwork.k8snetworkplumbingwg.io"));
  }
  CHECK(op->logs().find("Forbidden") == std::string::npos);
}

TEST_CASE("a node policy alone configures VFs and advertises none; a resource policy advertises",
          "[operator][integration]") {
  // The SR-IOV DRA driver's rule: "Without a matching SriovResourcePolicy, ResourceSlices stay
  // empty." (--advertise-node-policy-vfs restores advertising the VF groups.)
  OperatorEnv env("optin");
  auto op = env.startOperator();
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  env.applyFixture("reference/sriovnetworknodepolicy-cx6-vfs.yaml");
  env.reportStatus(node, testing::fixture::a100Status(1));
  eventually(
      [&] {
        auto s = env.nodeState(node);
        auto st = env.policyStatus(api::resources::kSriovNetworkNodePolicies, "cx6-vfs");
        return s && s->spec.interfaces.size() == 8 && st && st->matched_nodes == 1;
      },
      30s, [&] { return describeState(env, node) + "\n" + op->logs(); });
  CHECK(env.nodeState(node)->spec.devices.empty());

  env.applyFixture("reference/sriovresourcepolicy-cx6-advertise-vfs.yaml");
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return s && s->spec.devices.size() == 8;
      },
      30s, [&] { return describeState(env, node) + "\n" + op->logs(); });
  auto advertised = env.nodeState(node);
  REQUIRE(advertised);
  for (const auto& d : advertised->spec.devices) {
    INFO(d.name);
    auto name = d.attributes.find(std::string(api::attr::kResourceName));
    REQUIRE(name != d.attributes.end());
    CHECK(name->second.string_value == "cx6_vfs");
  }
}

TEST_CASE("the policy that loses an overlapping range says which policy won and why",
          "[operator][integration]") {
  OperatorEnv env("overlap");
  auto op = env.startOperator();
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  env.applyFixture("policies/overlapping.yaml");
  env.reportStatus(node, testing::fixture::a100Status(8));
  eventually(
      [&] {
        auto s = env.policyStatus(api::resources::kSriovNetworkNodePolicies, "low");
        return s && s->conflicts.size() == 1;
      },
      30s, [&] { return op->logs(); });
  auto status = *env.policyStatus(api::resources::kSriovNetworkNodePolicies, "low");
  CHECK(status.conflicts[0].node == node);
  CHECK(status.conflicts[0].winner == "high");
  CHECK(status.conflicts[0].target == "ibp14s0 (0000:0e:00.0)");
  CHECK_THAT(status.conflicts[0].reason,
             Catch::Contains("overlaps") && Catch::Contains("higher priority (10 beats 50"));
  const auto* degraded = api::findCondition(status.conditions, "Degraded");
  REQUIRE(degraded != nullptr);
  CHECK(degraded->status == "True");
  CHECK(degraded->reason == "ConflictLost");
  CHECK_THAT(degraded->message, Catch::Contains("to \"high\""));
  eventually([&] { return env.findEvent("ConflictLost", "Warning", "low").has_value(); }, 30s,
             [] { return "no ConflictLost event on policy low"; });
  auto winner = *env.policyStatus(api::resources::kSriovNetworkNodePolicies, "high");
  CHECK(api::findCondition(winner.conditions, "Degraded")->status == "False");
}

TEST_CASE("changes that recreate VFs roll out at most --max-unavailable nodes at a time",
          "[operator][rollout][integration]") {
  OperatorEnv env("rollout");
  auto op = env.startOperator();
  std::string n1 = env.createNode("a", {{"dra-sriov-cx6", "true"}});
  std::string n2 = env.createNode("b", {{"dra-sriov-cx6", "true"}});
  applyReference(env);
  auto numVfs = [&](const std::string& node) -> int64_t {
    auto s = env.nodeState(node);
    return s && !s->spec.interfaces.empty() ? s->spec.interfaces[0].num_vfs : -1;
  };
  for (const auto& n : {n1, n2}) env.reportStatus(n, testing::fixture::a100Status(1));
  eventually([&] { return numVfs(n1) == 1 && numVfs(n2) == 1; }, 30s, [&] { return op->logs(); });
  // Both agents have applied the current spec.
  for (const auto& n : {n1, n2}) env.reportStatus(n, testing::fixture::a100Status(1));

  REQUIRE(env.admin()
              .patch(api::resources::kSriovNetworkNodePolicies, env.ns(), "cx6-vfs",
                     kube::PatchType::kMerge, R"({"spec":{"numVfs":4}})")
              .ok());
  eventually([&] { return numVfs(n1) == 4 || numVfs(n2) == 4; }, 30s, [&] { return op->logs(); });
  std::string first = numVfs(n1) == 4 ? n1 : n2;
  std::string second = first == n1 ? n2 : n1;
  auto waiting = [&] { return env.findEvent("WaitingForRollout", "Normal", second).has_value(); };
  eventually(waiting, 30s, [&] {
    return "numVfs " + first + "=" + std::to_string(numVfs(first)) + " " + second + "=" +
           std::to_string(numVfs(second));
  });
  CHECK(numVfs(second) == 1);
  auto first_state = *env.nodeState(first);
  CHECK(first_state.metadata.annotations.at(
            "sriovnetwork.k8snetworkplumbingwg.io/disruptive-change") == "true");

  // The first node's agent finishes: the second node may go.
  env.reportStatus(first, testing::fixture::a100Status(4));
  eventually([&] { return numVfs(second) == 4; }, 30s, [&] { return op->logs(); });
}

TEST_CASE("a SriovNodeState over the storage limit is explained in a Warning Event",
          "[operator][integration]") {
  // etcd with a 96 KiB request limit: 512 VFs fit in the status the agent reports, but not
  // together with the 512 devices of the spec (about 90 KB more).
  auto options = OperatorEnv::controlPlaneOptions();
  options.extra_etcd_args = {"--max-request-bytes=98304"};
  auto cp = testing::ControlPlane::start(options);
  OperatorEnv env("toolarge", *cp);
  // Its Lease renewals are its clock; every VF of the node policy is advertised (spec size).
  auto op =
      env.startOperator({.leader_elect = true, .extra_args = {"--advertise-node-policy-vfs"}});
  std::string big = env.createNode("big", {{"nic", "cx6"}});
  std::string small = env.createNode("small", {{"nic", "cx6"}});
  env.applyObject(testing::yamlObject(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodePolicy\n"
      "metadata: {name: cx6}\nspec: {resourceName: cx6, numVfs: 128, nodeSelector: {nic: cx6}, "
      "nicSelector: {vendor: \"15b3\"}}\n"));
  env.reportStatus(big, testing::fixture::ethernetStatus(4, 128));
  env.reportStatus(small, testing::fixture::ethernetStatus(1, 4));

  std::optional<std::string> message;
  eventually(
      [&] {
        return (message = env.findEvent("SriovNodeStateTooLarge", "Warning", big)).has_value();
      },
      30s, [&] { return op->logs(); });
  CHECK_THAT(*message, Catch::Contains("512 VF(s)") && Catch::Contains("lower numVfs") &&
                           Catch::Contains("--max-request-bytes"));
  // The other node is served, and the operator does not hammer the API server with the object.
  eventually(
      [&] {
        auto s = env.nodeState(small);
        return s && s->spec.devices.size() == 4;
      },
      30s, [&] { return describeState(env, small) + "\n" + op->logs(); });
  CHECK(env.nodeState(big)->spec.devices.empty());
  // Every render the policy and the status reports asked for has run (policy_settle is 500 ms).
  testing::awaitLeaseRenewals(*cp, "operator", 1);
  auto writes = [&] {
    int n = 0;
    for (const auto& e : cp->auditEvents()) {
      n += e.user == "operator" && e.isWrite() && e.resource == "sriovnodestates" && e.name == big;
    }
    return n;
  };
  int before = writes();
  testing::awaitLeaseRenewals(*cp, "operator", 3);  // about 6 s of the operator's time
  CHECK(writes() - before <= 1);

  // An agent whose discovered topology alone does not fit says so too (16 PFs x 64 VFs).
  std::string wide = env.createNode("wide", {{"nic", "e810"}});
  env.applyObject(testing::yamlObject(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodePolicy\n"
      "metadata: {name: e810}\nspec: {resourceName: e810, numVfs: 64, nodeSelector: {nic: e810}, "
      "nicSelector: {vendor: \"8086\"}}\n"));
  auto agent = env.startAgent(wide, "many-pfs");
  eventually(
      [&] { return (message = env.findEvent("StatusTooLarge", "Warning", wide)).has_value(); }, 60s,
      [&] { return agent->logs(); });
  CHECK_THAT(*message, Catch::Contains("discovered topology") && Catch::Contains("lower numVfs"));
}

TEST_CASE("with --agent-daemonset the operator deploys the node agent and keeps it deployed",
          "[operator][integration]") {
  OperatorEnv env("agentds");
  env.cp().grantOperatorDaemonSetRbac("operator", env.ns());
  auto op = env.startOperator(
      {.extra_args = {"--agent-daemonset=" + testing::sourceDir() + "/config/agent/daemonset.yaml",
                      "--agent-image=registry.example/sriov-dra-agent:test"}});
  auto image = [&]() -> std::string {
    auto ds = env.admin().get(kDaemonSets, env.ns(), "sriov-dra-agent");
    if (!ds.ok()) return "";
    const json::Value* containers = json::at(*ds, {"spec", "template", "spec", "containers"});
    return containers && containers->IsArray() && !containers->Empty()
               ? std::string(json::stringOr((*containers)[0], "image"))
               : "";
  };
  eventually([&] { return image() == "registry.example/sriov-dra-agent:test"; }, 30s,
             [&] { return op->logs(); });
  // Changed or deleted by someone else: put back.
  REQUIRE(env.admin()
              .patch(kDaemonSets, env.ns(), "sriov-dra-agent", kube::PatchType::kJson,
                     R"([{"op":"replace","path":"/spec/template/spec/containers/0/image",)"
                     R"("value":"someone/else:1"}])")
              .ok());
  eventually([&] { return image() == "registry.example/sriov-dra-agent:test"; }, 30s,
             [&] { return op->logs(); });
  REQUIRE(env.admin().remove(kDaemonSets, env.ns(), "sriov-dra-agent").isOk());
  eventually([&] { return image() == "registry.example/sriov-dra-agent:test"; }, 30s,
             [&] { return op->logs(); });
  // The init container that installs the CNI plugins runs the same image.
  auto ds = env.admin().get(kDaemonSets, env.ns(), "sriov-dra-agent");
  REQUIRE(ds.ok());
  const json::Value* inits = json::at(*ds, {"spec", "template", "spec", "initContainers"});
  REQUIRE((inits != nullptr && inits->IsArray() && inits->Size() == 1));
  CHECK(json::stringOr((*inits)[0], "image") == "registry.example/sriov-dra-agent:test");

  // That DaemonSet and no other: the operator's user may not change another DaemonSet of its
  // namespace, apply one of another name, or remove its own.
  auto as_operator = env.cp().client("operator");
  auto other = [](const std::string& image) {
    return testing::yamlObject(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: not-the-agent}\nspec: "
        "{selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: "
        "{containers: [{name: c, image: " +
        image + "}]}}}\n");
  };
  auto apply = [&](kube::Client& c) {
    return c.apply(kDaemonSets, env.ns(), other("x"),
                   {.field_manager = "sriov-dra-operator", .force = true});
  };
  CHECK(apply(*as_operator).status().code() == Code::kForbidden);
  REQUIRE(apply(env.admin()).ok());
  CHECK(apply(*as_operator).status().code() == Code::kForbidden);
  CHECK(as_operator
            ->patch(kDaemonSets, env.ns(), "not-the-agent", kube::PatchType::kJson,
                    R"([{"op":"replace","path":"/spec/template/spec/containers/0/image",)"
                    R"("value":"attacker/image:1"}])")
            .status()
            .code() == Code::kForbidden);
  CHECK(as_operator->remove(kDaemonSets, env.ns(), "sriov-dra-agent").code() == Code::kForbidden);
}

TEST_CASE("the operator leaves out the CNI plugins' installer, or moves it, as its flags say",
          "[operator][integration]") {
  OperatorEnv env("agentds-cni");
  env.cp().grantOperatorDaemonSetRbac("operator", env.ns());
  auto op = env.startOperator(
      {.extra_args = {"--agent-daemonset=" + testing::sourceDir() + "/config/agent/daemonset.yaml",
                      "--agent-install-cni-plugins=false",
                      "--agent-cni-bin-dir=/usr/libexec/cni"}});
  Result<json::Document> ds = Status(Code::kNotFound, "not yet");
  eventually([&] { return (ds = env.admin().get(kDaemonSets, env.ns(), "sriov-dra-agent")).ok(); },
             30s, [&] { return op->logs(); });
  CHECK(json::at(*ds, {"spec", "template", "spec", "initContainers"}) == nullptr);
  CHECK_THAT(testing::canonical(*json::at(*ds, {"spec", "template", "spec", "volumes"})),
             Catch::Contains("{hostPath:{path:\"/usr/libexec/cni\",type:\"DirectoryOrCreate\"},"
                             "name:\"cni-bin\"}"));
}

TEST_CASE("SIGTERM while the caches cannot sync ends the operator at once",
          "[operator][integration]") {
  OperatorEnv env("sync-stop");
  // A user without any RBAC: every list is refused, so the caches never sync.
  auto op = testing::OperatorProcess::start(
      env.cp(), {.user = "restricted", .namespace_ = env.ns(), .name = "sync-stop"});
  eventually([&] { return op->logs().find("forbidden") != std::string::npos; }, 30s,
             [&] { return op->logs(); });
  REQUIRE(op->running());
  ::kill(op->pid(), SIGTERM);
  eventually([&] { return !op->running(); }, 5s,
             [&] { return "still waiting for its caches after SIGTERM:\n" + op->logs(); });
  CHECK(op->exitCode() == 0);
}
