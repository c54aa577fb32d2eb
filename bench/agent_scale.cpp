// Scale driver for the node agent: the real agent on a simulated node with 16 PFs x N VFs
// (default 256: 4,096 VFs), against the real control plane. The bench plays the operator: it
// writes the node's SriovNodeState spec (the render of one node policy, one resource policy and
// one DeviceAttributes, by the operator's own code), first to create and advertise every VF,
// then with a changed attribute of every VF, and back.
// Floors: the agent's writes of each step, made by the operator's and the agent's own code on a
// copy of the node computed offline, issued by the cheapest client: slices created, then updated
// under the resourceVersion of its own last write (never read back), metadata-only answers, no
// watch, as many writers at once as the server rewards (of 1, 2, 4 and 8, the fewest within 5 % of
// the fastest for the slices), on nodes of their own. Ours and the floor take turns on the same
// server. Ours comes from the API server's audit log (spec written -> the agent's last write), less
// the simulated kernel's own time for the same work offline, so whatever the agent adds around the
// kernel counts; where the time goes from the agent's sriov_dra_agent_phase_seconds. Memory: what
// the agent holds for its VFs (resident at the end less resident before any VF) against the JSON
// of what it caches. Usage: agent_scale [vfs-per-pf=256]
#include <chrono>
#include <cstdio>
#include <thread>

#include "api/names.h"
#include "base/log.h"
#include "base/time.h"
#include "dra/slices.h"
#include "kube/config.h"
#include "metrics/registry.h"
#include "node/agent/agent.h"
#include "operator/node_state_reconciler.h"
#include "operator/options.h"
#include "support/figures.h"
#include "support/floor.h"
#include "support/host_fixture.h"
#include "support/metrics_text.h"
#include "support/operator_env.h"
#include "support/render.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;

namespace {

constexpr const char* kPhases[] = {"discover",     "plan",         "in_use",      "apply",
                                   "slices_build", "slices_write", "status_write"};

std::string policiesYaml(int vfs) {
  return "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodePolicy\n"
         "metadata: {name: e810}\nspec: {resourceName: e810, numVfs: " +
         std::to_string(vfs) +
         ", nodeSelector: {nic: e810}, nicSelector: {vendor: \"8086\"}}\n---\n"
         "apiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: SriovResourcePolicy\n"
         "metadata: {name: all}\nspec: {configs: [{deviceAttributesSelector: {matchLabels: "
         "{set: tier}}}]}\n";
}

std::string attributesYaml(const std::string& tier) {
  return "apiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: DeviceAttributes\n"
         "metadata: {name: tier, labels: {set: tier}}\nspec: {attributes: "
         "{example.com/tier: {string: " +
         tier + "}}}\n";
}

// The node as the operator and the agent would make it, computed offline on a fixture of its
// own: what the operator writes for each tier, what the agent reports and publishes.
struct Offline {
  double kernel_seconds = 0;             // the simulated kernel creating the VFs, uncontended
  double netlink_seconds = 0;            // its rtnetlink answer for the node's netdevs
  api::SriovNodeStateStatus discovered;  // the status the agent reports once the VFs exist
  api::SriovNodeStateStatus in_progress;
  api::SriovNodeStateSpec spec_gold, spec_silver;
  std::vector<api::InterfaceExt> pfs;
  // The node's slices with every VF of gold, then of silver.
  std::pair<std::vector<dra::PublishedSlice>, std::vector<dra::PublishedSlice>> slices(
      const std::string& node) const {
    auto gold = dra::buildSlices(node, spec_gold.devices, pfs, {}).slices;
    auto silver = dra::buildSlices(node, spec_silver.devices, pfs, dra::summaries(gold)).slices;
    return {std::move(gold), std::move(silver)};
  }
};

Offline computeOffline(const api::Node& node, int vfs, const std::string& root) {
  Offline o;
  auto host = bench::discoverFixture("many-pfs", vfs, root);
  o.kernel_seconds = host.kernel_seconds;
  o.netlink_seconds = host.netlink_seconds;
  auto first = bench::agentStatus(host.topology, {}, {});
  auto render = [&](const std::string& tier) {
    return bench::renderFromYaml(node, policiesYaml(vfs) + "---\n" + attributesYaml(tier), first);
  };
  o.spec_gold = render("gold");
  o.spec_silver = render("silver");
  o.in_progress = {};
  o.in_progress.sync_status = "InProgress";
  api::setCondition(o.in_progress.conditions,
                    {"Progressing", "True", "Applying", "16 change(s) to the host", "", 1},
                    formatRfc3339(std::chrono::system_clock::now()));
  o.pfs = host.topology.pfs;
  o.discovered = bench::agentStatus(host.topology, first, o.spec_gold);
  return o;
}

api::Node nodeObject(const testing::OperatorEnv& env, const std::string& name) {
  auto got = env.admin().get(kube::resources::kNodes, "", name);
  bench::mustBeOk(got.status(), "reading Node " + name);
  auto node = api::Node::decode(*got);
  bench::mustBeOk(node.status(), "decoding Node " + name);
  return *node;
}

bench::Apply specWrite(const testing::OperatorEnv& env, const api::Node& node,
                       const api::SriovNodeStateSpec& spec) {
  return {&api::resources::kSriovNodeStates, env.ns(), "",
          bench::nodeStateObject(env.ns(), node, op::encodeSpec(spec)), op::kFieldManager};
}
bench::Apply statusWrite(const testing::OperatorEnv& env, const std::string& node,
                         const api::SriovNodeStateStatus& status) {
  return {&api::resources::kSriovNodeStates, env.ns(), "status",
          agent::statusDocument(env.ns(), node, status), api::kAgentFieldManager};
}
std::vector<json::Document> sliceWrites(const api::Node& node,
                                        const std::vector<dra::PublishedSlice>& slices) {
  std::vector<json::Document> out;
  out.reserve(slices.size());
  for (const auto& s : slices)
    out.push_back(agent::sliceDocument(node.metadata.name, node.metadata.uid, s));
  return out;
}

double seconds(WallTime since) {
  return std::chrono::duration<double>(std::chrono::system_clock::now() - since).count();
}

double timeOne(kube::Client& c, bench::Apply w) {
  std::vector<bench::Apply> one;
  one.push_back(std::move(w));
  return bench::timeApplies(c, one, 1);
}

// Devices of the node's published slices carrying example.com/tier=tier.
size_t published(kube::Client& client, const std::string& node, const std::string& tier) {
  auto list = client.listAll(api::resources::kResourceSlices, "",
                             {.field_selector = agent::sliceFieldSelector(node)});
  bench::mustBeOk(list.status(), "listing the node's slices");
  size_t n = 0;
  for (const auto& item : (*list)["items"].GetArray()) {
    const json::Value* devices = json::at(item, {"spec", "devices"});
    if (devices == nullptr || !devices->IsArray()) continue;
    for (const auto& d : devices->GetArray()) {
      const json::Value* t = json::at(d, {"attributes", "example.com/tier"});
      n += t != nullptr && json::stringOr(*t, "string") == tier ? 1 : 0;
    }
  }
  return n;
}

// The agent's pass after a spec written at `since`: its slice writes and the status write that
// ends the pass (the first after the last of `slices` slice writes), read from the audit log as
// it grows; exits when the pass takes longer than 15 minutes.
struct Pass {
  bench::WriteSpan slices;
  bench::WriteSpan status;  // every status write since `since`
  WallTime end;             // the answer to the last status write
};
Pass awaitPass(bench::AuditLog& audit, const std::string& agent, WallTime since, int slices) {
  auto deadline = Steady::now() + std::chrono::minutes(15);
  for (;;) {
    const auto& events = audit.poll();
    Pass p{bench::writesOf(events, agent, "resourceslices", since),
           bench::writesOf(events, agent, "sriovnodestates", since),
           {}};
    if (p.slices.count >= slices && p.status.count > 0 &&
        p.status.last_completed > p.slices.last_completed) {
      p.end = p.status.last_completed;
      return p;
    }
    if (Steady::now() > deadline) {
      std::fprintf(stderr, "bench: the agent wrote %d of %d slices in 15 minutes\n", p.slices.count,
                   slices);
      std::exit(2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void mustPublish(kube::Client& client, const std::string& node, const std::string& tier,
                 size_t total) {
  size_t n = published(client, node, tier);
  if (n == total) return;
  std::fprintf(stderr, "bench: %zu of %zu VFs of %s published with tier %s\n", n, total,
               node.c_str(), tier.c_str());
  std::exit(2);
}

std::map<std::string, double> phaseSeconds(const testing::OperatorProcess& agent) {
  std::string text = agent.metrics();
  std::map<std::string, double> out;
  for (const char* p : kPhases) {
    double v = testing::sampleValue(
        text, std::string("sriov_dra_agent_phase_seconds_sum{phase=\"") + p + "\"}");
    out[p] = std::isnan(v) ? 0 : v;
  }
  return out;
}

// "discover 0.13 s, apply 61.2 s (the simulated kernel), ..., other 0.40 s" for one step.
std::string whereTimeGoes(const std::map<std::string, double>& before,
                          const std::map<std::string, double>& after, double total) {
  std::string out;
  double accounted = 0;
  for (const char* p : kPhases) {
    double d = after.at(p) - before.at(p);
    if (d <= 0) continue;
    accounted += d;
    out += std::string(out.empty() ? "" : ", ") + p + " " +
           bench::formatValue(d, bench::Unit::kSeconds);
  }
  return out + ", other (watch delivery, decoding, queueing) " +
         bench::formatValue(std::max(0.0, total - accounted), bench::Unit::kSeconds);
}

// One step of the bench: ours (the agent's pass after a spec write) and the floor's writes.
struct Step {
  std::string what;
  double ours = 0, floor = 0;
  double floor_notified = 0;  // the floor's spec written -> its watch's event
  Pass pass;
  WallTime written;  // the spec
  double total = 0;  // spec written -> the agent's last write
  std::string where;
  bench::Cpu ours_cpu, floor_cpu;
  bench::Cpu floor_slices_cpu;  // the floor's slice writes alone
};

// The agent connected as a node's agent would be (its ServiceAccount, a token bound to the
// node): the API server authorizes, admits (the agent's ValidatingAdmissionPolicy) and queues
// the floor's writes alike.
std::shared_ptr<kube::Client> agentClient(testing::OperatorEnv& env, const api::Node& node) {
  auto config = kube::loadKubeconfigFiles(
      {env.cp().serviceAccountKubeconfig(env.ns(), "sriov-dra-agent", node.metadata.name)}, "");
  bench::mustBeOk(config.status(), "loading the agent's kubeconfig");
  auto client = kube::Client::create(*config);
  bench::mustBeOk(client.status(), "connecting as the agent");
  return *client;
}

// The bench in three parts: set-up (the nodes, the offline render, the floor's writers, the agent
// started), the rounds (the initial pass, the republishes, the floor with the agent's watch),
// then the report.
class AgentScale {
 public:
  explicit AgentScale(int vfs);
  Step initialPass();
  std::vector<Step> republish(int rounds);
  Step floorWithSliceWatch(const std::string& tier);
  bool report(const Step& initial, const std::vector<Step>& republish, const Step& watched);

 private:
  // Writes the node's spec as the operator would; returns when the write was done (the agent's
  // work starts there).
  WallTime writeSpecOf(const api::Node& node, const api::SriovNodeStateSpec& spec);
  // The floor learns of its spec as the agent must: from a watch of its node's SriovNodeState
  // (the agent's token), each event parsed as JSON, not decoded into types.
  void watchFloorSpec();
  void awaitFloorSpec();
  void oursStep(Step& step, const api::SriovNodeStateSpec& spec, const std::string& tier);

  const int vfs_;
  const size_t total_;
  testing::OperatorEnv env_{"agentscale"};
  kube::Client& admin_ = env_.admin();
  // The nodes have the same labels, so the render of one serves all.
  api::Node ours_node_ = nodeObject(env_, env_.createNode("node-a", {{"nic", "e810"}}));
  api::Node floor_node_ = nodeObject(env_, env_.createNode("node-b", {{"nic", "e810"}}));
  api::Node initial_node_ = nodeObject(env_, env_.createNode("node-c", {{"nic", "e810"}}));
  Offline docs_;
  std::map<std::string, std::vector<dra::PublishedSlice>> floor_slices_;
  std::shared_ptr<kube::Client> floor_client_ = agentClient(env_, floor_node_);
  std::shared_ptr<kube::Client> initial_client_ = agentClient(env_, initial_node_);
  bench::Replacer floor_slice_writer_{*floor_client_, api::resources::kResourceSlices,
                                      api::kAgentFieldManager};
  bench::Replacer initial_slice_writer_{*initial_client_, api::resources::kResourceSlices,
                                        api::kAgentFieldManager};
  int slice_count_ = 0;
  bench::WriterSweep sweep_;
  std::unique_ptr<bench::AuditLog> audit_;
  std::unique_ptr<testing::OperatorProcess> agent_;
  double base_bytes_ = 0;  // the agent's resident memory before any VF
  int64_t floor_generation_ = 0;
  std::unique_ptr<kube::Watch> floor_watch_;
};

AgentScale::AgentScale(int vfs)
    : vfs_(vfs),
      total_(16 * static_cast<size_t>(vfs)),
      docs_(computeOffline(floor_node_, vfs,
                           bench::scratchDir("sriov-dra-agent-scale-" + env_.ns()))) {
  auto [gold, silver] = docs_.slices(floor_node_.metadata.name);
  slice_count_ = static_cast<int>(gold.size());
  floor_slices_ = {{"gold", std::move(gold)}, {"silver", std::move(silver)}};
  // The floor's slice writers: as many as the server rewards, the fewest within 5 % of the
  // fastest republish (gold -> silver -> gold ...) of node-b's slices, created first with as
  // many writers as the agent uses.
  timeOne(admin_, specWrite(env_, floor_node_, docs_.spec_gold));
  timeOne(*floor_client_, statusWrite(env_, floor_node_.metadata.name, docs_.discovered));
  floor_slice_writer_.time(sliceWrites(floor_node_, floor_slices_["gold"]), 4);
  sweep_ = bench::sweepWriters({1, 2, 4, 8}, [&](int c, size_t round) {
    const char* tier = round % 2 == 0 ? "silver" : "gold";
    return floor_slice_writer_.time(sliceWrites(floor_node_, floor_slices_[tier]), c);
  });
  floor_slice_writer_.time(sliceWrites(floor_node_, floor_slices_["gold"]), sweep_.writers);

  // Ours: the agent on node-a, the bench writing its spec as the operator would: first empty (a
  // node no policy selects yet), then the policies' render.
  audit_ = std::make_unique<bench::AuditLog>(env_.cp());
  timeOne(admin_, specWrite(env_, ours_node_, {}));
  agent_ = env_.startAgent(ours_node_.metadata.name, "many-pfs");
  agent_->waitReady();
  awaitPass(*audit_, env_.agentUser(), WallTime{}, 0);
  // What the agent takes before it has any VF: its binary, libraries, threads, the node's PFs.
  base_bytes_ = static_cast<double>(agent_->residentKiB()) * 1024.0;
  watchFloorSpec();
}

WallTime AgentScale::writeSpecOf(const api::Node& node, const api::SriovNodeStateSpec& spec) {
  WallTime sent = std::chrono::system_clock::now();
  double seconds = timeOne(admin_, specWrite(env_, node, spec));
  return sent + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                    std::chrono::duration<double>(seconds));
}

void AgentScale::watchFloorSpec() {
  auto state = admin_.get(api::resources::kSriovNodeStates, env_.ns(), floor_node_.metadata.name);
  bench::mustBeOk(state.status(), "reading node-b's SriovNodeState");
  auto meta = kube::ObjectMeta::decode(*state);
  floor_generation_ = meta.generation;
  auto watch = floor_client_->watch(api::resources::kSriovNodeStates, env_.ns(),
                                    {.field_selector = "metadata.name=" + floor_node_.metadata.name,
                                     .resource_version = meta.resource_version});
  bench::mustBeOk(watch.status(), "watching node-b's SriovNodeState");
  floor_watch_ = std::move(*watch);
}

void AgentScale::awaitFloorSpec() {
  for (;;) {
    auto event = floor_watch_->next(std::chrono::minutes(1));
    if (!event.ok() || !*event) {
      std::fprintf(stderr, "bench: the watch of node-b's SriovNodeState ended\n");
      std::exit(2);
    }
    int64_t generation = kube::ObjectMeta::decode((*event)->object()).generation;
    if (generation > floor_generation_) {
      floor_generation_ = generation;
      return;
    }
  }
}

void AgentScale::oursStep(Step& step, const api::SriovNodeStateSpec& spec,
                          const std::string& tier) {
  auto phases_before = phaseSeconds(*agent_);
  auto c0 = bench::Cpu::now(env_.cp(), agent_->pid());
  step.written = writeSpecOf(ours_node_, spec);
  step.pass = awaitPass(*audit_, env_.agentUser(), step.written, slice_count_);
  step.ours_cpu = bench::Cpu::now(env_.cp(), agent_->pid()) - c0;
  step.total = std::chrono::duration<double>(step.pass.end - step.written).count();
  step.where = whereTimeGoes(phases_before, phaseSeconds(*agent_), step.total);
  mustPublish(admin_, ours_node_.metadata.name, tier, total_);
}

// The initial pass: VFs created, advertised, status written. The floor: node-c's writes, the
// slices created with the floor's writers.
Step AgentScale::initialPass() {
  Step initial{"initial pass"};
  oursStep(initial, docs_.spec_gold, "gold");
  initial.ours = initial.total - docs_.kernel_seconds;
  const std::string& name = initial_node_.metadata.name;
  timeOne(admin_, specWrite(env_, initial_node_, docs_.spec_gold));
  // The version the agent's cache would hold after the operator's write.
  auto state = admin_.get(api::resources::kSriovNodeStates, env_.ns(), name);
  bench::mustBeOk(state.status(), "reading node-c's SriovNodeState");
  bench::Replacer status_writer(*initial_client_, api::resources::kSriovNodeStates,
                                api::kAgentFieldManager, "status");
  status_writer.know(kube::objectKey(env_.ns(), name),
                     kube::ObjectMeta::decode(*state).resource_version);
  auto statusDocs = [&](const api::SriovNodeStateStatus& status) {
    std::vector<json::Document> one;
    one.push_back(agent::statusDocument(env_.ns(), name, status));
    return one;
  };
  auto c0 = bench::Cpu::now(env_.cp(), 0);
  initial.floor = status_writer.time(statusDocs(docs_.in_progress), 1);
  initial.floor += initial_slice_writer_.time(sliceWrites(initial_node_, docs_.slices(name).first),
                                              sweep_.writers);
  initial.floor += status_writer.time(statusDocs(docs_.discovered), 1);
  initial.floor_cpu = bench::Cpu::now(env_.cp(), 0) - c0;
  return initial;
}

// Republishing every VF, ours and the floor taking turns; the median round is the figure
// (single rounds move by up to 40 % on two shared cores; the median of five moved by 0.4
// between runs).
std::vector<Step> AgentScale::republish(int rounds) {
  std::vector<Step> out;
  for (int round = 0; round < rounds; ++round) {
    const std::string tier = round % 2 == 0 ? "silver" : "gold";
    Step step{std::string("republish with ") + tier};
    const auto& spec = tier == "gold" ? docs_.spec_gold : docs_.spec_silver;
    oursStep(step, spec, tier);
    step.ours = step.pass.slices.secondsSince(step.written);
    auto c0 = bench::Cpu::now(env_.cp(), 0);
    WallTime written = writeSpecOf(floor_node_, spec);
    awaitFloorSpec();
    step.floor_notified = seconds(written);
    auto c1 = bench::Cpu::now(env_.cp(), 0);
    floor_slice_writer_.time(sliceWrites(floor_node_, floor_slices_[tier]), sweep_.writers);
    step.floor = seconds(written);
    step.floor_cpu = bench::Cpu::now(env_.cp(), 0) - c0;
    step.floor_slices_cpu = bench::Cpu::now(env_.cp(), 0) - c1;
    mustPublish(admin_, floor_node_.metadata.name, tier, total_);
    out.push_back(std::move(step));
  }
  return out;
}

// What the agent's watch of its slices costs the server (metadata only; it completes its own
// writes from what it wrote): one more floor republish with such a watch open on node-b (the
// floor watches its SriovNodeState in every round).
Step AgentScale::floorWithSliceWatch(const std::string& tier) {
  Step watched{"floor with the agent's watch of its slices"};
  kube::Informer<kube::Unstructured> slices(
      env_.cp().client(), api::resources::kResourceSlices,
      {.field_selector = agent::sliceFieldSelector(floor_node_.metadata.name),
       .watch_metadata_only = true});
  slices.setCompletion([](const kube::ObjectMeta& meta, const auto&) {
    return std::make_shared<const kube::Unstructured>(kube::Unstructured{meta, ""});
  });
  slices.start();
  if (!slices.waitForSync(std::chrono::minutes(1))) {
    std::fprintf(stderr, "bench: the watch of node-b's slices did not sync\n");
    std::exit(2);
  }
  auto c0 = bench::Cpu::now(env_.cp(), 0);
  watched.floor =
      floor_slice_writer_.time(sliceWrites(floor_node_, floor_slices_[tier]), sweep_.writers);
  watched.floor_cpu = bench::Cpu::now(env_.cp(), 0) - c0;
  slices.stop();
  return watched;
}

bool AgentScale::report(const Step& initial, const std::vector<Step>& republish,
                        const Step& watched) {
  const int writers = sweep_.writers;
  std::vector<bench::Round> republish_rounds;
  republish_rounds.reserve(republish.size());
  for (const auto& r : republish) republish_rounds.push_back({r.ours, r.floor});
  bench::Round median = bench::medianRound(republish_rounds);
  size_t cached_json =
      bench::listJsonBytes(
          admin_, api::resources::kResourceSlices, "",
          {.field_selector = agent::sliceFieldSelector(ours_node_.metadata.name)}) +
      bench::listJsonBytes(admin_, api::resources::kSriovNodeStates, env_.ns(),
                           {.field_selector = "metadata.name=" + ours_node_.metadata.name});

  auto secs = [](double v) { return bench::formatValue(v, bench::Unit::kSeconds); };
  bench::Report report("agent scale: 16 PFs x " + std::to_string(vfs_) + " VFs (" +
                       std::to_string(total_) + " VFs) on one node");
  report.add({"agent_initial_pass", "initial pass: VFs created, advertised, status written",
              initial.ours, initial.floor, bench::Unit::kSeconds,
              "2 status updates, " + std::to_string(slice_count_) + " slice creates, " +
                  std::to_string(writers) +
                  " at a time (the kernel's offline time taken out of ours)",
              2.0});
  report.add({"agent_republish",
              "spec change touching every VF, republished, the median of " +
                  std::to_string(republish.size()) + " rounds",
              median.ours, median.floor, bench::Unit::kSeconds,
              std::to_string(slice_count_) + " slice updates, " + std::to_string(writers) +
                  " at a time, metadata-only answers, no watch",
              1.1});
  double rss = static_cast<double>(agent_->residentKiB()) * 1024.0;
  report.add({"agent_memory", "agent resident memory for its VFs (above its size before any VF)",
              rss - base_bytes_, static_cast<double>(cached_json), bench::Unit::kBytes,
              "JSON of its SriovNodeState and ResourceSlices as listed", 2.0});
  report.note("agent memory: " + bench::formatValue(rss, bench::Unit::kBytes) + " resident, " +
              bench::formatValue(base_bytes_, bench::Unit::kBytes) +
              " of it before any VF (after its first pass over the node's 16 PFs)");
  report.note("floor slice writers (one republish each): " + sweep_.text + "; the floor uses " +
              std::to_string(writers) + ", the agent " + std::to_string(agent::kSliceWriters));
  report.note("initial pass: " + secs(initial.total) +
              " from the spec written to the agent's last write; the simulated kernel takes " +
              secs(docs_.kernel_seconds) + " offline for the same VFs; agent writes: " +
              std::to_string(initial.pass.status.count) + " status, " +
              std::to_string(initial.pass.slices.count) + " ResourceSlice");
  auto noteWhere = [&](const Step& step) {
    report.note("  where the time goes: " + step.where);
    report.note("  ours " + step.ours_cpu.describe("agent"));
    report.note("  floor " + step.floor_cpu.describe("agent"));
  };
  noteWhere(initial);
  for (const auto& r : republish) {
    report.note(
        r.what + ": the slices " + secs(r.ours) + " from the spec written (the first " +
        secs(std::chrono::duration<double>(r.pass.slices.first_received - r.written).count()) +
        " after it, the last " + secs(r.pass.slices.seconds()) + " after the first), floor " +
        secs(r.floor) + " (its watch's event " + secs(r.floor_notified) +
        " after the spec); the pass " + secs(r.total) + " to the agent's last write (" +
        std::to_string(r.pass.status.count) + " status, " + std::to_string(r.pass.slices.count) +
        " ResourceSlice writes)");
    noteWhere(r);
  }
  report.note("republish, ours / floor by round: " + bench::roundRatios(republish_rounds));
  report.note("discover includes the simulated kernel's rtnetlink answer, read from its files: " +
              secs(docs_.netlink_seconds) +
              " offline (this kernel dumps as many interfaces in about 30 ms: discovery_bench)");
  report.note("floor's slice writes with a watch like the agent's of its slices open: " +
              secs(watched.floor) + ", " + watched.floor_cpu.describe("agent"));
  auto per_slice = republish.back().floor_slices_cpu;
  double slices_d = static_cast<double>(slice_count_);
  report.note("one ResourceSlice write (128 devices) cost kube-apiserver " +
              std::to_string(static_cast<int>(1000 * per_slice.apiserver / slices_d)) +
              " ms and etcd " + std::to_string(static_cast<int>(1000 * per_slice.etcd / slices_d)) +
              " ms of CPU");
  return report.print();
}

}  // namespace

int main(int argc, char** argv) {
  auto vfs = bench::countArgument(argc, argv, 256, 1, 1024);
  if (!vfs) {
    std::fprintf(stderr, "usage: agent_scale [vfs-per-pf=256, 1 to 1024]\n");
    return 2;
  }
  log::setVerbosity(-1);
  constexpr int kRounds = 9;
  AgentScale bench(static_cast<int>(*vfs));
  Step initial = bench.initialPass();
  std::vector<Step> republish = bench.republish(kRounds);
  // The tier the last round did not publish, so the floor's write changes every slice.
  Step watched = bench.floorWithSliceWatch(kRounds % 2 == 0 ? "silver" : "gold");
  return bench.report(initial, republish, watched) ? 0 : 1;
}
