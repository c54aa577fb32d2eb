// Scale driver for the operator: a real control plane, the operator process with 8 workers,
// N simulated nodes (default 5,000) with V VFs each (default 64: 16 PFs of the many-pfs fixture
// with V/16 VFs each, the status their agents report after discovering them), the
// ResourceSlices those agents publish and a ResourceClaim allocated on every second node, and
// 20 policies (10 node policies, 5 resource policies, 5 DeviceAttributes).
// Floors: the operator's render of each node (its own pure code) written by the cheapest client
// as the operator's user, in a namespace of its own: each state created, then updated under the
// version of its own last write (bench::Replacer), metadata-only answers, no watch, as many writers
// as the server rewards (bench::sweepWriters). Ours: from applying the policies (then patching the
// 5 DeviceAttributes) to the operator's last SriovNodeState write, from the API server's audit
// log; its writes per changed node; its writes in an idle minute. Ours and the floor take turns
// (the initial rollout, then five policy changes, whose median round is the figure), on states
// that have the same history (three untimed rounds of specs).
// Memory: its resident memory after the change and at its peak, beside the least an operator
// can hold: the same binary's resident memory on the empty cluster plus the heap that the
// operator's own caches (op::Caches, op::NetworkCaches) take when the bench fills them in its
// own process from the same API server.
// Usage: operator_scale [nodes=5000] [vfs-per-node=64, a multiple of 32] [workers]
// (workers: the floor's writers and the operator's workers, instead of the sweep's choice)
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include <unistd.h>

#include "api/names.h"
#include "api/node_state.h"
#include "base/log.h"
#include "base/parallel.h"
#include "dra/slices.h"
#include "kube/informer.h"
#include "node/agent/agent.h"
#include "operator/caches.h"
#include "operator/node_state_reconciler.h"
#include "operator/options.h"
#include "support/figures.h"
#include "support/fixtures.h"
#include "support/floor.h"
#include "support/host_fixture.h"
#include "support/operator_env.h"
#include "support/operator_heap.h"
#include "support/render.h"
#include "support/scale_policies.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;

namespace {

constexpr int kWorkers = 8;
// install.yaml's limit for the operator container.
constexpr double kOperatorMemoryLimit = 512.0 * 1024 * 1024;

// "1.07" for ours / floor.
std::string ratioText(double ours, double floor) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", floor > 0 ? ours / floor : 0);
  return buf;
}

// How many of the namespace's SriovNodeStates have `vfs` devices of `tier` in their spec (read in
// pages of 100: at 256 VFs the namespace's states are hundreds of megabytes of JSON).
size_t statesOnTier(kube::Client& client, const std::string& ns, size_t vfs,
                    const std::string& tier) {
  size_t done = 0;
  kube::ListOptions page_options{.limit = 100};
  for (;;) {
    auto page = client.list(api::resources::kSriovNodeStates, ns, page_options);
    bench::mustBeOk(page.status(), "listing SriovNodeStates");
    for (const auto& item : (*page)["items"].GetArray()) {
      const json::Value* devices = json::at(item, {"spec", "devices"});
      if (devices == nullptr || !devices->IsArray() || devices->Size() != vfs) continue;
      size_t on_tier = 0;
      for (const auto& d : devices->GetArray()) {
        const json::Value* t = json::at(d, {"attributes", "example.com/tier"});
        on_tier += t != nullptr && json::stringOr(*t, "string") == tier ? 1 : 0;
      }
      done += on_tier == vfs ? 1 : 0;
    }
    page_options.continue_token = json::stringOr((*page)["metadata"], "continue");
    if (page_options.continue_token.empty()) return done;
  }
}

// Waits until `user` has written `count` SriovNodeStates since `since` and then nothing at all for
// `quiet`, reading only what the audit log gained since the last poll; returns those writes.
bench::WriteSpan awaitWrites(bench::AuditLog& audit, const std::string& user, WallTime since,
                             size_t count, std::chrono::seconds quiet) {
  auto deadline = Steady::now() + std::chrono::minutes(30);
  for (;;) {
    const auto& events = audit.poll();
    auto states = bench::writesOf(events, user, "sriovnodestates", since);
    auto all = bench::writesOf(events, user, "", since);
    auto last = all.count > 0 ? all.last_completed : since;
    if (static_cast<size_t>(states.count) >= count &&
        std::chrono::system_clock::now() - last >= quiet)
      return states;
    if (Steady::now() > deadline) {
      std::fprintf(stderr, "bench: %s wrote %d of %zu SriovNodeStates in 30 minutes\n",
                   user.c_str(), states.count, count);
      std::exit(2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

// Exits unless every state of the namespace carries `tier` on all its `vfs` devices.
void mustHaveConverged(kube::Client& client, const std::string& ns, size_t n, size_t vfs,
                       const std::string& tier) {
  size_t done = statesOnTier(client, ns, vfs, tier);
  if (done == n) return;
  std::fprintf(stderr, "bench: %zu of %zu SriovNodeStates of %s carry %s\n", done, n, ns.c_str(),
               tier.c_str());
  std::exit(2);
}

// Each node's SriovNodeState with `spec_json` as the operator writes it.
std::vector<json::Document> specDocs(const std::string& ns, const std::vector<api::Node>& nodes,
                                     const std::string& spec_json) {
  std::vector<json::Document> out;
  out.reserve(nodes.size());
  for (const auto& node : nodes) out.push_back(bench::nodeStateObject(ns, node, spec_json));
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

// One step: ours (a policy change until the operator's writes are quiet) and the floor's.
struct Step {
  std::string what;
  double ours = 0, floor = 0;
  bench::WriteSpan writes;
  std::string by_resource;
  std::string reads;  // the operator's reads that ended during its step
  bench::Cpu ours_cpu, floor_cpu;
};

// Floor changes without and with a watch like the operator's open, by round.
struct WatchCost {
  std::vector<bench::Round> rounds;  // ours = with the watch
  Step unwatched{"floor"}, watched{"floor with the operator's watch"};
};

struct Args {
  size_t nodes = 5000;
  int vfs = 64;
  int forced_workers = 0;
};

std::optional<Args> parseArgs(int argc, char** argv) {
  Args a;
  auto nodes = bench::countArgument(argc, argv, 5000, 1, 100000, 1);
  auto vfs = bench::countArgument(argc, argv, 64, 32, 4096, 2);
  auto workers = bench::countArgument(argc, argv, 0, 0, 64, 3);
  if (!nodes || !vfs || !workers || *vfs % 32 != 0) return std::nullopt;
  a.nodes = static_cast<size_t>(*nodes);
  a.vfs = static_cast<int>(*vfs);
  a.forced_workers = static_cast<int>(*workers);
  return a;
}

// The operator's user, allowed in the floor's namespace as in the operator's.
std::shared_ptr<kube::Client> operatorClientIn(testing::OperatorEnv& env, const std::string& ns) {
  env.cp().grantOperatorRbac("operator", ns);
  return env.cp().client("operator");
}

// The bench in three parts: set-up (the operator's size on the empty cluster, the cluster and
// its history in both namespaces, the floor's writers, the operator started), the rounds (the
// initial rollout, policy changes, the watch's cost, an idle minute), then the report.
class OperatorScale {
 public:
  explicit OperatorScale(const Args& args);
  Step initialRollout();
  Step policyChange(const std::string& tier);
  WatchCost watchCost(int rounds);
  int idleWrites();
  bool report(const std::vector<Step>& steps, const WatchCost& watch, int idle_writes);

 private:
  // Nodes, their SriovNodeStates as the operator creates them (empty spec) with the status
  // their agents report (in both namespaces), the slices those agents publish (once the policies
  // advertise the VFs), allocated claims, and a history of three rounds of specs.
  void buildCluster();
  std::vector<json::Document> writesOfTier(const std::string& where, const std::string& tier) {
    return specDocs(where, nodes_, spec_json_[tier]);
  }
  bench::Replacer& writerOf(const std::string& where) {
    return where == floor_ns_ ? floor_writer_ : ours_writer_;
  }
  // Each side's CPU is counted until its writes have been quiet for 5 s, as the operator's must
  // be: so each side pays its own tail of work the API server does after answering (decoding the
  // writes for its watch cache, collecting their garbage) and the same quiet time, not the
  // floor's tail in the operator's step that follows it.
  void floorStep(Step& step, const std::string& tier);
  void oursStep(Step& step, const std::string& tier, const std::function<void()>& change);

  const size_t n_;
  const int vfs_;
  const size_t vfs_n_;
  testing::OperatorEnv env_{"scale"};
  kube::Client& admin_ = env_.admin();
  const std::string& ns_ = env_.ns();
  // The floor writes the same objects in a namespace of its own, which the operator does not
  // watch, so the two can take turns on one server while the operator runs. It writes as the
  // operator, with its RBAC there: the API server authorizes and queues (priority and fairness)
  // it alike.
  const std::string floor_ns_ = env_.cp().newNamespace("scale-floor");
  std::shared_ptr<kube::Client> floor_client_ = operatorClientIn(env_, floor_ns_);
  double base_bytes_ = 0;  // the operator on the empty cluster
  double setup_seconds_ = 0;
  std::vector<std::string> names_;
  std::vector<api::Node> nodes_;
  std::map<std::string, std::string> policies_;   // by tier
  std::map<std::string, std::string> spec_json_;  // by tier ("" = empty spec)
  // The states are written as the operator writes them: created, then updated under the
  // version of the last write, the floor's by the operator's user (which is the floor's writer).
  bench::Replacer ours_writer_{admin_, api::resources::kSriovNodeStates, op::kFieldManager};
  bench::Replacer floor_writer_{*floor_client_, api::resources::kSriovNodeStates,
                                op::kFieldManager};
  bench::WriterSweep sweep_;
  std::unique_ptr<bench::AuditLog> audit_;
  std::unique_ptr<testing::OperatorProcess> op_;
  double synced_ = 0, synced_peak_ = 0;  // after its first sync, before any policy
};

OperatorScale::OperatorScale(const Args& args)
    : n_(args.nodes), vfs_(args.vfs), vfs_n_(static_cast<size_t>(args.vfs)) {
  // The operator on the empty cluster: what its binary, threads and empty caches take.
  {
    auto idle = env_.startOperator({.extra_args = {"--workers=" + std::to_string(kWorkers)}});
    idle->waitReady();
    base_bytes_ = static_cast<double>(idle->residentKiB()) * 1024;
  }
  auto setup_start = Steady::now();
  buildCluster();
  setup_seconds_ = std::chrono::duration<double>(Steady::now() - setup_start).count();

  // The floor's writers: as many as the server rewards, the fewest within 5 % of the fastest
  // policy change (gold, silver, gold, ...) at each concurrency.
  std::vector<int> counts = {4, 8, 16, 32};
  if (args.forced_workers > 0) counts = {args.forced_workers};
  sweep_ = bench::sweepWriters(counts, [&](int c, size_t round) {
    return floor_writer_.time(writesOfTier(floor_ns_, round % 2 == 0 ? "gold" : "silver"), c);
  });
  floor_writer_.time(writesOfTier(floor_ns_, ""), sweep_.writers);

  // The operator with as many workers as the floor's writers.
  audit_ = std::make_unique<bench::AuditLog>(env_.cp());
  op_ = env_.startOperator({.extra_args = {"--workers=" + std::to_string(sweep_.writers)}});
  awaitWrites(*audit_, "operator", std::chrono::system_clock::now(), 0, std::chrono::seconds(5));
  synced_ = static_cast<double>(op_->residentKiB()) * 1024;
  synced_peak_ = static_cast<double>(op_->peakResidentKiB()) * 1024;
}

void OperatorScale::buildCluster() {
  names_.resize(n_);
  forEachConcurrently(n_, kWorkers, [&](size_t i) {
    names_[i] = env_.createNode("n" + std::to_string(i), {{"sriov", "true"}});
  });
  nodes_.resize(n_);
  forEachConcurrently(n_, kWorkers, [&](size_t i) {
    auto got = admin_.get(kube::resources::kNodes, "", names_[i]);
    bench::mustBeOk(got.status(), "reading a node");
    nodes_[i] = *api::Node::decode(*got);
  });
  // Every node is the many-pfs server as its agent reports it once it advertises the VFs.
  auto host = bench::discoverFixture("many-pfs", vfs_ / 16, bench::scratchDir("sriov-dra-scale"));
  std::vector<std::string> pfs;
  for (const auto& pf : host.topology.pfs) pfs.push_back(pf.name);
  auto first = bench::agentStatus(host.topology, {}, {});
  std::map<std::string, api::SriovNodeStateSpec> specs;
  for (const char* tier : {"gold", "silver"}) {
    policies_[tier] = bench::nodePoliciesYaml(pfs, vfs_ / 16) + bench::attributesYaml(tier);
    specs[tier] = bench::renderFromYaml(nodes_[0], policies_[tier], first);
  }
  specs[""] = {};
  auto status = bench::agentStatus(host.topology, first, specs["gold"]);
  if (pfs.size() != 16 || specs["gold"].devices.size() != vfs_n_) {
    std::fprintf(stderr, "bench: the policies advertise %zu VFs of %zu PFs per node, not %d\n",
                 specs["gold"].devices.size(), pfs.size(), vfs_);
    std::exit(2);
  }
  for (const auto& [tier, spec] : specs) spec_json_[tier] = op::encodeSpec(spec);
  for (const std::string& where : {ns_, floor_ns_}) {
    writerOf(where).time(writesOfTier(where, ""), kWorkers);
    forEachConcurrently(n_, kWorkers, [&](size_t i) {
      auto st = status;
      st.observed_generation = 1;
      auto applied = admin_.apply(
          api::resources::kSriovNodeStates, where, agent::statusDocument(where, names_[i], st),
          {.field_manager = api::kAgentFieldManager, .force = true, .metadata_only = true},
          "status");
      bench::mustBeOk(applied.status(), "reporting a node's status");
      writerOf(where).know(kube::objectKey(where, names_[i]),
                           kube::ObjectMeta::decode(*applied).resource_version);
    });
  }
  forEachConcurrently(n_, kWorkers, [&](size_t i) {
    auto set = dra::buildSlices(names_[i], specs["gold"].devices, status.interfaces, {});
    for (const auto& s : set.slices) {
      auto applied = admin_.apply(api::resources::kResourceSlices, "",
                                  agent::sliceDocument(names_[i], nodes_[i].metadata.uid, s),
                                  {.field_manager = api::kAgentFieldManager, .force = true});
      bench::mustBeOk(applied.status(), "publishing a node's slice");
    }
    if (i % 2 == 0) createAllocatedClaim(admin_, ns_, names_[i], specs["gold"].devices[0].name, i);
  });
  // The objects get the history they have under the operator (the API server's cost per write
  // grows with it: about 4 % by the third round): a round of each spec, back to empty.
  for (const std::string& where : {ns_, floor_ns_}) {
    for (const char* tier : {"gold", "silver", ""}) {
      writerOf(where).time(writesOfTier(where, tier), kWorkers);
    }
  }
}

void OperatorScale::floorStep(Step& step, const std::string& tier) {
  auto c0 = bench::Cpu::now(env_.cp(), 0);
  WallTime t0 = std::chrono::system_clock::now();
  step.floor = floor_writer_.time(writesOfTier(floor_ns_, tier), sweep_.writers);
  awaitWrites(*audit_, "operator", t0, n_, std::chrono::seconds(5));
  step.floor_cpu = bench::Cpu::now(env_.cp(), 0) - c0;
  mustHaveConverged(admin_, floor_ns_, n_, vfs_n_, tier);
}

void OperatorScale::oursStep(Step& step, const std::string& tier,
                             const std::function<void()>& change) {
  auto c0 = bench::Cpu::now(env_.cp(), op_->pid());
  WallTime t0 = std::chrono::system_clock::now();
  change();
  step.writes = awaitWrites(*audit_, "operator", t0, n_, std::chrono::seconds(5));
  step.ours_cpu = bench::Cpu::now(env_.cp(), op_->pid()) - c0;
  step.ours = step.writes.secondsSince(t0);
  step.by_resource = bench::writesByResource(audit_->poll(), "operator", t0);
  step.reads = bench::readsByResource(audit_->poll(), "operator", t0);
  mustHaveConverged(admin_, ns_, n_, vfs_n_, tier);
}

Step OperatorScale::initialRollout() {
  Step initial{"initial rollout"};
  oursStep(initial, "gold", [&] { env_.cp().applyYaml(policies_["gold"], ns_); });
  floorStep(initial, "gold");
  return initial;
}

// The five DeviceAttributes patched to `tier`.
Step OperatorScale::policyChange(const std::string& tier) {
  Step change{std::string("policy change to ") + tier};
  oursStep(change, tier, [&] {
    for (int i = 0; i < 5; ++i) {
      bench::mustBeOk(
          admin_
              .patch(api::resources::kDeviceAttributes, ns_, "da-" + std::to_string(i),
                     kube::PatchType::kMerge,
                     std::string(R"({"spec":{"attributes":{"example.com/tier":{"string":")") +
                         tier + R"("}}}})")
              .status(),
          "patching DeviceAttributes");
    }
  });
  floorStep(change, tier);
  return change;
}

// What the operator's watch of its SriovNodeStates (it must see what the agents report) costs
// the server: floor changes without (to gold) and with (back to silver) such a watch open on the
// floor's namespace, in turns. Like the operator's, it brings metadata only and completes each
// write from the cached state (the operator completes its own writes so), reading nothing.
WatchCost OperatorScale::watchCost(int rounds) {
  WatchCost out;
  for (int round = 0; round < rounds; ++round) {
    floorStep(out.unwatched, "gold");
    kube::Informer<op::CachedNodeState> watch(
        env_.cp().client(), api::resources::kSriovNodeStates,
        {.namespace_ = floor_ns_, .watch_metadata_only = true});
    watch.setCompletion([](const kube::ObjectMeta& meta, const auto& cached) {
      if (!cached) return cached;
      auto copy = std::make_shared<op::CachedNodeState>(*cached);
      copy->metadata = meta;
      return std::shared_ptr<const op::CachedNodeState>(std::move(copy));
    });
    watch.start();
    if (!watch.waitForSync(std::chrono::minutes(10))) {
      std::fprintf(stderr, "bench: the watch of the floor's namespace did not sync\n");
      std::exit(2);
    }
    floorStep(out.watched, "silver");
    watch.stop();
    out.rounds.push_back({out.watched.floor, out.unwatched.floor});
  }
  return out;
}

int OperatorScale::idleWrites() {
  WallTime idle_start = std::chrono::system_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(60));
  return bench::writesOf(audit_->poll(), "operator", "", idle_start).count;
}

// Long on purpose: the figures, then the notes in the order a reader checks them, each one
// statement of what was measured; split, the report's order would be spread over functions.
// NOLINTNEXTLINE(readability-function-size)
bool OperatorScale::report(const std::vector<Step>& steps, const WatchCost& watch,
                           int idle_writes) {
  const int writers = sweep_.writers;
  // Memory: what the operator holds, now and at its peak, beside the least it could (its binary
  // on the empty cluster plus what its caches keep); the JSON the API server sends for the same
  // objects; what etcd holds.
  double rss = static_cast<double>(op_->residentKiB()) * 1024;
  double peak = static_cast<double>(op_->peakResidentKiB()) * 1024;
  bench::Kept kept_parts = bench::heapOfOperatorCaches(env_.cp(), ns_);
  double distinct_state = bench::heapPerDistinctState(admin_, ns_, names_[0], 500);
  double kept = static_cast<double>(kept_parts.total);
  env_.cp().compactEtcd();
  double etcd_bytes = bench::etcdBytesInUse(env_.cp());
  struct Cached {
    const char* what;
    size_t bytes;
  };
  std::vector<Cached> cached = {
      {"Nodes", bench::listJsonBytes(admin_, kube::resources::kNodes, "")},
      {"SriovNodeStates", bench::listJsonBytes(admin_, api::resources::kSriovNodeStates, ns_)},
      {"ResourceSlices", bench::listJsonBytes(admin_, api::resources::kResourceSlices, "")},
      {"ResourceClaims", bench::listJsonBytes(admin_, api::resources::kResourceClaims, "")},
      {"policies", bench::listJsonBytes(admin_, api::resources::kSriovNetworkNodePolicies, ns_) +
                       bench::listJsonBytes(admin_, api::resources::kSriovResourcePolicies, ns_) +
                       bench::listJsonBytes(admin_, api::resources::kDeviceAttributes, ns_)},
      {"DeviceClasses", bench::listJsonBytes(admin_, api::resources::kDeviceClasses, "")},
      {"Namespaces", bench::listJsonBytes(admin_, kube::resources::kNamespaces, "")},
  };
  size_t cached_total = 0;
  std::string cached_parts;
  for (const auto& c : cached) {
    cached_total += c.bytes;
    cached_parts += std::string(cached_parts.empty() ? "" : ", ") + c.what + " " +
                    bench::formatValue(static_cast<double>(c.bytes), bench::Unit::kBytes);
  }

  const Step& initial = steps.front();
  double nodes_d = static_cast<double>(n_);
  std::vector<bench::Round> change_rounds;
  int change_writes = 0;
  for (size_t i = 1; i < steps.size(); ++i) {
    change_rounds.push_back({steps[i].ours, steps[i].floor});
    change_writes = std::max(change_writes, steps[i].writes.count);
  }
  bench::Round change = bench::medianRound(change_rounds);
  std::string updates = std::to_string(n_) + " SriovNodeState updates, " + std::to_string(writers) +
                        " at a time, metadata-only answers, no watch";
  bench::Report report("operator scale: " + std::to_string(n_) + " nodes x " +
                       std::to_string(vfs_) + " VFs, 20 policies, " + std::to_string(writers) +
                       " workers");
  report.add({"operator_initial_rollout", "initial rollout (policy set applied), converged",
              initial.ours, initial.floor, bench::Unit::kSeconds, updates, 1.1});
  report.add({"operator_initial_writes", "initial rollout, SriovNodeState writes",
              static_cast<double>(initial.writes.count), nodes_d, bench::Unit::kCount,
              "one write per changed node", 1.02});
  report.add({"operator_policy_change",
              "one policy change (5 DeviceAttributes), converged, the median of " +
                  std::to_string(change_rounds.size()) + " rounds",
              change.ours, change.floor, bench::Unit::kSeconds, updates, 1.1});
  report.add({"operator_change_writes", "one policy change, SriovNodeState writes (the most)",
              static_cast<double>(change_writes), nodes_d, bench::Unit::kCount,
              "one write per changed node", 1.02});
  report.add({"operator_memory", "operator resident memory after the changes", rss,
              base_bytes_ + kept, bench::Unit::kBytes,
              "its binary on the empty cluster + the heap its caches keep", 1.5});
  report.add({"operator_memory_peak", "operator peak resident memory (VmHWM)", peak,
              base_bytes_ + kept, bench::Unit::kBytes,
              "its binary on the empty cluster + the heap its caches keep", 1.5});
  report.add({"operator_idle_writes", "API writes in an idle minute (Lease renewals aside)",
              static_cast<double>(idle_writes), 0, bench::Unit::kCount, "none"});
  report.note(
      "setup (nodes, states in both namespaces, statuses, slices, claims, three rounds of "
      "history): " +
      bench::formatValue(setup_seconds_, bench::Unit::kSeconds));
  report.note("floor writers (one change each): " + sweep_.text +
              "; the floor and the operator use " + std::to_string(writers));
  auto secs = [](double s) { return bench::formatValue(s, bench::Unit::kSeconds); };
  for (const auto& step : steps) {
    report.note(step.what + ": ours " + secs(step.ours) + " (first SriovNodeState write " +
                secs(step.writes.seconds() > 0 ? step.ours - step.writes.seconds() : 0) +
                " after the change, policy_settle is 500 ms; " + step.by_resource + "), floor " +
                secs(step.floor) + " (ratio " + ratioText(step.ours, step.floor) + ")");
    report.note("  ours " + step.ours_cpu.describe("operator") + "; its reads: " + step.reads);
    report.note("  floor " + step.floor_cpu.describe("operator"));
  }
  report.note("policy change, ours / floor by round: " + bench::roundRatios(change_rounds));
  report.note("floor with a watch like the operator's open / without, by round: " +
              bench::roundRatios(watch.rounds) + "; the last with the watch " +
              watch.watched.floor_cpu.describe("operator") + ", without " +
              watch.unwatched.floor_cpu.describe("operator"));
  auto kib = [](double b) { return bench::formatValue(b, bench::Unit::kBytes); };
  double per_node = (rss - base_bytes_) / nodes_d;
  double peak_per_node = (peak - base_bytes_) / nodes_d;
  report.note("memory after the first sync, before any policy: " + kib(synced_) + " resident, " +
              kib(synced_peak_) + " at the peak so far");
  report.note("memory: " + kib(base_bytes_) + " on the empty cluster; per node " + kib(per_node) +
              " resident, " + kib(peak_per_node) + " at the peak, " + kib(kept / nodes_d) +
              " kept by the caches, " + kib(static_cast<double>(cached_total) / nodes_d) +
              " of listed JSON (" + std::to_string(vfs_) + " VFs per node)");
  std::string kept_text;
  for (const auto& [what, bytes] : kept_parts.parts) {
    kept_text +=
        std::string(kept_text.empty() ? "" : ", ") + what + " " + kib(static_cast<double>(bytes));
  }
  report.note("kept by the caches: " + kept_text +
              "; a SriovNodeState whose hardware and spec no "
              "other node shares: " +
              kib(distinct_state) + " (500 copies with renamed PFs)");
  double at_10k = base_bytes_ + 10000 * peak_per_node;
  report.note("  at this run's peak per node, 10,000 nodes x " + std::to_string(vfs_) +
              " VFs take at most " + kib(at_10k) + ", " +
              std::to_string(static_cast<int>(100 * at_10k / kOperatorMemoryLimit)) +
              " % of install.yaml's 512 MiB limit (an upper bound: the peak includes the "
              "workers' render buffers, which do not grow with nodes; the slope between two runs "
              "is in docs/figures.md)");
  report.note("listed JSON: " + cached_parts);
  auto floor_cpu = steps.back().floor_cpu;
  report.note("one SriovNodeState write (" + std::to_string(vfs_) + " VFs, " +
              std::to_string(cached[1].bytes / std::max<size_t>(n_, 1) / 1024) +
              " KiB of JSON) cost kube-apiserver " +
              std::to_string(static_cast<int>(1000 * floor_cpu.apiserver / nodes_d)) +
              " ms and etcd " + std::to_string(static_cast<int>(1000 * floor_cpu.etcd / nodes_d)) +
              " ms of CPU (the last change's floor, with its 5 s quiet tail)");
  report.note("idle: " + std::to_string(idle_writes) + " writes in 60 s");
  report.note("etcd holds " + bench::formatValue(etcd_bytes, bench::Unit::kBytes) +
              " after compaction (both namespaces' SriovNodeStates, the Nodes, slices, claims)");
  return report.print();
}

}  // namespace

int main(int argc, char** argv) {
  auto args = parseArgs(argc, argv);
  if (!args) {
    std::fprintf(stderr,
                 "usage: operator_scale [nodes=5000] [vfs-per-node=64, a multiple of 32 up to "
                 "4096] [workers, 1 to 64]\n");
    return 2;
  }
  log::setVerbosity(-1);
  OperatorScale bench(*args);
  // Ours and the floor take turns: the initial rollout (the policy set applied), then five
  // policy changes (the five DeviceAttributes patched to the other tier), whose median round is
  // the figure: one pair of rounds varies by 10-30 % on this machine.
  std::vector<Step> steps = {bench.initialRollout()};
  for (const char* tier : {"silver", "gold", "silver", "gold", "silver"}) {
    steps.push_back(bench.policyChange(tier));
  }
  WatchCost watch = bench.watchCost(3);
  int idle_writes = bench.idleWrites();
  bool met = bench.report(steps, watch, idle_writes);
  return met && idle_writes == 0 ? 0 : 1;
}
