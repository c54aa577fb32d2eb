// The upstream operator's configuration kinds on the real API server, under the operator's RBAC:
// SriovOperatorConfig narrows the agent's nodes, sets the log level and turns drains on;
// SriovNetworkPoolConfig sets how many nodes of a pool are reconfigured at once; a drain cordons
// the node, evicts through the Eviction API (a PodDisruptionBudget holds it, never forced) and
// uncordons once the agent is done; a pool's rdmaMode reaches the kernel through a reboot.
#include "api/operator_config.h"

#include <filesystem>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "base/files.h"
#include "base/time.h"
#include "support/dra_objects.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/operator_env.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::OperatorEnv;
using sriovdra::testing::yamlObject;

namespace {

const kube::ResourceType kPodDisruptionBudgets{"policy", "v1", "poddisruptionbudgets",
                                               "PodDisruptionBudget", true};

void applyOperatorConfig(OperatorEnv& env, const std::string& spec) {
  env.applyObject(
      yamlObject("apiVersion: sriovnetwork.openshift.io/v1\n"
                 "kind: SriovOperatorConfig\nmetadata: {name: default}\nspec: " +
                 spec + "\n"));
}

std::optional<api::SriovOperatorConfig> operatorConfig(OperatorEnv& env) {
  auto got = env.admin().get(api::resources::kSriovOperatorConfigs, env.ns(), "default");
  if (!got.ok()) return std::nullopt;
  auto c = api::SriovOperatorConfig::decode(*got);
  return c.ok() ? std::optional(std::move(*c)) : std::nullopt;
}

int64_t numVfs(const OperatorEnv& env, const std::string& node) {
  auto s = env.nodeState(node);
  return s && !s->spec.interfaces.empty() ? s->spec.interfaces[0].num_vfs : -1;
}

bool unschedulable(const OperatorEnv& env, const std::string& node) {
  auto got = env.admin().get(kube::resources::kNodes, "", node);
  REQUIRE(got.ok());
  auto n = api::Node::decode(*got);
  REQUIRE(n.ok());
  return n->unschedulable;
}

// Nodes of the reference cluster in zones a, b, ..., configured with one VF per PF, their
// agents done.
std::vector<std::string> configuredNodes(OperatorEnv& env, const testing::OperatorProcess& op,
                                         int count) {
  std::vector<std::string> nodes;
  for (int i = 0; i < count; ++i) {
    std::string zone(1, static_cast<char>('a' + i));
    nodes.push_back(env.createNode(zone, {{"dra-sriov-cx6", "true"}, {"zone", zone}}));
  }
  env.applyReferencePolicies();
  for (const auto& n : nodes) env.reportStatus(n, testing::fixture::a100Status(1));
  for (const auto& n : nodes) {
    eventually([&] { return numVfs(env, n) == 1; }, 30s, [&] { return op.logs(); });
    env.reportStatus(n, testing::fixture::a100Status(1));
  }
  return nodes;
}

// A pod on `node`, labelled app=<app>, that the API server counts as running and ready (there is
// no kubelet: the test writes its status), so that PodDisruptionBudgets selecting it protect it.
std::string runningPod(OperatorEnv& env, const std::string& name, const std::string& node,
                       const std::string& app = "rdma") {
  std::string uid =
      testing::createPod(env.admin(), env.ns(), name, node, R"({"app":")" + app + "\"}");
  REQUIRE(env.admin()
              .patch(kube::resources::kPods, env.ns(), name, kube::PatchType::kMerge,
                     R"({"status":{"phase":"Running","conditions":[{"type":"Ready",)"
                     R"("status":"True"}]}})",
                     {}, "status")
              .ok());
  return uid;
}

// The running pod "rdma-worker" on `node`, holding the VF 0000:0e:00.1 there through its
// allocated claim "rdma-worker-vf".
void podHoldingVf(OperatorEnv& env, const std::string& node) {
  std::string pod_uid = runningPod(env, "rdma-worker", node);
  testing::createAllocatedClaim(env.admin(),
                                {.ns = env.ns(),
                                 .name = "rdma-worker-vf",
                                 .node = node,
                                 .results = {{"vf", std::string(api::kDriverName), "0000-0e-00-1"}},
                                 .pod_name = "rdma-worker",
                                 .pod_uid = pod_uid});
}

std::string drainMark(const OperatorEnv& env, const std::string& node,
                      const char* key = "sriovnetwork.k8snetworkplumbingwg.io/drain") {
  auto s = env.nodeState(node);
  return s ? s->metadata.annotation(key) : "";
}

std::string drainStarted(const OperatorEnv& env, const std::string& node) {
  return drainMark(env, node, "sriovnetwork.k8snetworkplumbingwg.io/drain-started");
}

// What a failed wait in a drain test shows: each node's VFs, cordon and drain mark, and the end of
// the operator's log.
std::string drainState(const OperatorEnv& env, const std::vector<std::string>& nodes,
                       const testing::OperatorProcess& op) {
  std::string out;
  for (const auto& n : nodes) {
    out += n + ": numVfs " + std::to_string(numVfs(env, n)) +
           (unschedulable(env, n) ? ", cordoned" : "") + ", drain mark \"" + drainMark(env, n) +
           "\", last Reconfiguring Event: " +
           env.findEvent("Reconfiguring", "Normal", n).value_or("none") + "\n";
  }
  std::string logs = op.logs();
  return out + logs.substr(logs.size() > 6000 ? logs.size() - 6000 : 0);
}

// The condition `type` of SriovOperatorConfig "default" once it has `status` and `reason`.
api::Condition waitForConfigCondition(OperatorEnv& env, const char* type, const char* status,
                                      const char* reason, const testing::OperatorProcess& op) {
  std::optional<api::Condition> got;
  eventually(
      [&] {
        auto c = operatorConfig(env);
        const auto* found = c ? api::findCondition(c->status.conditions, type) : nullptr;
        if (found != nullptr) got = *found;
        return found != nullptr && found->status == status && found->reason == reason;
      },
      60s, [&] { return op.logs(); });
  return *got;
}

void setNumVfs(OperatorEnv& env, int n) {
  REQUIRE(env.admin()
              .patch(api::resources::kSriovNetworkNodePolicies, env.ns(), "cx6-vfs",
                     kube::PatchType::kMerge, R"({"spec":{"numVfs":)" + std::to_string(n) + "}}")
              .ok());
}

}  // namespace

TEST_CASE("SriovOperatorConfig narrows the agent's nodes and sets the log level; Ready says so",
          "[operator][config][integration]") {
  OperatorEnv env("opconfig");
  auto op = env.startOperator();
  auto nodes = configuredNodes(env, *op, 2);
  const auto &a = nodes[0], &b = nodes[1];

  applyOperatorConfig(env,
                      "{configDaemonNodeSelector: {zone: a}, logLevel: 2, "
                      "enableOperatorWebhook: true, disableDrain: true}");
  eventually([&] { return !env.nodeState(b).has_value(); }, 30s, [&] { return op->logs(); });
  CHECK(env.nodeState(a).has_value());
  eventually(
      [&] {
        auto c = operatorConfig(env);
        auto* ready = c ? api::findCondition(c->status.conditions, "Ready") : nullptr;
        return ready != nullptr && ready->status == "True";
      },
      30s, [&] { return op->logs(); });
  const auto* ready = api::findCondition(operatorConfig(env)->status.conditions, "Ready");
  CHECK_THAT(ready->message, Catch::Contains("zone=a") && Catch::Contains("log level 2") &&
                                 Catch::Contains("wait until the pods using them are gone"));
  CHECK_THAT(op->logs(), Catch::Contains("log verbosity 2 (SriovOperatorConfig logLevel)"));
  // The shipped admission policy is installed: the operator trusts agents' reports.
  waitForConfigCondition(env, "AgentAdmissionPolicy", "True", "Verified", *op);

  // Deleted: the flags are in effect again, node b comes back.
  REQUIRE(env.admin().remove(api::resources::kSriovOperatorConfigs, env.ns(), "default").isOk());
  eventually([&] { return env.nodeState(b).has_value(); }, 30s, [&] { return op->logs(); });
  eventually([&] { return op->logs().find(" (--v)") != std::string::npos; }, 10s,
             [&] { return op->logs(); });
}

TEST_CASE("a SriovNetworkPoolConfig's maxUnavailable lets its nodes be reconfigured together",
          "[operator][rollout][config][integration]") {
  OperatorEnv env("pools");
  auto op = env.startOperator();
  auto nodes = configuredNodes(env, *op, 2);
  const auto &a = nodes[0], &b = nodes[1];
  env.applyObject(yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkPoolConfig
metadata: {name: cx6-nodes}
spec:
  nodeSelector: {matchLabels: {dra-sriov-cx6: "true"}}
  maxUnavailable: 100%
)"));
  setNumVfs(env, 4);
  // Without the pool, --max-unavailable 1 would hold one of them back.
  eventually([&] { return numVfs(env, a) == 4 && numVfs(env, b) == 4; }, 30s,
             [&] { return op->logs(); });
  CHECK_FALSE(env.findEvent("WaitingForRollout", "Normal", a).has_value());
  CHECK_FALSE(env.findEvent("WaitingForRollout", "Normal", b).has_value());
  for (const auto& n : {a, b}) env.reportStatus(n, testing::fixture::a100Status(4));

  // A second pool that also selects node a: a is not reconfigured, and says why; b (in one pool
  // whose 50% of 2 nodes is 1) goes.
  env.applyObject(yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkPoolConfig
metadata: {name: zone-a}
spec:
  nodeSelector: {matchLabels: {zone: a}}
  maxUnavailable: 1
)"));
  REQUIRE(env.admin()
              .patch(api::resources::kSriovNetworkPoolConfigs, env.ns(), "cx6-nodes",
                     kube::PatchType::kMerge, R"({"spec":{"maxUnavailable":"50%"}})")
              .ok());
  setNumVfs(env, 2);
  eventually([&] { return env.findEvent("InSeveralPools", "Warning", a).has_value(); }, 30s,
             [&] { return op->logs(); });
  CHECK_THAT(*env.findEvent("InSeveralPools", "Warning", a), Catch::Contains("cx6-nodes, zone-a"));
  eventually([&] { return numVfs(env, b) == 2; }, 30s, [&] { return op->logs(); });
  CHECK(numVfs(env, a) == 4);
}

TEST_CASE(
    "a drain cordons the node, evicts the pods using its VFs as their budgets allow, reports "
    "when it takes too long, and uncordons it once the agent is done",
    "[operator][drain][config][integration]") {
  OperatorEnv env("drain");
  auto op = env.startOperator({.extra_args = {"--drain-timeout=2"}});
  auto nodes = configuredNodes(env, *op, 2);
  const auto &a = nodes[0], &b = nodes[1];
  applyOperatorConfig(env, "{disableDrain: false}");

  // A pod on node a holds one of its VFs; its budget allows no disruption.
  podHoldingVf(env, a);
  // A claim of node a still reserved for a pod that went, whose name a new pod on node b has
  // taken since: the drain of node a must not evict that one (issue 52 L2).
  std::string bystander_uid = runningPod(env, "bystander", b, "web");
  testing::createAllocatedClaim(env.admin(),
                                {.ns = env.ns(),
                                 .name = "stale-vf",
                                 .node = a,
                                 .results = {{"vf", std::string(api::kDriverName), "0000-0e-00-2"}},
                                 .pod_name = "bystander",
                                 .pod_uid = "5b0e6f1c-0000-4000-8000-000000000052"});
  env.applyObject(yamlObject(R"(
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: rdma}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: rdma}}
)"));
  // The disruption controller computes the budget's allowance; until then evictions are refused
  // anyway (429), which is what this test wants first.

  setNumVfs(env, 4);
  eventually([&] { return numVfs(env, a) == 4 || numVfs(env, b) == 4; }, 30s,
             [&] { return drainState(env, nodes, *op); });
  if (numVfs(env, a) != 4) {
    // b went first (one node at a time): it has no pods, so its drain only cordons it.
    eventually([&] { return unschedulable(env, b); }, 30s,
               [&] { return drainState(env, nodes, *op); });
    env.reportStatus(b, testing::fixture::a100Status(4));
    eventually([&] { return !unschedulable(env, b); }, 30s,
               [&] { return drainState(env, nodes, *op); });
    eventually([&] { return numVfs(env, a) == 4; }, 30s,
               [&] { return drainState(env, nodes, *op); });
  }
  eventually([&] { return unschedulable(env, a); }, 30s,
             [&] { return drainState(env, nodes, *op); });
  CHECK(drainMark(env, a) == "cordoned");
  eventually([&] { return env.findEvent("DrainBlocked", "Warning", a).has_value(); }, 30s,
             [&] { return drainState(env, nodes, *op); });
  CHECK_THAT(*env.findEvent("DrainBlocked", "Warning", a),
             Catch::Contains(env.ns() + "/rdma-worker") && Catch::Contains("disruption budget"));
  CHECK(parseRfc3339(drainStarted(env, a)).ok());
  // Held past --drain-timeout: reported with the pod and the ways out; the drain goes on.
  eventually([&] { return env.findEvent("DrainTimedOut", "Warning", a).has_value(); }, 30s,
             [&] { return drainState(env, nodes, *op); });
  CHECK_THAT(*env.findEvent("DrainTimedOut", "Warning", a),
             Catch::Contains(env.ns() + "/rdma-worker") && Catch::Contains("Ways out") &&
                 Catch::Contains("never forced"));
  CHECK(drainMark(env, a) == "cordoned");
  auto still = env.admin().get(kube::resources::kPods, env.ns(), "rdma-worker");
  REQUIRE(still.ok());
  CHECK(kube::ObjectMeta::decode(*still).deletion_timestamp.empty());
  // The eviction of "bystander" named the UID the claim was reserved for: refused, pod untouched.
  auto bystander = env.admin().get(kube::resources::kPods, env.ns(), "bystander");
  REQUIRE(bystander.ok());
  CHECK(kube::ObjectMeta::decode(*bystander).uid == bystander_uid);
  CHECK(kube::ObjectMeta::decode(*bystander).deletion_timestamp.empty());
  CHECK_THAT(op->logs(), Catch::Contains("pod " + env.ns() + "/bystander not evicted"));

  // The budget goes: the eviction deletes the pod gracefully (no kubelet here to finish it, so
  // the test does what the kubelet and the resourceclaim controller would).
  REQUIRE(env.admin().remove(kPodDisruptionBudgets, env.ns(), "rdma").isOk());
  eventually(
      [&] {
        auto p = env.admin().get(kube::resources::kPods, env.ns(), "rdma-worker");
        return p.ok() && !kube::ObjectMeta::decode(*p).deletion_timestamp.empty();
      },
      30s, [&] { return drainState(env, nodes, *op); });
  REQUIRE(env.admin()
              .remove(kube::resources::kPods, env.ns(), "rdma-worker", {.grace_period_seconds = 0})
              .isOk());
  testing::releaseClaim(env.admin(), env.ns(), "rdma-worker-vf");
  CHECK(unschedulable(env, a));  // until the agent has applied the change

  env.reportStatus(a, testing::fixture::a100Status(4));
  eventually([&] { return !unschedulable(env, a); }, 30s,
             [&] { return drainState(env, nodes, *op); });
  eventually([&] { return drainMark(env, a).empty(); }, 30s,
             [&] { return drainState(env, nodes, *op); });
  CHECK(drainStarted(env, a).empty());
  // The Event follows the mark's removal.
  eventually([&] { return env.findEvent("DrainComplete", "Normal", a).has_value(); }, 30s,
             [&] { return drainState(env, nodes, *op); });
}

TEST_CASE("without the agents' admission policy no node is drained on an agent's word",
          "[operator][drain][config][integration]") {
  // A control plane of its own: the test removes a cluster-wide binding.
  auto cp = testing::ControlPlane::start(OperatorEnv::controlPlaneOptions());
  OperatorEnv env("drain-policy", *cp);
  const kube::ResourceType bindings{"admissionregistration.k8s.io", "v1",
                                    "validatingadmissionpolicybindings",
                                    "ValidatingAdmissionPolicyBinding", false};
  // As an OLM install: the bundle cannot carry the policy; here its binding is missing.
  REQUIRE(env.admin().remove(bindings, "", "sriov-dra-agent-own-node").isOk());
  auto op = env.startOperator();
  auto nodes = configuredNodes(env, *op, 1);
  const auto& a = nodes[0];
  applyOperatorConfig(env, "{disableDrain: false}");
  setNumVfs(env, 4);
  eventually([&] { return env.findEvent("DrainRefused", "Warning", a).has_value(); }, 30s,
             [&] { return drainState(env, nodes, *op); });
  CHECK_THAT(*env.findEvent("DrainRefused", "Warning", a),
             Catch::Contains("the ValidatingAdmissionPolicyBinding sriov-dra-agent-own-node does "
                             "not exist") &&
                 Catch::Contains("agent_validating_admission_policy.yaml"));
  CHECK_FALSE(unschedulable(env, a));
  CHECK(drainMark(env, a).empty());
  // `kubectl describe sriovoperatorconfig default` says so too, and an Event.
  auto missing = waitForConfigCondition(env, "AgentAdmissionPolicy", "False", "Missing", *op);
  CHECK_THAT(missing.message,
             Catch::Contains("ValidatingAdmissionPolicyBinding sriov-dra-agent-own-node does not "
                             "exist") &&
                 Catch::Contains("no node is drained or rebooted"));
  eventually(
      [&] {
        return env.findEvent("AgentAdmissionPolicyMissing", "Warning", "default").has_value();
      },
      30s, [&] { return op->logs(); });

  // The binding comes back, but the policy was changed to admit everything: still refused.
  const kube::ResourceType policies{"admissionregistration.k8s.io", "v1",
                                    "validatingadmissionpolicies", "ValidatingAdmissionPolicy",
                                    false};
  REQUIRE(env.admin()
              .patch(policies, "", "sriov-dra-agent-own-node", kube::PatchType::kMerge,
                     R"({"spec":{"validations":[{"expression":"true"}]}})")
              .ok());
  REQUIRE(env.admin()
              .create(bindings, "",
                      testing::yamlObject(
                          "apiVersion: admissionregistration.k8s.io/v1\nkind: "
                          "ValidatingAdmissionPolicyBinding\nmetadata: {name: "
                          "sriov-dra-agent-own-node}\nspec: {policyName: sriov-dra-agent-own-node, "
                          "validationActions: [Deny]}\n"))
              .ok());
  eventually(
      [&] {
        // findEvent() gives the first DrainRefused Event (the binding's); this is another one.
        auto events = env.admin().list(kube::resources::kEvents, env.ns());
        if (!events.ok()) return false;
        for (const auto& e : (*events)["items"].GetArray()) {
          if (json::stringOr(e, "reason") == "DrainRefused" &&
              std::string_view(json::stringOr(e, "message"))
                      .find("is not the one this operator ships (its validations differ)") !=
                  std::string_view::npos) {
            return true;
          }
        }
        return false;
      },
      60s, [&] { return drainState(env, nodes, *op); });
  CHECK_FALSE(unschedulable(env, a));

  // The shipped policy is applied: the drain goes on.
  CHECK_THAT(waitForConfigCondition(env, "AgentAdmissionPolicy", "False", "Changed", *op).message,
             Catch::Contains("its validations differ"));
  cp->applyYamlFile(testing::sourceDir() + "/config/rbac/agent_validating_admission_policy.yaml");
  eventually([&] { return unschedulable(env, a); }, 60s,
             [&] { return drainState(env, nodes, *op); });
  waitForConfigCondition(env, "AgentAdmissionPolicy", "True", "Verified", *op);
  env.reportStatus(a, testing::fixture::a100Status(4));
  eventually([&] { return !unschedulable(env, a); }, 30s,
             [&] { return drainState(env, nodes, *op); });
}

TEST_CASE("a node cordoned by someone else stays cordoned after the drain",
          "[operator][drain][config][integration]") {
  OperatorEnv env("drain-cordoned");
  auto op = env.startOperator();
  auto nodes = configuredNodes(env, *op, 1);
  const auto& a = nodes[0];
  applyOperatorConfig(env, "{}");
  REQUIRE(env.admin()
              .patch(kube::resources::kNodes, "", a, kube::PatchType::kMerge,
                     R"({"spec":{"unschedulable":true}})")
              .ok());
  setNumVfs(env, 4);
  eventually([&] { return drainMark(env, a) == "draining"; }, 30s,
             [&] { return drainState(env, nodes, *op); });
  env.reportStatus(a, testing::fixture::a100Status(4));
  eventually([&] { return env.findEvent("DrainComplete", "Normal", a).has_value(); }, 30s,
             [&] { return drainState(env, nodes, *op); });
  CHECK_THAT(*env.findEvent("DrainComplete", "Normal", a), Catch::Contains("stays cordoned"));
  CHECK(unschedulable(env, a));
  CHECK(drainMark(env, a).empty());
}

namespace {

// What the agent reports while firmware changes wait for a reboot: InProgress, RebootRequired
// True for the state's generation.
void reportRebootRequired(OperatorEnv& env, const std::string& node) {
  auto status = testing::fixture::a100Status(1);
  status.sync_status = "InProgress";
  status.conditions.push_back({"RebootRequired", "True", "FirmwareChanged",
                               "NIC 0000:0e:00 (0000:0e:00.0): firmware NUM_OF_VFS 8 -> 16",
                               "2026-12-03T00:00:00Z", env.nodeState(node)->metadata.generation});
  env.reportStatus(node, status);
}

std::string rebootGrant(const OperatorEnv& env, const std::string& node) {
  auto s = env.nodeState(node);
  return s ? s->metadata.annotation(api::kRebootGrantAnnotation) : "";
}

// Evicted (deleted, gracefully: no kubelet finishes it here) or gone.
bool evicted(OperatorEnv& env, const std::string& name) {
  auto p = env.admin().get(kube::resources::kPods, env.ns(), name);
  return !p.ok() || !kube::ObjectMeta::decode(*p).deletion_timestamp.empty();
}

}  // namespace

TEST_CASE(
    "a reboot for firmware changes takes a rollout slot and a full drain before it is granted; "
    "the next node waits for the slot",
    "[operator][drain][reboot][config][integration]") {
  OperatorEnv env("reboot");
  auto op = env.startOperator();
  auto nodes = configuredNodes(env, *op, 2);
  applyOperatorConfig(env, "{disableDrain: false}");
  // Pods that use no VF: a VF change would leave them alone, a reboot would not.
  for (const auto& n : nodes) runningPod(env, "web-" + n, n);

  auto describe = [&] {
    std::string out;
    for (const auto& n : nodes) out += n + ": grant \"" + rebootGrant(env, n) + "\"\n";
    return out + drainState(env, nodes, *op);
  };
  for (const auto& n : nodes) reportRebootRequired(env, n);
  // --max-unavailable 1: one node drains; the other waits, saying why.
  std::string first, second;
  eventually(
      [&] {
        for (size_t i = 0; i < nodes.size(); ++i) {
          if (unschedulable(env, nodes[i])) {
            first = nodes[i];
            second = nodes[1 - i];
          }
        }
        return !first.empty();
      },
      30s, describe);
  eventually([&] { return env.findEvent("WaitingForRollout", "Normal", second).has_value(); }, 30s,
             describe);
  CHECK_THAT(*env.findEvent("WaitingForRollout", "Normal", second),
             Catch::StartsWith(
                 "the node must reboot for its firmware or RDMA mode changes; waiting because 1 "
                 "node(s)"));
  CHECK_FALSE(unschedulable(env, second));
  CHECK(drainMark(env, first) == "cordoned");

  // The full drain evicts the pod that uses no VF; the grant waits until the pod is gone.
  eventually([&] { return evicted(env, "web-" + first); }, 30s, describe);
  CHECK(rebootGrant(env, first).empty());
  REQUIRE(env.admin()
              .remove(kube::resources::kPods, env.ns(), "web-" + first, {.grace_period_seconds = 0})
              .isOk());
  const std::string generation = std::to_string(env.nodeState(first)->metadata.generation);
  eventually([&] { return rebootGrant(env, first) == generation; }, 30s, describe);
  // Events are written after the grant, in the background.
  eventually([&] { return env.findEvent("RebootGranted", "Normal", first).has_value(); }, 30s,
             describe);
  CHECK(rebootGrant(env, second).empty());
  CHECK_FALSE(evicted(env, "web-" + second));

  // After the reboot the agent reports the firmware in effect: the node is uncordoned, the grant
  // removed, and the second node gets the slot.
  auto done = testing::fixture::a100Status(1);
  done.conditions.push_back({"RebootRequired", "False", "FirmwareInEffect", "in effect",
                             "2026-12-03T00:10:00Z", std::stoll(generation)});
  env.reportStatus(first, done);
  eventually([&] { return !unschedulable(env, first) && rebootGrant(env, first).empty(); }, 30s,
             describe);
  eventually([&] { return unschedulable(env, second); }, 30s, describe);
  eventually([&] { return evicted(env, "web-" + second); }, 30s, describe);
  REQUIRE(
      env.admin()
          .remove(kube::resources::kPods, env.ns(), "web-" + second, {.grace_period_seconds = 0})
          .isOk());
  eventually([&] { return !rebootGrant(env, second).empty(); }, 30s, describe);
}

TEST_CASE("without drains, a reboot is granted once no pod uses the node's VFs",
          "[operator][drain][reboot][config][integration]") {
  OperatorEnv env("reboot-nodrain");
  auto op = env.startOperator();
  auto nodes = configuredNodes(env, *op, 1);
  const auto& a = nodes[0];
  podHoldingVf(env, a);
  reportRebootRequired(env, a);
  auto describe = [&] { return "grant \"" + rebootGrant(env, a) + "\"\n" + op->logs(); };
  eventually([&] { return env.findEvent("RebootWaiting", "Normal", a).has_value(); }, 30s,
             describe);
  CHECK_THAT(*env.findEvent("RebootWaiting", "Normal", a),
             Catch::Contains(env.ns() + "/rdma-worker"));
  CHECK(rebootGrant(env, a).empty());
  CHECK_FALSE(unschedulable(env, a));  // no drain: nothing is cordoned or evicted
  CHECK_FALSE(evicted(env, "rdma-worker"));

  testing::releaseClaim(env.admin(), env.ns(), "rdma-worker-vf");
  eventually([&] { return !rebootGrant(env, a).empty(); }, 30s, describe);
  eventually([&] { return env.findEvent("RebootGranted", "Normal", a).has_value(); }, 30s,
             describe);
  CHECK_THAT(*env.findEvent("RebootGranted", "Normal", a), Catch::Contains("drains are off"));
}

TEST_CASE(
    "a pool's rdmaMode: ib_core's option for the next boot, a granted reboot, and the kernel in "
    "that mode",
    "[operator][config][rdma][integration]") {
  OperatorEnv env("rdmamode");
  auto op = env.startOperator();
  std::string node = env.createNode("a100", {{"rdma", "isolated"}});
  auto agent =
      env.startAgent(node, "a100-reference", "", "", {"--reboot-command=systemctl,reboot"});
  auto describe = [&] { return env.kernelJournal(node) + agent->logs() + op->logs(); };
  const std::string modprobe =
      env.sysfsRoot(node) + "/etc/modprobe.d/" + "sriov_network_operator_modules_config.conf";
  // The kernel boots in Linux's default mode, and the node says so.
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return s && s->status.sync_status == "Succeeded" && s->status.rdma_mode == "shared";
      },
      60s, describe);
  CHECK_FALSE(std::filesystem::exists(modprobe));

  // Upstream's kernel argument, left on the node's command line, would undo the mode at boot:
  // the sync fails naming it, and nothing is drained or rebooted for nothing.
  const std::string cmdline = env.sysfsRoot(node) + "/proc/cmdline";
  REQUIRE(writeFileAtomic(cmdline, "root=/dev/sda1 ib_core.netns_mode=1 quiet\n").isOk());
  env.applyObject(yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkPoolConfig
metadata: {name: rdma-isolated}
spec:
  nodeSelector: {matchLabels: {rdma: isolated}}
  rdmaMode: exclusive
)"));
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return s && s->status.sync_status == "Failed" &&
               s->status.last_sync_error.find(
                   "the kernel command line sets ib_core "
                   "netns_mode=1") != std::string::npos;
      },
      60s, describe);
  CHECK(env.kernelJournal(node).find("reboot") == std::string::npos);
  CHECK(env.nodeState(node)->metadata.annotation(api::kRebootGrantAnnotation).empty());
  // Without it (the next pass, at the latest after the agent's resync period), the spec's mode
  // goes through: the agent keeps ib_core's option, asks for a reboot, the operator grants it
  // (no pod uses a VF; drains are off) and the agent reboots, once.
  REQUIRE(writeFileAtomic(cmdline, "root=/dev/sda1 quiet\n").isOk());
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return s && s->spec.rdma_mode == "exclusive" && s->status.rdma_mode == "exclusive" &&
               s->status.sync_status == "Succeeded" &&
               s->status.observed_generation == s->metadata.generation &&
               s->metadata.annotation(api::kRebootGrantAnnotation).empty();
      },
      90s, describe);
  auto text = readFile(modprobe);
  REQUIRE(text.ok());
  CHECK_THAT(*text, Catch::EndsWith("\noptions ib_core netns_mode=0\n"));
  auto journal = env.kernelJournal(node);
  CHECK(journal.find("reboot -> ok") != std::string::npos);
  CHECK(journal.find("reboot -> ok") == journal.rfind("reboot -> ok"));
  eventually([&] { return env.findEvent("Rebooting", "Normal", node).has_value(); }, 30s, describe);
  auto state = *env.nodeState(node);
  const api::Condition* reboot = api::findCondition(state.status.conditions, "RebootRequired");
  REQUIRE(reboot != nullptr);
  CHECK(reboot->status == "False");

  // The pool gone: the option goes with it; the kernel stays as it booted, and nothing reboots.
  REQUIRE(env.admin()
              .remove(api::resources::kSriovNetworkPoolConfigs, env.ns(), "rdma-isolated")
              .isOk());
  eventually([&] { return !std::filesystem::exists(modprobe); }, 60s, describe);
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return s && s->spec.rdma_mode.empty() && s->status.sync_status == "Succeeded" &&
               s->status.observed_generation == s->metadata.generation;
      },
      60s, describe);
  CHECK(env.nodeState(node)->status.rdma_mode == "exclusive");
  journal = env.kernelJournal(node);
  CHECK(journal.find("reboot -> ok") == journal.rfind("reboot -> ok"));
}
