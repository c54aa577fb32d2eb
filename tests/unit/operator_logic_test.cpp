// The operator's pure decisions: rollout, drain, policy status, admission reviews.
#include <algorithm>
#include <functional>

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "base/files.h"
#include "base/json.h"
#include "base/yaml.h"
#include "operator/admission.h"
#include "operator/agent_policy.h"
#include "operator/drain_reconciler.h"
#include "operator/node_state_reconciler.h"
#include "operator/policy_status.h"
#include "operator/rollout.h"
#include "operator/settle.h"
#include "support/control_plane.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;
using namespace sriovdra::testing::fixture;

TEST_CASE("only changes to PFs that already have VFs are disruptive", "[operator][rollout][unit]") {
  auto status = a100Status(1);
  status.interfaces[1].num_vfs = 0;  // ibp17s0 has no VFs yet
  api::Interface pf0{
      "0000:0e:00.0", "ibp14s0", 1,     0,
      "ib",           "",        false, {{"cx6_vfs", "netdevice", "0-0", "p", 0, true, ""}}};
  api::SriovNodeStateSpec current{{pf0}, {}};
  struct Row {
    std::string name;
    std::function<void(api::SriovNodeStateSpec&)> change;
    bool disruptive;
  };
  std::vector<Row> rows = {
      {"nothing", [](auto&) {}, false},
      {"more VFs on a PF with VFs", [](auto& s) { s.interfaces[0].num_vfs = 4; }, true},
      {"another resource on it", [](auto& s) { s.interfaces[0].vf_groups[0].resource_name = "x"; },
       true},
      {"a raised MTU", [](auto& s) { s.interfaces[0].mtu = 9000; }, false},
      {"the PF leaves the spec", [](auto& s) { s.interfaces.clear(); }, true},
      {"a new PF without VFs",
       [](auto& s) {
         s.interfaces.push_back({"0000:11:00.0", "ibp17s0", 4, 0, "ib", "", false, {}});
       },
       false},
      {"only advertised devices",
       [](auto& s) {
         s.devices.push_back({"d", "0000:0e:00.1", {}});
       },
       false},
      {"a PF whose VFs exist enters the spec with the same count",
       [](auto& s) {
         s.interfaces.push_back({"0000:52:00.0", "ibp82s0", 1, 0, "ib", "", false, {}});
       },
       false},
      {"a PF whose VFs exist enters the spec with another count",
       [](auto& s) {
         s.interfaces.push_back({"0000:52:00.0", "ibp82s0", 4, 0, "ib", "", false, {}});
       },
       true},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto desired = current;
    row.change(desired);
    CHECK(op::disruption(current, desired, status).has_value() == row.disruptive);
  }
}

TEST_CASE("a node is reconfiguring until the agent reports the latest generation",
          "[operator][rollout][unit]") {
  api::SriovNodeState s;
  s.metadata.generation = 3;
  s.status.observed_generation = 2;
  s.status.sync_status = "Succeeded";
  CHECK(op::isReconfiguring(s));
  s.status.observed_generation = 3;
  CHECK_FALSE(op::isReconfiguring(s));
  s.status.sync_status = "InProgress";
  CHECK(op::isReconfiguring(s));
}

TEST_CASE("a reboot is requested while the agent's RebootRequired is True for the latest spec",
          "[operator][rollout][unit]") {
  api::SriovNodeState s;
  s.metadata.generation = 3;
  CHECK_FALSE(op::rebootRequested(s));
  s.status.conditions.push_back({"RebootRequired", "True", "FirmwareChanged", "", "", 3});
  CHECK(op::rebootRequested(s));
  s.metadata.generation = 4;  // a new spec: the agent has not said yet
  CHECK_FALSE(op::rebootRequested(s));
  s.status.conditions[0] = {"RebootRequired", "False", "FirmwareInEffect", "", "", 4};
  CHECK_FALSE(op::rebootRequested(s));
}

TEST_CASE("policy status conditions say why", "[operator][status][unit]") {
  op::PolicyFacts f{{policy::kNodePolicyKind, "p"}, 4};
  const std::string t0 = "2026-11-30T10:00:00Z", t1 = "2026-11-30T11:00:00Z";
  auto cond = [](const api::PolicyStatus& s, const char* type) {
    return *api::findCondition(s.conditions, type);
  };
  SECTION("no node") {
    auto s = op::computePolicyStatus(f, {}, t0);
    CHECK(cond(s, "Ready").reason == "NoMatchingNodes");
    CHECK(cond(s, "Degraded").status == "False");
    CHECK(s.observed_generation == 4);
  }
  SECTION("nodes but no PF") {
    f.matched_nodes = 2;
    auto s = op::computePolicyStatus(f, {}, t0);
    CHECK(cond(s, "Ready").reason == "NoMatchingDevices");
    CHECK(cond(s, "Ready").message ==
          "selects 2 nodes, but no PF on them matches spec.nicSelector (or numVfs is 0)");
  }
  SECTION("applied, then a conflict lost, keeping Ready's transition time") {
    f.matched_nodes = 1;
    f.matched_devices = 8;
    auto s = op::computePolicyStatus(f, {}, t0);
    CHECK(cond(s, "Ready").status == "True");
    CHECK(cond(s, "Ready").message == "configures 8 VFs on 1 node");
    f.conflicts = {{"n1", "ibp14s0 (0000:0e:00.0)", "high", "overlap"}};
    auto s2 = op::computePolicyStatus(f, s, t1);
    CHECK(cond(s2, "Degraded").status == "True");
    CHECK(cond(s2, "Degraded").reason == "ConflictLost");
    CHECK(cond(s2, "Degraded").message ==
          "lost 1 conflict on 1 node to \"high\"; see status.conflicts");
    CHECK(cond(s2, "Degraded").last_transition_time == t1);
    CHECK(cond(s2, "Ready").last_transition_time == t0);
    CHECK(op::computePolicyStatus(f, s2, t1) == s2);  // stable: nothing to write again
  }
  SECTION("invalid") {
    f.errors = {"spec.numVfs must not be negative"};
    auto s = op::computePolicyStatus(f, {}, t0);
    CHECK(cond(s, "Degraded").reason == "InvalidSpec");
    CHECK(cond(s, "Degraded").message == "spec.numVfs must not be negative");
    CHECK(cond(s, "Ready").status == "False");
  }
  SECTION("status keeps at most 20 conflicts") {
    f.matched_nodes = 30;
    f.matched_devices = 1;
    for (int i = 0; i < 30; ++i) f.conflicts.push_back({"n" + std::to_string(i), "pf", "w", "r"});
    auto s = op::computePolicyStatus(f, {}, t0);
    CHECK(s.conflicts.size() == op::kMaxStatusConflicts);
    CHECK_THAT(cond(s, "Degraded").message, Catch::StartsWith("lost 30 conflicts on 30 nodes"));
  }
}

namespace {

std::string review(const std::string& kind, const std::string& ns, const std::string& object) {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",)"
         R"("kind":{"group":"x","version":"v1","kind":")" +
         kind +
         R"("},"operation":"CREATE",)"
         R"("namespace":")" +
         ns + R"(","object":)" + object + "}}";
}

}  // namespace

TEST_CASE("admission: defaults, rejections and the wrong namespace",
          "[operator][admission][unit]") {
  op::ValidationContext ctx{"sriov-dra", {}};
  SECTION("mutation adds priority and isRdma for InfiniBand") {
    auto req = op::parseAdmissionReview(
        review("SriovNetworkNodePolicy", "sriov-dra",
               R"({"metadata":{"name":"p"},"spec":{"resourceName":"r","numVfs":1,"linkType":"ib",)"
               R"("nodeSelector":{},"nicSelector":{"vendor":"15b3"}}})"));
    REQUIRE(req.ok());
    auto d = op::mutatePolicy(*req);
    CHECK(
        d.json_patch ==
        R"([{"op":"add","path":"/spec/priority","value":99},{"op":"add","path":"/spec/isRdma","value":true}])");
    auto out = json::parse(op::admissionReviewResponse(req->uid, d));
    REQUIRE(out.ok());
    CHECK(json::stringOr((*out)["response"], "patchType") == "JSONPatch");
    CHECK(*base64Decode(json::stringOr((*out)["response"], "patch")) == d.json_patch);
  }
  SECTION("validation rejects with a 422 and the rule's message") {
    auto req = op::parseAdmissionReview(
        review("SriovNetworkNodePolicy", "sriov-dra",
               R"({"metadata":{"name":"p"},"spec":{"resourceName":"r.x","numVfs":1,)"
               R"("nodeSelector":{},"nicSelector":{"vendor":"15b3"}}})"));
    auto d = op::validatePolicy(*req, ctx);
    CHECK_FALSE(d.allowed);
    CHECK(d.code == 422);
    CHECK_THAT(d.message,
               Catch::StartsWith("SriovNetworkNodePolicy \"p\" is invalid: spec.resourceName"));
    auto out = json::parse(op::admissionReviewResponse("u-1", d));
    CHECK(json::intOr((*out)["response"]["status"], "code", 0) == 422);
  }
  SECTION("a valid policy elsewhere is admitted with a warning that it is not used") {
    auto req = op::parseAdmissionReview(
        review("DeviceAttributes", "default",
               R"({"metadata":{"name":"d"},"spec":{"attributes":{"example.com/x":{"int":1}}}})"));
    auto d = op::validatePolicy(*req, ctx);
    CHECK(d.allowed);
    REQUIRE(d.warnings.size() == 1);
    CHECK_THAT(d.warnings[0],
               Catch::Contains("is not used: only policies in namespace \"sriov-dra\" count"));
  }
  SECTION("side by side, the SR-IOV network operator's objects in its namespace are its own") {
    op::ValidationContext side{"sriov-dra", "sriov-network-operator", {}};
    auto config = op::parseAdmissionReview(
        review("SriovOperatorConfig", "sriov-network-operator",
               R"({"apiVersion":"sriovnetwork.openshift.io/v1","metadata":{"name":"default"},)"
               R"("spec":{"enableInjector":true}})"));
    REQUIRE(config.ok());
    CHECK(op::validatePolicy(*config, side).allowed);
    CHECK_FALSE(op::validatePolicy(*config, ctx).allowed);  // without it: not ours, refused
    auto attrs = op::parseAdmissionReview(review(
        "DeviceAttributes", "sriov-network-operator",
        R"({"apiVersion":"sriovnetwork.k8snetworkplumbingwg.io/v1alpha1","metadata":{"name":"d"},)"
        R"("spec":{"attributes":{"example.com/x":{"int":1}}}})"));
    REQUIRE(attrs.ok());
    CHECK(op::validatePolicy(*attrs, side).warnings.size() == 1);  // the DRA driver's kinds: ours
  }
  SECTION("garbage is not an AdmissionReview") {
    CHECK_FALSE(op::parseAdmissionReview("{}").ok());
    CHECK_FALSE(op::parseAdmissionReview("nope").ok());
  }
}

TEST_CASE("a drain evicts the pods holding this driver's devices on the node, each once",
          "[operator][drain][unit]") {
  auto claim = [](const std::string& ns,
                  const std::vector<std::pair<std::string, std::string>>& results,
                  const std::vector<std::string>& pods) {
    api::ResourceClaim c;
    c.metadata.namespace_ = ns;
    api::AllocationResult a;
    for (auto& [driver, pool] : results) {
      api::DeviceRequestAllocationResult r;
      r.driver = driver;
      r.pool = pool;
      a.results.push_back(std::move(r));
    }
    c.status.allocation = std::move(a);
    for (const auto& p : pods) c.status.reserved_for.push_back({"", "pods", p, "uid-" + p});
    return c;
  };
  const std::string ours = "sriovnetwork.k8snetworkplumbingwg.io";
  auto vf_and_gpu = claim("llm", {{ours, "node-a"}, {"gpu.nvidia.com", "node-a"}}, {"worker-0"});
  auto same_pod = claim("llm", {{ours, "node-a"}}, {"worker-0"});
  auto gpu_only = claim("llm", {{"gpu.nvidia.com", "node-a"}}, {"gpu-only"});
  auto elsewhere = claim("llm", {{ours, "node-b"}}, {"worker-1"});
  auto shared = claim("batch", {{ours, "node-a"}}, {"job-1", "job-2"});
  api::ResourceClaim unallocated;
  unallocated.status.reserved_for.push_back({"", "pods", "pending", "uid"});
  std::vector<const api::ResourceClaim*> claims = {&vf_and_gpu, &same_pod, &gpu_only,
                                                   &elsewhere,  &shared,   &unallocated};
  CHECK(op::podsUsingDevicesOn("node-a", ours, claims) ==
        std::vector<op::PodRef>{{"batch", "job-1", "uid-job-1"},
                                {"batch", "job-2", "uid-job-2"},
                                {"llm", "worker-0", "uid-worker-0"}});
  CHECK(op::podsUsingDevicesOn("node-c", ours, claims).empty());
}

TEST_CASE("a drain before a reboot evicts every pod but DaemonSets', static and finished ones",
          "[operator][drain][unit]") {
  auto list = json::parse(R"({"kind":"PodList","items":[
    {"metadata":{"namespace":"llm","name":"worker-1","uid":"u-1"},"status":{"phase":"Running"}},
    {"metadata":{"namespace":"kube-system","name":"kube-proxy-x",
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"kube-proxy",
                          "uid":"u"}]},"status":{"phase":"Running"}},
    {"metadata":{"namespace":"kube-system","name":"etcd-node-a",
      "annotations":{"kubernetes.io/config.mirror":"abc"}},"status":{"phase":"Running"}},
    {"metadata":{"namespace":"batch","name":"done"},"status":{"phase":"Succeeded"}},
    {"metadata":{"namespace":"batch","name":"crashed"},"status":{"phase":"Failed"}},
    {"metadata":{"namespace":"batch","name":"leaving","deletionTimestamp":"2026-12-03T10:00:00Z"},
     "status":{"phase":"Running"}},
    {"metadata":{"namespace":"app","name":"pending"}},
    {"metadata":{"namespace":"app","name":"rs-owned",
      "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","uid":"v"}]},
     "status":{"phase":"Running"}},
    "not a pod", {"status":{}}]})");
  REQUIRE(list.ok());
  auto pods = op::podsToDrainForReboot(*list);
  std::vector<std::string> names;
  names.reserve(pods.size());
  for (const auto& p : pods) {
    names.push_back(p.pod.namespace_ + "/" + p.pod.name + (p.terminating ? " (terminating)" : ""));
  }
  CHECK(names == std::vector<std::string>{"app/pending", "app/rs-owned",
                                          "batch/leaving (terminating)", "llm/worker-1"});
  CHECK(pods.back().pod.uid == "u-1");
  CHECK(op::podsToDrainForReboot(*json::parse("{}")).empty());
}

TEST_CASE(
    "nodes are rendered once a burst of policy changes is quiet, or at the latest max after it "
    "began",
    "[operator][settle][unit]") {
  using std::chrono::milliseconds;
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  auto at = [&](int ms) { return t0 + milliseconds(ms); };
  op::Settle settle(milliseconds(500), milliseconds(5000));
  CHECK(settle.wait(at(0)) == milliseconds(0));  // no burst: nothing to wait for

  settle.changed(at(0));
  CHECK(settle.wait(at(100)) == milliseconds(400));
  settle.changed(at(300));  // the burst goes on: quiet from 300 ms
  CHECK(settle.wait(at(500)) == milliseconds(300));
  CHECK(settle.wait(at(800)) == milliseconds(0));  // quiet: render, and the burst is over
  CHECK(settle.wait(at(900)) == milliseconds(0));

  // A change every 400 ms never lets it be quiet: rendered 5 s after the first.
  settle.changed(at(1000));
  for (int t = 1400; t < 6000; t += 400) {
    settle.changed(at(t));
    CHECK(settle.wait(at(t)) > milliseconds(0));
  }
  CHECK(settle.wait(at(6000)) == milliseconds(0));
}

TEST_CASE("a node's document keeps its spec while the metadata before it is written again",
          "[operator][unit]") {
  const std::string spec = R"({"interfaces":[{"pciAddress":"0000:0e:00.0","numVfs":4}]})";
  op::NodeStateDocument document(spec);
  CHECK(document.spec() == spec);
  api::Node node;
  node.metadata.name = "n1";
  node.metadata.uid = "u-1";
  auto decoded = [](std::string_view text) {
    auto doc = json::parse(text);
    REQUIRE(doc.ok());
    return std::move(*doc);
  };

  std::string_view created = document.under("ns", node, false, nullptr);
  auto first = decoded(created);
  auto meta = kube::ObjectMeta::decode(first);
  CHECK(meta.name == "n1");
  CHECK(meta.namespace_ == "ns");
  CHECK(meta.resource_version.empty());
  CHECK(meta.labels.at(op::kManagedByLabel) == op::kManagedByValue);
  CHECK(meta.annotations.at(op::kDisruptiveAnnotation) == "false");
  REQUIRE(meta.owner_references.size() == 1);
  CHECK(meta.owner_references[0].uid == "u-1");
  CHECK(json::dump(first["spec"]) == spec);

  kube::ObjectMeta current = meta;
  current.resource_version = "42";
  current.labels["team"] = "a-label-someone-else-gave-the-object-that-is-longer-than-before";
  current.finalizers = {"example.com/keep"};
  std::string_view updated = document.under("ns", node, true, &current);
  CHECK(updated.data() == created.data());  // rewritten in place, not copied
  auto second = decoded(updated);
  meta = kube::ObjectMeta::decode(second);
  CHECK(meta.resource_version == "42");
  CHECK(meta.labels.at("team") == current.labels.at("team"));
  CHECK(meta.finalizers == current.finalizers);
  CHECK(meta.annotations.at(op::kDisruptiveAnnotation) == "true");
  CHECK(json::dump(second["spec"]) == spec);
  CHECK(document.spec() == spec);

  auto again = decoded(document.under("ns", node, false, nullptr));
  CHECK(kube::ObjectMeta::decode(again).resource_version.empty());
  CHECK(json::dump(again["spec"]) == spec);
}

TEST_CASE("the agents' admission policy is compared with the shipped one by what decides",
          "[operator][drain][unit]") {
  auto text =
      readFile(testing::sourceDir() + "/config/rbac/agent_validating_admission_policy.yaml");
  REQUIRE(text.ok());
  auto docs = yamlToJson(*text);
  REQUIRE(docs.ok());
  auto policy = std::find_if(docs->begin(), docs->end(), [](const json::Document& d) {
    return json::stringOr(d, "kind") == "ValidatingAdmissionPolicy";
  });
  REQUIRE(policy != docs->end());
  CHECK(op::agentPolicyDifference(*policy) == "");

  using Change = std::function<void(json::Value & spec, json::Allocator & a)>;
  auto replace = [](const char* key, const char* value_json) -> Change {
    return [key, value_json](json::Value& spec, json::Allocator& a) {
      auto value = json::parse(value_json);
      REQUIRE(value.ok());
      json::set(spec, key, json::Value(*value, a), a);
    };
  };
  struct Row {
    const char* name;
    Change change;
    std::string differ;
  };
  const std::vector<Row> rows = {
      {"what the API server fills in by default",
       [](json::Value& spec, json::Allocator& a) {
         auto& mc = spec["matchConstraints"];
         json::setString(mc, "matchPolicy", "Equivalent", a);
         json::set(mc, "namespaceSelector", json::Value(rapidjson::kObjectType), a);
         for (auto& rule : mc["resourceRules"].GetArray()) json::setString(rule, "scope", "*", a);
       },
       ""},
      {"a validation that admits everything", replace("validations", R"([{"expression":"true"}])"),
       "validations"},
      {"failures let through", replace("failurePolicy", R"("Ignore")"), "failurePolicy"},
      {"no agent matched",
       replace("matchConditions", R"([{"name":"is-the-agent","expression":"false"}])"),
       "matchConditions"},
      {"no rules and no variables",
       [&](json::Value& spec, json::Allocator& a) {
         replace("variables", "[]")(spec, a);
         json::set(spec["matchConstraints"], "resourceRules", json::Value(rapidjson::kArrayType),
                   a);
       },
       "resourceRules, variables"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    json::Document live;
    live.CopyFrom(*policy, live.GetAllocator());
    row.change(live["spec"], live.GetAllocator());
    CHECK(op::agentPolicyDifference(live) == row.differ);
  }
}
