// Scale driver for the operator: a real control plane, the operator process with 8 workers,
// N simulated nodes (default 5,000) with 8 PFs x 8 VFs each as their agents report them, the
// ResourceSlices those agents publish and a ResourceClaim allocated on every second node, and
// 20 policies (10 node policies, 5 resource policies, 5 DeviceAttributes).
// Floors, measured first on the same SriovNodeStates before the operator starts: the operator's
// render of each node (its own pure code) written by a tight loop with the operator's
// concurrency, once for the initial policy set and once for the change (after one untimed
// round of both, so the objects have the history they have under the operator). Ours: from applying
// the policies (then patching the 5 DeviceAttributes) to the operator's last SriovNodeState write,
// from the API server's audit log; its writes per changed node; its writes in an idle minute;
// its resident memory beside the JSON size of every object it caches.
// Usage: operator_scale [nodes=5000]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <unistd.h>

#include "agent/agent.h"
#include "api/names.h"
#include "api/node_state.h"
#include "base/log.h"
#include "dra/slices.h"
#include "kube/informer.h"
#include "operator/node_state_reconciler.h"
#include "operator/options.h"
#include "support/figures.h"
#include "support/fixtures.h"
#include "support/floor.h"
#include "support/operator_env.h"
#include "support/policy_fixtures.h"
#include "support/render.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;

namespace {

constexpr int kWorkers = 8;

std::string nodePolicyYaml(int i) {
  std::string pf = "ens" + std::to_string(i % 8) + (i < 8 ? "#0-3" : "#4-7");
  return "---\napiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodePolicy\nmetadata: "
         "{name: np-" +
         std::to_string(i) + "}\nspec: {resourceName: res_" + std::to_string(i % 5) +
         ", priority: " + std::to_string(10 + i) +
         ", numVfs: 8, nodeSelector: {sriov: \"true\"}, nicSelector: {pfNames: [\"" + pf +
         "\"]}}\n";
}

std::string resourcePolicyYaml(int i) {
  std::string n = std::to_string(i);
  return "---\napiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: "
         "SriovResourcePolicy\nmetadata: {name: rp-" +
         n + "}\nspec: {configs: [{deviceAttributesSelector: {matchLabels: {pool: p" + n +
         "}}, resourceFilters: [{pfNames: [ens" + n + ", ens" + std::to_string(i + 3) + "]}]}]}\n";
}

std::string deviceAttributesYaml(int i, const std::string& tier) {
  std::string n = std::to_string(i);
  return "---\napiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: "
         "DeviceAttributes\nmetadata: {name: da-" +
         n + ", labels: {pool: p" + n +
         "}}\nspec: {attributes: {example.com/tier: {string: " + tier +
         "}, example.com/rail: {int: " + n + "}}}\n";
}

// 10 node policies (two on ens0..ens1, VF ranges 0-3 and 4-7), 5 resource policies.
std::string nodePoliciesYaml() {
  std::string y;
  for (int i = 0; i < 10; ++i) y += nodePolicyYaml(i);
  for (int i = 0; i < 5; ++i) y += resourcePolicyYaml(i);
  return y;
}

// 5 DeviceAttributes, each with the tier and its rail.
std::string attributesYaml(const std::string& tier) {
  std::string y;
  for (int i = 0; i < 5; ++i) y += deviceAttributesYaml(i, tier);
  return y;
}

// A SriovNodeState as the bench watches it: how many devices the spec has with each tier.
struct TierView {
  kube::ObjectMeta metadata;
  size_t devices = 0;
  std::map<std::string, size_t> tiers;
  static Result<TierView> decode(const json::Value& v) {
    TierView t;
    t.metadata = kube::ObjectMeta::decode(v);
    const json::Value* spec = json::objectMember(v, "spec");
    const json::Value* devices = spec ? json::arrayMember(*spec, "devices") : nullptr;
    if (devices == nullptr) return t;
    for (const auto& d : devices->GetArray()) {
      ++t.devices;
      const json::Value* attrs = json::objectMember(d, "attributes");
      const json::Value* tier = attrs ? json::objectMember(*attrs, "example.com/tier") : nullptr;
      if (tier) ++t.tiers[std::string(json::stringOr(*tier, "string"))];
    }
    return t;
  }
};

// Waits until every state has 64 devices of `tier`.
void waitConverged(const kube::Informer<TierView>& states, size_t n, const std::string& tier) {
  auto deadline = Steady::now() + std::chrono::minutes(30);
  for (;;) {
    size_t done = 0;
    for (const auto& s : states.list()) {
      auto it = s->tiers.find(tier);
      done += s->devices == 64 && it != s->tiers.end() && it->second == 64;
    }
    if (done == n) return;
    if (Steady::now() > deadline) {
      std::fprintf(stderr, "bench: %zu of %zu nodes converged on %s after 30 minutes\n", done, n,
                   tier.c_str());
      std::exit(2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

// Waits until `user` has written nothing for `quiet` and returns its writes since `since`.
bench::WriteSpan awaitQuiet(const testing::ControlPlane& cp, const std::string& user,
                            WallTime since, std::chrono::seconds quiet) {
  for (;;) {
    auto span = bench::writesOf(cp.auditEvents(), user, "", since);
    auto last = span.count > 0 ? span.last_completed : since;
    if (std::chrono::system_clock::now() - last >= quiet) return span;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

std::vector<bench::Apply> specWrites(const std::string& ns, const std::vector<api::Node>& nodes,
                                     const api::SriovNodeStateSpec& spec) {
  std::vector<bench::Apply> out;
  out.reserve(nodes.size());
  for (const auto& node : nodes) {
    out.push_back({&api::resources::kSriovNodeStates, ns, "",
                   op::nodeStateApplyDocument(ns, node, spec, false), op::kFieldManager});
  }
  return out;
}

// One claim allocated a VF of the node (as kube-scheduler would), reserved for a pod.
void createAllocatedClaim(kube::Client& admin, const std::string& ns, const std::string& node,
                          const std::string& device, size_t i) {
  std::string name = "claim-" + std::to_string(i);
  auto claim = testing::yamlObject(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: " + name +
      "}\nspec: {devices: {requests: [{name: vf, exactly: {deviceClassName: "
      "sriovnetwork.k8snetworkplumbingwg.io}}]}}\n");
  auto created = admin.create(api::resources::kResourceClaims, ns, claim);
  bench::mustBeOk(created.status(), "creating " + name);
  auto status = testing::yamlObject(
      "status: {allocation: {devices: {results: [{request: vf, driver: " +
      std::string(api::kDriverName) + ", pool: " + node + ", device: " + device +
      "}]}, nodeSelector: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: "
      "In, values: [" +
      node + "]}]}]}}, reservedFor: [{resource: pods, name: pod-" + std::to_string(i) +
      ", uid: 00000000-0000-0000-0000-" + std::string(12 - std::to_string(i).size(), '0') +
      std::to_string(i) + "}]}\n");
  json::Document& obj = *created;
  json::set(obj, "status", json::Value(status["status"], obj.GetAllocator()), obj.GetAllocator());
  bench::mustBeOk(admin.update(api::resources::kResourceClaims, ns, obj, {}, "status").status(),
                  "allocating " + name);
}

double seconds(WallTime from, WallTime to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::stoul(argv[1]) : 5000;
  log::setVerbosity(-1);
  testing::OperatorEnv env("scale");
  auto& admin = env.admin();
  const std::string& ns = env.ns();
  auto setup_start = Steady::now();

  // The cluster before any policy: nodes, their SriovNodeStates as the operator creates them
  // (empty spec) with the status their agents report, the slices those agents publish (once the
  // policies advertise the VFs), allocated claims.
  std::vector<std::string> names(n);
  bench::parallel(n, kWorkers, [&](size_t i) {
    names[i] = env.createNode("n" + std::to_string(i), {{"sriov", "true"}});
  });
  std::vector<api::Node> nodes(n);
  bench::parallel(n, kWorkers, [&](size_t i) {
    auto got = admin.get(kube::resources::kNodes, "", names[i]);
    bench::mustBeOk(got.status(), "reading a node");
    nodes[i] = *api::Node::decode(*got);
  });
  auto status = testing::fixture::ethernetStatus(8, 8);
  std::string policies_gold = nodePoliciesYaml() + attributesYaml("gold");
  std::string policies_silver = nodePoliciesYaml() + attributesYaml("silver");
  auto spec_gold = bench::renderFromYaml(nodes[0], policies_gold, status);
  auto spec_silver = bench::renderFromYaml(nodes[0], policies_silver, status);
  if (spec_gold.devices.size() != 64) {
    std::fprintf(stderr, "bench: the policies advertise %zu VFs per node, not 64\n",
                 spec_gold.devices.size());
    return 2;
  }
  bench::timeApplies(admin, specWrites(ns, nodes, {}), kWorkers);
  bench::parallel(n, kWorkers, [&](size_t i) {
    auto st = status;
    st.observed_generation = 1;
    auto applied = admin.apply(api::resources::kSriovNodeStates, ns,
                               agent::statusApplyDocument(ns, names[i], st),
                               {.field_manager = api::kAgentFieldManager, .force = true}, "status");
    bench::mustBeOk(applied.status(), "reporting a node's status");
  });
  bench::parallel(n, kWorkers, [&](size_t i) {
    auto set = dra::buildSlices(names[i], spec_gold.devices, status.interfaces, {});
    for (const auto& s : set.slices) {
      auto applied = admin.apply(api::resources::kResourceSlices, "",
                                 agent::sliceApplyDocument(names[i], nodes[i].metadata.uid, s),
                                 {.field_manager = api::kAgentFieldManager, .force = true});
      bench::mustBeOk(applied.status(), "publishing a node's slice");
    }
    if (i % 2 == 0) createAllocatedClaim(admin, ns, names[i], spec_gold.devices[0].name, i);
  });
  double setup_seconds = std::chrono::duration<double>(Steady::now() - setup_start).count();

  // The bench watches the states (to see convergence) during the floors as during ours.
  kube::Informer<TierView> states(env.cp().client(), api::resources::kSriovNodeStates,
                                  {.namespace_ = ns});
  states.start();
  states.waitForSync(std::chrono::minutes(2));

  // Floors: the operator's writes of each step on these very objects, then back to empty. First
  // one round untimed, so that the objects have the history they have when the operator writes
  // them (the API server's cost per write grows with it: about 4 % by the third round).
  bench::timeApplies(admin, specWrites(ns, nodes, spec_gold), kWorkers);
  bench::timeApplies(admin, specWrites(ns, nodes, spec_silver), kWorkers);
  bench::timeApplies(admin, specWrites(ns, nodes, {}), kWorkers);
  auto cpu0 = bench::Cpu::now(env.cp(), 0);
  double floor_initial = bench::timeApplies(admin, specWrites(ns, nodes, spec_gold), kWorkers);
  auto cpu1 = bench::Cpu::now(env.cp(), 0);
  double floor_change = bench::timeApplies(admin, specWrites(ns, nodes, spec_silver), kWorkers);
  auto cpu2 = bench::Cpu::now(env.cp(), 0);
  bench::timeApplies(admin, specWrites(ns, nodes, {}), kWorkers);

  auto op = env.startOperator({.extra_args = {"--workers=" + std::to_string(kWorkers)}});
  awaitQuiet(env.cp(), "operator", std::chrono::system_clock::now(), std::chrono::seconds(5));

  // Initial rollout: the policy set applied.
  auto cpu3 = bench::Cpu::now(env.cp(), op->pid());
  WallTime t0 = std::chrono::system_clock::now();
  env.cp().applyYaml(policies_gold, ns);
  WallTime applied = std::chrono::system_clock::now();
  waitConverged(states, n, "gold");
  auto cpu4 = bench::Cpu::now(env.cp(), op->pid());
  auto initial_writes = awaitQuiet(env.cp(), "operator", t0, std::chrono::seconds(5));
  auto initial_states = bench::writesOf(env.cp().auditEvents(), "operator", "sriovnodestates", t0);
  std::string initial_by_resource = bench::writesByResource(env.cp().auditEvents(), "operator", t0);
  double initial = seconds(t0, initial_states.last_completed);

  // One policy change: the five DeviceAttributes patched.
  auto cpu5 = bench::Cpu::now(env.cp(), op->pid());
  WallTime t1 = std::chrono::system_clock::now();
  for (int i = 0; i < 5; ++i) {
    bench::mustBeOk(
        admin
            .patch(api::resources::kDeviceAttributes, ns, "da-" + std::to_string(i),
                   kube::PatchType::kMerge,
                   R"({"spec":{"attributes":{"example.com/tier":{"string":"silver"}}}})")
            .status(),
        "patching DeviceAttributes");
  }
  waitConverged(states, n, "silver");
  auto cpu6 = bench::Cpu::now(env.cp(), op->pid());
  auto change_writes = awaitQuiet(env.cp(), "operator", t1, std::chrono::seconds(5));
  auto change_states = bench::writesOf(env.cp().auditEvents(), "operator", "sriovnodestates", t1);
  std::string change_by_resource = bench::writesByResource(env.cp().auditEvents(), "operator", t1);
  double change = seconds(t1, change_states.last_completed);

  // An idle minute.
  WallTime idle_start = std::chrono::system_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(60));
  int idle_writes = bench::writesOf(env.cp().auditEvents(), "operator", "", idle_start).count;

  // Memory: what the operator holds beside the JSON of what it must cache; what etcd holds.
  long rss = op->residentKiB() * 1024;
  env.cp().compactEtcd();
  double etcd_bytes = bench::etcdBytesInUse(env.cp());
  struct Cached {
    const char* what;
    size_t bytes;
  };
  std::vector<Cached> cached = {
      {"Nodes", bench::listJsonBytes(admin, kube::resources::kNodes, "")},
      {"SriovNodeStates", bench::listJsonBytes(admin, api::resources::kSriovNodeStates, ns)},
      {"ResourceSlices", bench::listJsonBytes(admin, api::resources::kResourceSlices, "")},
      {"ResourceClaims", bench::listJsonBytes(admin, api::resources::kResourceClaims, "")},
      {"policies", bench::listJsonBytes(admin, api::resources::kSriovNetworkNodePolicies, ns) +
                       bench::listJsonBytes(admin, api::resources::kSriovResourcePolicies, ns) +
                       bench::listJsonBytes(admin, api::resources::kDeviceAttributes, ns)},
      {"DeviceClasses", bench::listJsonBytes(admin, api::resources::kDeviceClasses, "")},
      {"Namespaces", bench::listJsonBytes(admin, kube::resources::kNamespaces, "")},
  };
  size_t cached_total = 0;
  std::string cached_parts;
  for (const auto& c : cached) {
    cached_total += c.bytes;
    cached_parts += std::string(cached_parts.empty() ? "" : ", ") + c.what + " " +
                    bench::formatValue(static_cast<double>(c.bytes), bench::Unit::kBytes);
  }

  double nodes_d = static_cast<double>(n);
  bench::Report report("operator scale: " + std::to_string(n) + " nodes x 64 VFs, 20 policies, " +
                       std::to_string(kWorkers) + " workers");
  report.add(
      {"operator_initial_rollout", "initial rollout (policy set applied), converged", initial,
       floor_initial, bench::Unit::kSeconds,
       std::to_string(n) + " SriovNodeState applies, " + std::to_string(kWorkers) + " at a time",
       1.1});
  report.add({"operator_initial_writes", "initial rollout, SriovNodeState writes",
              static_cast<double>(initial_states.count), nodes_d, bench::Unit::kCount,
              "one write per changed node", 1.02});
  report.add(
      {"operator_policy_change", "one policy change (5 DeviceAttributes), converged", change,
       floor_change, bench::Unit::kSeconds,
       std::to_string(n) + " SriovNodeState applies, " + std::to_string(kWorkers) + " at a time",
       1.1});
  report.add({"operator_change_writes", "one policy change, SriovNodeState writes",
              static_cast<double>(change_states.count), nodes_d, bench::Unit::kCount,
              "one write per changed node", 1.02});
  report.add({"operator_memory", "operator resident memory", static_cast<double>(rss),
              static_cast<double>(cached_total), bench::Unit::kBytes,
              "JSON of the objects it caches, as listed", 1.5});
  report.add({"operator_idle_writes", "API writes in an idle minute (Lease renewals aside)",
              static_cast<double>(idle_writes), 0, bench::Unit::kCount, "none"});
  report.note("setup (nodes, states, statuses, slices, claims): " +
              bench::formatValue(setup_seconds, bench::Unit::kSeconds));
  auto ms = [](double s) { return bench::formatValue(s, bench::Unit::kSeconds); };
  report.note("initial rollout: policies applied in " + ms(seconds(t0, applied)) +
              ", first SriovNodeState written " + ms(seconds(t0, initial_states.first_received)) +
              " after the start (policy_settle is 500 ms), the last " + ms(initial) + "; " +
              std::to_string(initial_states.count) + " SriovNodeState writes of " +
              std::to_string(initial_writes.count) + " (" + initial_by_resource +
              "; the others are per policy, class or Event, whatever the nodes)");
  report.note("  ours " + (cpu4 - cpu3).describe("operator"));
  report.note("  floor " + (cpu1 - cpu0).describe("operator"));
  report.note("policy change: first SriovNodeState written " +
              ms(seconds(t1, change_states.first_received)) + " after the patches, the last " +
              ms(change) + "; " + std::to_string(change_states.count) +
              " SriovNodeState writes of " + std::to_string(change_writes.count) + " (" +
              change_by_resource + ")");
  report.note("  ours " + (cpu6 - cpu5).describe("operator"));
  report.note("  floor " + (cpu2 - cpu1).describe("operator"));
  report.note("cached JSON: " + cached_parts);
  auto floor_cpu = cpu2 - cpu1;
  report.note("one SriovNodeState write (64 VFs, " +
              std::to_string(cached[1].bytes / std::max<size_t>(n, 1) / 1024) +
              " KiB of JSON) cost kube-apiserver " +
              std::to_string(static_cast<int>(1000 * floor_cpu.apiserver / nodes_d)) +
              " ms and etcd " + std::to_string(static_cast<int>(1000 * floor_cpu.etcd / nodes_d)) +
              " ms of CPU (the policy change's floor)");
  report.note("idle: " + std::to_string(idle_writes) + " writes in 60 s");
  report.note("etcd holds " + bench::formatValue(etcd_bytes, bench::Unit::kBytes) +
              " after compaction (" +
              std::to_string(static_cast<long>(etcd_bytes / nodes_d / 1024)) +
              " KiB per node: its Node, SriovNodeState, ResourceSlice and half a claim)");
  states.stop();
  bool met = report.print();
  return met && idle_writes == 0 ? 0 : 1;
}
