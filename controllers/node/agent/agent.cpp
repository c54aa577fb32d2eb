#include "node/agent/agent.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <utility>

#include "api/names.h"
#include "base/files.h"
#include "base/log.h"
#include "base/process.h"
#include "base/strings.h"
#include "base/time.h"
#include "dra/slices.h"
#include "host/apply.h"
#include "host/discovery.h"
#include "host/sync_status.h"
#include "metrics/registry.h"

namespace sriovdra::agent {
namespace {

prometheus::Family<prometheus::Gauge>& nodeVfsGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_node_vfs")
                       .Help(
                           "VFs on this node: desired (the SriovNodeState spec), present (in "
                           "the kernel) and advertised (in ResourceSlices)")
                       .Register(metrics::registry());
  return f;
}

prometheus::Family<prometheus::Gauge>& syncGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_node_sync_status")
                       .Help("1 for this node's current syncStatus (Succeeded, InProgress, Failed)")
                       .Register(metrics::registry());
  return f;
}

prometheus::Family<prometheus::Histogram>& phaseHistogram() {
  static auto& f = prometheus::BuildHistogram()
                       .Name("sriov_dra_agent_phase_seconds")
                       .Help(
                           "Time the agent's passes spend per phase: discover (sysfs, netlink), "
                           "plan, in_use (asking the API server and the CDI specs which VFs are "
                           "in use), firmware (mstconfig reading and setting Mellanox firmware), "
                           "apply (the kernel and drivers carrying out host changes), "
                           "slices_build, slices_write, status_write (API requests)")
                       .Register(metrics::registry());
  return f;
}

// Observes the time from construction to destruction under sriov_dra_agent_phase_seconds{phase}.
class PhaseTimer {
 public:
  explicit PhaseTimer(const char* phase) : phase_(phase) {}
  ~PhaseTimer() {
    static const auto kBuckets = metrics::exponentialBuckets(0.001, 2, 16);  // 1 ms .. 33 s
    phaseHistogram()
        .Add({{"phase", phase_}}, kBuckets)
        .Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  const char* phase_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

template <typename Fn>
auto timed(const char* phase, Fn&& fn) {
  PhaseTimer timer(phase);
  return fn();
}

using kube::ReconcileResult;
constexpr const char* kKey = "node";

// The GUID pool file: none when it does not exist, else its entries or why they are unusable.
Result<std::optional<std::vector<host::GuidPoolEntry>>> loadGuidPool(const std::string& path) {
  using Pool = std::optional<std::vector<host::GuidPoolEntry>>;
  if (path.empty()) return Pool();
  auto text = readFile(path, 1u << 20);
  if (!text.ok() && text.status().sysErrno() == ENOENT) return Pool();
  const std::string advice = " (fix the file, or remove it for GUIDs derived from node, PF and VF)";
  if (!text.ok()) {
    return Status(Code::kIo, "IB GUID pool " + path + ": " + text.status().message() + advice);
  }
  auto entries = host::parseGuidPool(*text);
  if (!entries.ok()) {
    return Status(Code::kInvalidArgument, path + ": " + entries.status().message() + advice);
  }
  SDRA_LOG_INFO << "InfiniBand VF GUIDs from the pool " << path << " (" << entries->size()
                << " PF(s))";
  return Pool(std::move(*entries));
}

}  // namespace

Agent::Agent(std::shared_ptr<kube::Client> client, std::shared_ptr<host::Sysfs> sysfs,
             std::shared_ptr<host::Netlink> netlink, std::shared_ptr<host::Firmware> firmware,
             std::shared_ptr<host::Rebooter> rebooter, std::shared_ptr<const host::Rdma> rdma,
             node::LocalState& local, AgentOptions options, kube::EventRecorder& events)
    : client_(std::move(client)),
      sysfs_(std::move(sysfs)),
      netlink_(std::move(netlink)),
      firmware_(std::move(firmware)),
      rebooter_(std::move(rebooter)),
      rdma_(std::move(rdma)),
      local_(local),
      options_(std::move(options)),
      guids_(options_.node_name, loadGuidPool(options_.ib_guid_pool)),
      events_(events),
      state_(local.nodeStates()),
      controller_("sriov-dra-agent", [this](const std::string& k) { return reconcile(k); }),
      slices_(client_, options_.node_name, [this] { kick(); }) {
  state_.addHandlers({.on_add = [this](const auto&) { kick(); },
                      .on_update =
                          [this](const auto& o, const auto& n) {
                            if (o->metadata.generation != n->metadata.generation ||
                                o->metadata.annotation(api::kRebootGrantAnnotation) !=
                                    n->metadata.annotation(api::kRebootGrantAnnotation))
                              kick();
                          },
                      .on_delete = [this](const auto&, bool) { kick(); }});
}

void Agent::kick() { controller_.queue().add(kKey); }

Agent::~Agent() { stop(); }

void Agent::start() {
  slices_.start();
  controller_.start();
  kick();
}

void Agent::stop() {
  controller_.stop();
  slices_.stop();
}

bool Agent::ready() const {
  std::lock_guard lock(mu_);
  return ready_;
}

void Agent::setFirmwareChanges(bool on) {
  if (firmware_changes_.exchange(on) == on) return;
  SDRA_LOG_INFO << "Mellanox firmware changes " << (on ? "on" : "off (disablePlugins: mellanox)");
  kick();
}

bool Agent::reconciledOnce() const {
  std::lock_guard lock(mu_);
  return reconciled_once_;
}

std::set<std::string> Agent::loadRecord() const {
  std::set<std::string> out;
  auto text = readFile(options_.state_dir + "/configured-pfs.json");
  if (!text.ok()) return out;
  auto doc = json::parse(*text);
  if (!doc.ok() || !doc->IsArray()) {
    SDRA_LOG_ERROR << "ignoring a corrupt " << options_.state_dir << "/configured-pfs.json";
    return out;
  }
  for (const auto& v : doc->GetArray()) {
    if (v.IsString()) out.insert(v.GetString());
  }
  return out;
}

Status Agent::saveRecord(const std::set<std::string>& record) const {
  json::Document doc(rapidjson::kArrayType);
  for (const auto& pci : record)
    doc.PushBack(json::str(pci, doc.GetAllocator()), doc.GetAllocator());
  return writeStateFile("configured-pfs.json", json::dump(doc) + "\n");
}

Status Agent::writeStateFile(const std::string& name, std::string_view content) const {
  std::error_code ec;
  std::filesystem::create_directories(options_.state_dir, ec);
  return writeFileAtomic(options_.state_dir + "/" + name, content);
}

Result<ReconcileResult> Agent::reconcile(const std::string&) {
  // The node's objects grow by about 350 bytes of JSON per VF; give back what parsing and
  // encoding them left free, so the resident size is the live data (measured in bench/).
  struct TrimAfter {
    ~TrimAfter() { trimHeap(); }
  } trim_after;
  // Until both caches are filled, "no state" and "no slice" would be guesses: a slice published
  // against an empty cache is a needless write, a missing state a false message. The key is
  // retried until then.
  if (!local_.synced() || !slices_.synced())
    return ReconcileResult::after(std::chrono::milliseconds(100));
  auto state = state_.get(options_.namespace_, options_.node_name);
  if (!state) {
    SDRA_VLOG(1) << "no SriovNodeState for " << options_.node_name
                 << " yet (the operator creates it)";
    return ReconcileResult::after(options_.resync_period);
  }
  std::optional<Converged> last = std::exchange(converged_, std::nullopt);
  auto ahead = publishAhead(*state, last);
  auto record = loadRecord();
  // No VF is prepared for a pod while this pass plans and changes the host.
  std::unique_lock<std::mutex> host_hold = local_.holdHost();

  api::SriovNodeStateStatus status = state->status;
  host::SyncOutcome outcome;
  auto topology = converge(*state, record, status, outcome);
  host_hold.unlock();
  if (!topology.ok()) return topology.status();
  std::string unknown = outcome.in_use_unknown;
  bool rebooting = outcome.reboot_step == host::RebootStep::kReboot;
  SDRA_RETURN_IF_ERROR(report(*state, std::move(status), *topology, std::move(outcome), ahead));
  // Retried with backoff until the VFs in use can be known.
  if (!unknown.empty()) return Status(Code::kUnavailable, host::inUseUnknownMessage(unknown));
  // The host is about to change under the agent (or is gone with it): look again soon.
  if (rebooting) return ReconcileResult::after(std::chrono::seconds(1));
  return ReconcileResult::after(options_.resync_period);
}

// Long on purpose: the passes of one convergence in order (discover, plan, ask who uses the
// VFs before the first change that destroys one, firmware, apply, discover again), sharing the
// pass's state; split, the in-use guard before the first destructive change would be hidden.
// NOLINTNEXTLINE(readability-function-size)
Result<host::Topology> Agent::converge(const api::SriovNodeState& state,
                                       std::set<std::string>& record,
                                       api::SriovNodeStateStatus& status,
                                       host::SyncOutcome& outcome) {
  const api::SriovNodeStateSpec& spec = state.spec;
  // The checkpoint answers while nothing would be destroyed; before the first change that
  // destroys or rebinds a VF, the API server and the host are asked too (host/prepared.h).
  host::PreparedVfs in_use = local_.prepared();
  bool asked_everyone = false;
  auto discover = [this] {
    return timed("discover", [this] { return host::discover(*sysfs_, *netlink_); });
  };
  Result<host::Topology> topology = discover();
  std::set<std::string> awaiting;
  if (topology.ok()) {
    awaiting = configureFirmware(spec, *topology, outcome);
    configureRdmaMode(spec, status, outcome);
    rebootIfGranted(state, outcome);
  }
  const size_t firmware_errors = outcome.errors.size();
  std::vector<std::string> mac_warnings;
  auto replan = [&] {
    auto macs = timed(
        "vf_macs", [&] { return host::readVfAdminMacs(*netlink_, spec, *topology, mac_warnings); });
    return timed("plan", [&] {
      return host::planHost(spec, *topology, record, in_use, &guids_, awaiting, macs);
    });
  };
  bool wrote_in_progress = false;
  bool settled = false, stopped = false;
  for (int pass = 0; topology.ok() && pass < options_.max_passes; ++pass) {
    auto plan = replan();
    if (!asked_everyone && plan.destructive()) {
      asked_everyone = true;
      auto all = timed("in_use", [this] { return local_.inUse(); });
      if (!all.ok()) {
        outcome.in_use_unknown = all.status().message();
        SDRA_LOG_WARN << host::inUseUnknownMessage(outcome.in_use_unknown);
        stopped = true;
        break;
      }
      in_use = std::move(*all);
      plan = replan();
    }
    outcome.errors.resize(firmware_errors);
    outcome.errors.insert(outcome.errors.end(), plan.errors.begin(), plan.errors.end());
    outcome.blocked = plan.blocked;
    if (plan.configured != record) {
      record = plan.configured;
      if (Status st = saveRecord(record); !st.isOk())
        outcome.errors.push_back("saving the record: " + st.message());
    }
    if (plan.empty()) {
      settled = true;
      break;
    }
    if (!wrote_in_progress) {
      api::SriovNodeStateStatus progress = status;
      progress.sync_status = "InProgress";
      api::setCondition(progress.conditions,
                        {"Progressing", "True", "Applying",
                         std::to_string(plan.actions.size()) + " change(s) to the host", "",
                         state.metadata.generation},
                        nowRfc3339());
      SDRA_RETURN_IF_ERROR(writeStatus(state, progress));
      status = progress;
      wrote_in_progress = true;
    }
    bool failed = false;
    for (const auto& action : plan.actions) {
      Status st = timed("apply", [&] { return host::applyAction(*sysfs_, *netlink_, action); });
      SDRA_LOG_INFO << action.describe() << (st.isOk() ? "" : ": " + st.message());
      if (!st.isOk()) {
        outcome.errors.push_back(action.describe() + ": " + st.message());
        failed = true;
        break;
      }
    }
    topology = discover();
    if (failed) {
      stopped = true;
      break;
    }
  }
  // Every pass applied its plan and the host still differs: a change that does not take (a driver
  // that will not bind a VF) fails the sync, naming it, rather than reading as done.
  if (topology.ok() && !settled && !stopped) {
    auto left = replan();
    if (!left.empty()) {
      auto undone = host::describeUnconverged(left);
      outcome.errors.insert(outcome.errors.end(), undone.begin(), undone.end());
    }
  }
  for (const auto& w : mac_warnings) SDRA_LOG_WARN << w;
  return topology;
}

std::set<std::string> Agent::configureFirmware(const api::SriovNodeStateSpec& spec,
                                               const host::Topology& topology,
                                               host::SyncOutcome& outcome) {
  auto nics = host::firmwareToRead(spec, topology);
  if (nics.empty() || !firmware_ || !firmware_changes_) return {};
  std::map<std::string, host::MlxFirmware> read;
  for (const auto& [nic, pci] : nics) {
    auto fw = timed("firmware", [&, &pci = pci] { return firmware_->query(pci); });
    if (!fw.ok()) {
      outcome.errors.push_back("reading the firmware of NIC " + nic + ": " + fw.status().message());
      continue;
    }
    read.emplace(nic, *fw);
  }
  auto plan = host::planFirmware(spec, topology, read);
  outcome.errors.insert(outcome.errors.end(), plan.errors.begin(), plan.errors.end());
  outcome.reboot = plan.reboot_reasons;
  for (const auto& [pci, values] : plan.changes) {
    std::string change = host::describeChanges(values);
    Status st = timed("firmware",
                      [&, &pci = pci, &values = values] { return firmware_->set(pci, values); });
    SDRA_LOG_INFO << "firmware of " << pci << ": " << change << " at the next boot"
                  << (st.isOk() ? "" : ": " + st.message());
    if (!st.isOk()) {
      outcome.errors.push_back(std::string("setting the firmware of ")
                                   .append(pci)
                                   .append(" (")
                                   .append(change)
                                   .append("): ") +
                               st.message());
      std::string nic = "NIC " + pci.substr(0, pci.rfind('.')) + " ";
      std::erase_if(outcome.reboot, [&](const std::string& r) { return r.rfind(nic, 0) == 0; });
    }
  }
  return plan.awaiting_reboot;
}

std::optional<std::vector<dra::SliceSummary>> Agent::publishAhead(
    const api::SriovNodeState& state, const std::optional<Converged>& last) {
  if (!last || state.metadata.generation == last->generation) return std::nullopt;
  if (state.status.observed_generation != last->generation ||
      state.status.sync_status != "Succeeded" || state.spec.interfaces != last->interfaces) {
    return std::nullopt;
  }
  auto previous = slices_.published();
  auto set = buildSlices(state.spec.devices, state.status.interfaces, previous);
  if (Status st = timed("slices_write", [&] { return slices_.publish(set, previous); });
      !st.isOk()) {
    SDRA_LOG_WARN << "publishing the changed devices ahead of discovery: " << st.message()
                  << "; the pass publishes them after it";
    return std::nullopt;
  }
  return dra::summaries(set.slices);
}

Status Agent::report(const api::SriovNodeState& state, api::SriovNodeStateStatus status,
                     const host::Topology& topology, host::SyncOutcome outcome,
                     const std::optional<std::vector<dra::SliceSummary>>& ahead) {
  const api::SriovNodeStateSpec& spec = state.spec;
  const std::vector<dra::SliceSummary> previous = ahead ? *ahead : slices_.published();
  auto set = buildSlices(spec.devices, topology.pfs, previous);
  if (!ahead || dra::summaries(set.slices) != *ahead) {
    if (Status st = timed("slices_write", [&] { return slices_.publish(set, previous); });
        !st.isOk()) {
      outcome.errors.push_back("publishing ResourceSlices: " + st.message());
    }
  }
  for (const auto& r : set.refused) outcome.errors.push_back("not advertised, " + r);
  outcome.advertised = 0;
  for (const auto& slice : set.slices)
    outcome.advertised += static_cast<int64_t>(slice.spec.devices.size());
  if (!set.missing.empty()) {
    SDRA_VLOG(1) << set.missing.size() << " device(s) of the spec do not exist on this node yet";
  }
  int64_t gen = state.metadata.generation;
  status = host::syncedStatus(status, spec, gen, topology, outcome, nowRfc3339());
  int64_t desired = 0;
  for (const auto& i : spec.interfaces) desired += i.num_vfs;
  int64_t present = 0;
  for (const auto& pf : topology.pfs) present += static_cast<int64_t>(pf.vfs.size());
  nodeVfsGauge().Add({{"state", "desired"}}).Set(static_cast<double>(desired));
  nodeVfsGauge().Add({{"state", "present"}}).Set(static_cast<double>(present));
  nodeVfsGauge().Add({{"state", "advertised"}}).Set(static_cast<double>(outcome.advertised));
  for (const char* st : {"Succeeded", "InProgress", "Failed"}) {
    syncGauge().Add({{"status", st}}).Set(status.sync_status == st ? 1 : 0);
  }
  bool ok = outcome.errors.empty() && !outcome.waiting();
  if (!(status == state.status)) {
    if (auto event = host::syncEvent(state.status, status, outcome, gen)) {
      auto ref = kube::ObjectReference::of(api::resources::kSriovNodeStates, state.metadata);
      if (event->warning) {
        events_.warning(ref, event->reason, event->message);
      } else {
        events_.normal(ref, event->reason, event->message);
      }
    }
    SDRA_RETURN_IF_ERROR(writeStatus(state, status));
  }
  if (ok) converged_ = Converged{gen, spec.interfaces};
  {
    std::lock_guard lock(mu_);
    ready_ = ok;
    reconciled_once_ = true;
  }
  return Status::ok();
}

Status Agent::writeStatus(const api::SriovNodeState& state,
                          const api::SriovNodeStateStatus& status) {
  PhaseTimer timer("status_write");
  auto applied = client_->writeStatus(
      api::resources::kSriovNodeStates, options_.namespace_,
      statusDocument(options_.namespace_, state.metadata.name, status),
      kube::newerResourceVersion(state.metadata.resource_version, status_version_),
      {.field_manager = api::kAgentFieldManager, .metadata_only = true});
  if (applied.ok()) {
    status_version_ = kube::ObjectMeta::decode(*applied).resource_version;
    return Status::ok();
  }
  if (applied.status().code() == Code::kTooLarge) {
    events_.warning(kube::ObjectReference::of(api::resources::kSriovNodeStates, state.metadata),
                    "StatusTooLarge",
                    "the discovered topology of this node is larger than the API server stores (" +
                        applied.status().message() +
                        "); lower numVfs of the policies that select the node, or raise etcd's "
                        "--max-request-bytes");
  }
  return applied.status();
}

dra::SliceSet Agent::buildSlices(const std::vector<api::Device>& devices,
                                 const std::vector<api::InterfaceExt>& pfs,
                                 const std::vector<dra::SliceSummary>& previous) const {
  // Most passes have no VF in someone else's pod: only then are the PFs copied to leave them out.
  auto assigned = [](const api::VirtualFunction& vf) { return !vf.assigned.empty(); };
  const std::vector<api::InterfaceExt>* advertised = &pfs;
  std::vector<api::InterfaceExt> without_foreign;
  if (std::any_of(pfs.begin(), pfs.end(), [&](const api::InterfaceExt& pf) {
        return std::any_of(pf.vfs.begin(), pf.vfs.end(), assigned);
      })) {
    auto prepared = local_.prepared();
    without_foreign = pfs;
    for (auto& pf : without_foreign) {
      std::erase_if(pf.vfs, [&](const api::VirtualFunction& vf) {
        return assigned(vf) && prepared.count(vf.pci_address) == 0;
      });
    }
    advertised = &without_foreign;
  }
  return timed("slices_build", [&] {
    return dra::buildSlices(options_.node_name, devices, *advertised, previous);
  });
}

json::Document statusDocument(const std::string& ns, const std::string& node,
                              const api::SriovNodeStateStatus& status) {
  auto doc = kube::newObject(api::resources::kSriovNodeStates, ns, node);
  status.encode(api::Writer(doc, doc.GetAllocator()).object("status"));
  return doc;
}

}  // namespace sriovdra::agent
