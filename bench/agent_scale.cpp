// Scale driver for the node agent: the real agent on a simulated node with 16 PFs x N VFs
// (default 256: 4,096 VFs), against the real control plane. The bench plays the operator: it
// writes the node's SriovNodeState spec (the render of one node policy, one resource policy and
// one DeviceAttributes, by the operator's own code), first to create and advertise every VF,
// then with a changed attribute of every VF.
// Floors, measured first: the agent's writes of each step, made by the operator's and the
// agent's own code on a copy of the node computed offline, issued one at a time by a tight
// loop against the same API server. Ours comes from the API server's audit log (spec written ->
// the agent's last write) and where the time goes from the agent's
// sriov_dra_agent_phase_seconds.  Usage: agent_scale [vfs-per-pf=256]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "agent/agent.h"
#include "api/names.h"
#include "base/log.h"
#include "base/time.h"
#include "dra/slices.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "host/sync_status.h"
#include "metrics/registry.h"
#include "operator/node_state_reconciler.h"
#include "operator/options.h"
#include "support/figures.h"
#include "support/floor.h"
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
  api::SriovNodeStateStatus discovered;  // the status the agent reports once the VFs exist
  api::SriovNodeStateStatus in_progress;
  api::SriovNodeStateSpec spec_gold, spec_silver;
  std::vector<api::InterfaceExt> pfs;
  // The node's slices with every VF of gold, then of silver.
  std::pair<std::vector<dra::PublishedSlice>, std::vector<dra::PublishedSlice>> slices(
      const std::string& node) const {
    auto gold = dra::buildSlices(node, spec_gold.devices, pfs, {}).slices;
    auto silver = dra::buildSlices(node, spec_silver.devices, pfs, gold).slices;
    return {std::move(gold), std::move(silver)};
  }
};

Offline computeOffline(const api::Node& node, int vfs, const std::string& root) {
  Offline o;
  std::filesystem::remove_all(root);
  bench::mustBeOk(host::writeFixture("many-pfs", root), "writing the offline fixture");
  host::SimulatedKernel kernel(root);
  auto before = host::discover(kernel, kernel);
  bench::mustBeOk(before.status(), "discovering the offline fixture");
  auto t0 = Steady::now();
  for (const auto& pf : before->pfs) {
    bench::mustBeOk(kernel.write("sys/bus/pci/devices/" + pf.pci_address + "/sriov_numvfs",
                                 std::to_string(vfs)),
                    "creating VFs offline");
  }
  o.kernel_seconds = std::chrono::duration<double>(Steady::now() - t0).count();
  auto topology = host::discover(kernel, kernel);
  bench::mustBeOk(topology.status(), "discovering the offline fixture");
  std::filesystem::remove_all(root);

  std::string now = formatRfc3339(std::chrono::system_clock::now());
  host::SyncOutcome outcome;
  auto first = host::syncedStatus({}, {}, 1, *topology, outcome, now);
  auto render = [&](const std::string& tier) {
    return bench::renderFromYaml(node, policiesYaml(vfs) + "---\n" + attributesYaml(tier), first);
  };
  o.spec_gold = render("gold");
  o.spec_silver = render("silver");
  o.in_progress = {};
  o.in_progress.sync_status = "InProgress";
  api::setCondition(o.in_progress.conditions,
                    {"Progressing", "True", "Applying", "16 change(s) to the host", "", 1}, now);
  o.pfs = topology->pfs;
  outcome.advertised = static_cast<int64_t>(o.spec_gold.devices.size());
  o.discovered = host::syncedStatus(first, o.spec_gold, 1, *topology, outcome, now);
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
          op::nodeStateApplyDocument(env.ns(), node, spec, false), op::kFieldManager};
}
bench::Apply statusWrite(const testing::OperatorEnv& env, const std::string& node,
                         const api::SriovNodeStateStatus& status) {
  return {&api::resources::kSriovNodeStates, env.ns(), "status",
          agent::statusApplyDocument(env.ns(), node, status), api::kAgentFieldManager};
}
std::vector<bench::Apply> sliceWrites(const api::Node& node,
                                      const std::vector<dra::PublishedSlice>& slices) {
  std::vector<bench::Apply> out;
  out.reserve(slices.size());
  for (const auto& s : slices) {
    out.push_back({&api::resources::kResourceSlices, "", "",
                   agent::sliceApplyDocument(node.metadata.name, node.metadata.uid, s),
                   api::kAgentFieldManager});
  }
  return out;
}

double timeOne(kube::Client& c, bench::Apply w) {
  std::vector<bench::Apply> one;
  one.push_back(std::move(w));
  return bench::timeApplies(c, one, 1);
}

// Devices of the node's published slices carrying example.com/tier=tier.
size_t published(const kube::Informer<api::ResourceSlice>& slices, const std::string& tier) {
  size_t n = 0;
  for (const auto& s : slices.list()) {
    for (const auto& d : s->spec.devices) {
      auto it = d.attributes.find("example.com/tier");
      n += it != d.attributes.end() && it->second.string_value == tier;
    }
  }
  return n;
}

void waitPublished(const kube::Informer<api::ResourceSlice>& slices, const std::string& tier,
                   size_t total) {
  auto deadline = Steady::now() + std::chrono::minutes(15);
  while (published(slices, tier) < total) {
    if (Steady::now() > deadline) {
      std::fprintf(stderr, "bench: %zu of %zu VFs published with tier %s after 15 minutes\n",
                   published(slices, tier), total, tier.c_str());
      std::exit(2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
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

}  // namespace

int main(int argc, char** argv) {
  int vfs = argc > 1 ? std::stoi(argv[1]) : 256;
  size_t total = 16 * static_cast<size_t>(vfs);
  log::setVerbosity(-1);
  testing::OperatorEnv env("agentscale");
  auto& admin = env.admin();
  api::Node ours_node = nodeObject(env, env.createNode("node-a", {{"nic", "e810"}}));
  api::Node floor_node = nodeObject(env, env.createNode("node-b", {{"nic", "e810"}}));
  std::string shm = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  // Both nodes have the same labels, so the render of one serves both.
  Offline docs = computeOffline(floor_node, vfs, shm + "/sriov-dra-agent-scale-" + env.ns());
  auto [floor_gold, floor_silver] = docs.slices(floor_node.metadata.name);

  // Floors: the agent's writes of each step, one at a time, on node-b's objects.
  {
    std::vector<bench::Apply> spec;
    spec.push_back(specWrite(env, floor_node, docs.spec_gold));
    bench::timeApplies(admin, spec, 1);
  }
  double floor_in_progress =
      timeOne(admin, statusWrite(env, floor_node.metadata.name, docs.in_progress));
  auto cpu0 = bench::Cpu::now(env.cp(), 0);
  double floor_slices_gold = bench::timeApplies(admin, sliceWrites(floor_node, floor_gold), 1);
  auto cpu1 = bench::Cpu::now(env.cp(), 0);
  double floor_status = timeOne(admin, statusWrite(env, floor_node.metadata.name, docs.discovered));
  auto cpu2 = bench::Cpu::now(env.cp(), 0);
  double floor_initial = floor_in_progress + floor_slices_gold + floor_status;
  double floor_republish = bench::timeApplies(admin, sliceWrites(floor_node, floor_silver), 1);

  // Ours: the agent on node-a, the bench writing its spec as the operator would: first empty (a
  // node no policy selects yet), then the policies' render.
  timeOne(admin, specWrite(env, ours_node, {}));
  auto agent = env.startAgent(ours_node.metadata.name, "many-pfs");
  kube::Informer<api::ResourceSlice> slices(
      env.cp().client(), api::resources::kResourceSlices,
      {.field_selector = node::sliceFieldSelector(ours_node.metadata.name)});
  slices.start();
  slices.waitForSync(std::chrono::seconds(30));
  agent->waitReady();
  // Writes the node's spec as the operator would: when the request went out, and when the
  // write was done (the agent's work starts there).
  struct Written {
    WallTime sent, done;
  };
  auto writeSpec = [&](const api::SriovNodeStateSpec& spec) {
    WallTime sent = std::chrono::system_clock::now();
    double seconds = timeOne(admin, specWrite(env, ours_node, spec));
    return Written{sent, sent + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                    std::chrono::duration<double>(seconds))};
  };
  auto phases0 = phaseSeconds(*agent);
  Written gold = writeSpec(docs.spec_gold);
  WallTime t0 = gold.sent;
  WallTime spec_written = gold.done;
  waitPublished(slices, "gold", total);
  auto initial_done = [&] {
    auto events = env.cp().auditEvents();
    auto status = bench::writesOf(events, env.agentUser(), "sriovnodestates", t0);
    auto slice_writes = bench::writesOf(events, env.agentUser(), "resourceslices", t0);
    return std::make_pair(status, slice_writes);
  };
  // The pass ends with the status write that follows the slices.
  std::pair<bench::WriteSpan, bench::WriteSpan> initial;
  for (auto deadline = Steady::now() + std::chrono::minutes(2);;) {
    initial = initial_done();
    if (initial.first.last_completed > initial.second.last_completed || Steady::now() > deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  auto phases1 = phaseSeconds(*agent);
  double kernel = phases1["apply"] - phases0["apply"];
  double initial_total = initial.first.secondsSince(spec_written);
  double initial_ours = initial_total - kernel;

  std::this_thread::sleep_for(std::chrono::seconds(2));  // nothing else is in flight
  auto phases2 = phaseSeconds(*agent);
  Written silver = writeSpec(docs.spec_silver);
  WallTime t1 = silver.sent;
  WallTime silver_written = silver.done;
  waitPublished(slices, "silver", total);
  auto republish = bench::writesOf(env.cp().auditEvents(), env.agentUser(), "resourceslices", t1);
  double republish_ours = republish.secondsSince(silver_written);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  auto phases3 = phaseSeconds(*agent);
  auto change_events = env.cp().auditEvents();
  auto after_change = bench::writesOf(change_events, env.agentUser(), "", t1);
  auto change_status = bench::writesOf(change_events, env.agentUser(), "sriovnodestates", t1);

  size_t cached_json =
      bench::listJsonBytes(admin, api::resources::kResourceSlices, "",
                           {.field_selector = node::sliceFieldSelector(ours_node.metadata.name)}) +
      bench::listJsonBytes(admin, api::resources::kSriovNodeStates, env.ns(),
                           {.field_selector = "metadata.name=" + ours_node.metadata.name});

  bench::Report report("agent scale: 16 PFs x " + std::to_string(vfs) + " VFs (" +
                       std::to_string(total) + " VFs) on one node");
  report.add({"agent_initial_pass", "initial pass: VFs created, advertised, status written",
              initial_ours, floor_initial, bench::Unit::kSeconds,
              "1 + " + std::to_string(floor_gold.size()) +
                  " slice + 1 status applies, one at a time (the kernel's time taken out of ours)",
              2.0});
  report.add({"agent_republish", "spec change touching every VF, republished", republish_ours,
              floor_republish, bench::Unit::kSeconds,
              std::to_string(floor_silver.size()) + " slice applies, one at a time", 1.5});
  report.add({"agent_memory", "agent resident memory vs JSON of its cached objects",
              static_cast<double>(agent->residentKiB()) * 1024.0, static_cast<double>(cached_json),
              bench::Unit::kBytes, "its SriovNodeState and ResourceSlices as listed"});
  report.note("initial pass: " + bench::formatValue(initial_total, bench::Unit::kSeconds) +
              " from the spec written to the agent's last write, of which the simulated kernel " +
              bench::formatValue(kernel, bench::Unit::kSeconds) + " (" +
              bench::formatValue(docs.kernel_seconds, bench::Unit::kSeconds) +
              " uncontended); agent writes: " + std::to_string(initial.first.count) + " status, " +
              std::to_string(initial.second.count) + " ResourceSlice");
  report.note("  where the time goes: " + whereTimeGoes(phases0, phases1, initial_total));
  double change_total = after_change.secondsSince(silver_written);
  report.note(
      "spec change: " + bench::formatValue(change_total, bench::Unit::kSeconds) +
      " from the spec written to the agent's last write (the status after the slices); " +
      std::to_string(after_change.count) + " agent writes: " + std::to_string(change_status.count) +
      " status, " + std::to_string(republish.count) + " ResourceSlice, " +
      std::to_string(after_change.count - change_status.count - republish.count) + " Event");
  report.note("  where the time goes: " + whereTimeGoes(phases2, phases3, change_total));
  auto per_slice = cpu1 - cpu0;
  auto per_status = cpu2 - cpu1;
  double slices_d = static_cast<double>(floor_gold.size());
  report.note("one ResourceSlice write (128 devices) cost kube-apiserver " +
              std::to_string(static_cast<int>(1000 * per_slice.apiserver / slices_d)) +
              " ms and etcd " + std::to_string(static_cast<int>(1000 * per_slice.etcd / slices_d)) +
              " ms of CPU; one status write with " + std::to_string(total) +
              " VFs kube-apiserver " +
              std::to_string(static_cast<int>(1000 * per_status.apiserver)) + " ms and etcd " +
              std::to_string(static_cast<int>(1000 * per_status.etcd)) + " ms");
  report.note("floor parts: InProgress status " +
              bench::formatValue(floor_in_progress, bench::Unit::kSeconds) + ", slices " +
              bench::formatValue(floor_slices_gold, bench::Unit::kSeconds) + ", status with " +
              std::to_string(total) + " VFs " +
              bench::formatValue(floor_status, bench::Unit::kSeconds));
  slices.stop();
  return report.print() ? 0 : 1;
}
