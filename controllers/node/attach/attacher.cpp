#include "node/attach/attacher.h"

#include <algorithm>

#include "api/codec.h"
#include "api/names.h"
#include "api/networks.h"
#include "base/fault_point.h"
#include "base/log.h"
#include "dra/network_selection.h"

namespace sriovdra::attach {
namespace {

// The network-status write: inside a RunPodSandbox at most this, and never past the CNI budget
// (the runtime's NRI request timeout, 2 s by default, must not pass); a write that fails is
// tried again by the sync worker every period, each waited for at most kRetryTimeout, until
// written, its pod or record gone, or kAttempts tried (about 5 minutes).
constexpr std::chrono::milliseconds kNetworkStatusTimeout{300};
constexpr std::chrono::seconds kNetworkStatusRetryPeriod{5};
constexpr std::chrono::seconds kNetworkStatusRetryTimeout{2};
constexpr int kNetworkStatusAttempts = 60;

// Whether a failed network-status write is worth another try: when the API server was slow or
// away; not when the pod is gone or is another pod of that name now (its UID differs), nor when
// the API server refuses the patch (a grant not given is said once per pod, not every period).
bool retriable(const Status& st) {
  switch (st.code()) {
    case Code::kTimeout:
    case Code::kUnavailable:
    case Code::kTooManyRequests:
      return true;
    default:
      return false;
  }
}

std::string podName(const nri::Pod& pod) { return pod.namespace_ + "/" + pod.name; }

cni::RuntimeArgs argsFor(const dra::AttachRecord& record, const std::string& if_name,
                         const std::vector<std::string>& bin_dirs) {
  return {record.sandbox,  record.netns,   if_name, record.pod_namespace,
          record.pod_name, record.pod_uid, bin_dirs};
}

}  // namespace

Attacher::Attacher(std::shared_ptr<kube::Client> client, node::LocalState& local,
                   AttacherOptions options, kube::EventRecorder& events,
                   kube::ObjectReference node_state)
    : client_(std::move(client)),
      local_(local),
      records_(local.attachRecords()),
      options_(std::move(options)),
      cni_(options_.cni_timeout, dra::kMaxCniResultBytes),
      recorder_(events),
      node_state_(std::move(node_state)),
      sync_worker_([this](const std::stop_token& stop) { syncLoop(stop); }) {}

Attacher::~Attacher() {
  sync_worker_.request_stop();
  sync_cv_.notify_all();
}

void Attacher::syncLoop(const std::stop_token& stop) {
  while (true) {
    Snapshot snapshot;
    bool synchronize = false;  // else the network-status writes' retry period passed
    {
      std::unique_lock lock(sync_mu_);
      sync_running_ = false;
      auto pending = [this] { return sync_pending_.has_value(); };
      synchronize = status_retries_.empty()
                        ? sync_cv_.wait(lock, stop, pending)
                        : sync_cv_.wait_for(lock, stop, kNetworkStatusRetryPeriod, pending);
      if (stop.stop_requested()) return;
      if (synchronize) {
        snapshot = std::move(*sync_pending_);
        sync_pending_.reset();
        sync_running_ = true;
      }
    }
    if (synchronize) {
      reconcile(snapshot);
    } else {
      retryNetworkStatus();
    }
  }
}

void Attacher::noteEvent(const std::string& sandbox) {
  std::lock_guard lock(events_mu_);
  last_event_[sandbox] = ++events_;
}

bool Attacher::newerThan(const std::string& sandbox, uint64_t events) const {
  std::lock_guard lock(events_mu_);
  auto it = last_event_.find(sandbox);
  return it != last_event_.end() && it->second > events;
}

std::shared_ptr<std::timed_mutex> Attacher::lockOf(const std::string& sandbox) {
  std::lock_guard lock(locks_mu_);
  for (auto it = locks_.begin(); it != locks_.end();) {
    it = it->second.expired() ? locks_.erase(it) : std::next(it);
  }
  auto& weak = locks_[sandbox];
  auto strong = weak.lock();
  if (!strong) {
    strong = std::make_shared<std::timed_mutex>();
    weak = strong;
  }
  return strong;
}

Result<api::NetworkAttachmentDefinition> Attacher::readNad(const std::string& ns,
                                                           const std::string& name,
                                                           NadReads& reads) const {
  std::string key = ns + "/" + name;
  if (auto known = reads.find(key); known != reads.end()) return known->second;
  Result<api::NetworkAttachmentDefinition> nad = [&]() -> Result<api::NetworkAttachmentDefinition> {
    auto got = client_->get(api::resources::kNetworkAttachmentDefinitions, ns, name);
    if (!got.ok()) return got.status();
    return api::NetworkAttachmentDefinition::decode(*got);
  }();
  reads.emplace(key, nad);
  return nad;
}

Result<Attacher::NadConfig> Attacher::nadConfig(const dra::Attachment& a, NadReads& reads) const {
  std::string who = "NetworkAttachmentDefinition " + a.claim_namespace + "/" + a.nad_name;
  who += a.network ? " (network " + std::to_string(a.network->position + 1) + " of the pod's " +
                         dra::kNetworksAnnotation + ")"
                   : " (netAttachDefName of ResourceClaim " + a.claim_namespace + "/" +
                         a.claim_name + ")";
  auto nad = readNad(a.claim_namespace, a.nad_name, reads);
  if (!nad.ok()) {
    if (nad.status().code() == Code::kNotFound)
      return Status(Code::kNotFound, who + " does not exist");
    return Status(nad.status().code(), "reading " + who + ": " + nad.status().message());
  }
  if (nad->config.empty()) return Status(Code::kInvalidArgument, who + " has no spec.config");
  if (nad->config.size() > dra::kMaxCniConfigBytes) {
    return Status(Code::kTooLarge, who + ": spec.config is " + std::to_string(nad->config.size()) +
                                       " bytes, over the " +
                                       std::to_string(dra::kMaxCniConfigBytes) +
                                       " the agent records to run CNI DEL with later");
  }
  // The NAD as written is what the node's rules judge (a NAD must not name a device itself).
  auto written = cni::parseNetworkConfig(nad->config);
  if (!written.ok()) return Status(Code::kInvalidArgument, who + ": " + written.status().message());
  if (Status st = cni::checkAllowed(*written, options_.allowed); !st.isOk()) {
    return Status(st.code(), who + ": " + st.message());
  }
  cni::RuntimeConfig values{.device_id = a.pci_address};
  if (a.network) {
    values.mac = a.network->mac;
    values.ips = a.network->ips;
    values.infiniband_guid = a.network->infiniband_guid;
  }
  // What CNI runs and the record keeps: the VF's deviceID and the pod's values in.
  auto text = cni::withRuntimeConfig(nad->config, values);
  if (!text.ok()) return Status(Code::kInvalidArgument, who + ": " + text.status().message());
  if (text->size() > dra::kMaxCniConfigBytes) {
    return Status(Code::kTooLarge, who + ": with the VF's deviceID and the pod's values, " +
                                       "spec.config is " + std::to_string(text->size()) +
                                       " bytes, over the " +
                                       std::to_string(dra::kMaxCniConfigBytes) +
                                       " the agent records to run CNI DEL with later");
  }
  auto parsed = cni::parseNetworkConfig(*text);
  if (!parsed.ok()) return Status(Code::kInvalidArgument, who + ": " + parsed.status().message());
  return NadConfig{std::move(*text), std::move(*parsed)};
}

Result<std::vector<dra::Attachment>> Attacher::wantedFor(const nri::Pod& pod, NadReads& reads,
                                                         cni::Executor::Deadline deadline) const {
  auto wanted = local_.attachmentsFor(pod.uid, options_.interface_prefix);
  auto vfs = dra::waitingForNetworks(wanted);
  if (vfs.empty()) return wanted;
  auto networks = dra::parseNetworkSelection(pod.networks, pod.namespace_);
  if (!networks.ok()) {
    return Status(Code::kInvalidArgument,
                  "pod " + podName(pod) + ": " + networks.status().message());
  }
  // Which resource each network is for, from its NAD: only the pod's own namespace is read, as
  // for claims (a pod must not make the agent read what its author may not). Skipping another
  // namespace's network would give its VF to the next one: refused instead.
  std::map<std::string, std::string> resources;
  for (const auto& n : *networks) {
    std::string name = n.namespace_ + "/" + n.name;
    if (n.namespace_ != pod.namespace_) {
      return Status(Code::kInvalidArgument,
                    "pod " + podName(pod) + ": network " + name + " of its " +
                        dra::kNetworksAnnotation +
                        " annotation is in another namespace; the agent reads "
                        "NetworkAttachmentDefinitions only in the pod's own namespace");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status(Code::kTimeout, "pod " + podName(pod) + ": reading the networks of its " +
                                        dra::kNetworksAnnotation + " annotation took too long");
    }
    // A network that does not exist fails the pod, as Multus fails it.
    auto nad = readNad(n.namespace_, n.name, reads);
    if (!nad.ok()) {
      std::string why = nad.status().code() == Code::kNotFound
                            ? "its NetworkAttachmentDefinition does not exist"
                            : "reading its NetworkAttachmentDefinition: " + nad.status().message();
      std::string message = "pod " + podName(pod) + ": network " + name + " of its ";
      message.append(dra::kNetworksAnnotation).append(" annotation: ").append(why);
      return Status(nad.status().code(), message);
    }
    resources[name] = nad->metadata.annotation(api::kNadResourceNameAnnotation);
  }
  auto assigned = dra::assignNetworks(vfs, *networks, resources);
  if (!assigned.ok()) {
    return Status(assigned.status().code(),
                  "pod " + podName(pod) + ": " + assigned.status().message());
  }
  if (assigned->size() < vfs.size()) {
    SDRA_LOG_INFO << "pod " << podName(pod) << ": " << vfs.size() - assigned->size()
                  << " vfio-pci VF(s) of its extended resources are named by no network of its "
                  << dra::kNetworksAnnotation << " annotation: left to the pod as devices";
  }
  auto attachments = dra::withNetworks(std::move(wanted), *assigned);
  if (!attachments.ok()) {
    return Status(attachments.status().code(),
                  "pod " + podName(pod) + ": " + attachments.status().message());
  }
  return attachments;
}

Status Attacher::add(dra::AttachRecord& record, const dra::Attachment& a, NadReads& reads,
                     cni::Executor::Deadline deadline) {
  auto config = nadConfig(a, reads);
  if (!config.ok()) return config.status();
  const cni::NetworkConfig* parsed = &config->parsed;
  record.interfaces.push_back({a.claim_uid, a.pool, a.device, a.pci_address, a.if_name,
                               dra::AttachedInterface::State::kAdding, config->text, "",
                               a.claim_namespace + "/" + a.nad_name});
  SDRA_RETURN_IF_ERROR(records_.save(record));
  auto result = cni_.add(*parsed, argsFor(record, a.if_name, options_.cni_bin_dirs), deadline);
  if (!result.ok()) {
    record.interfaces.pop_back();
    if (Status st = records_.save(record); !st.isOk()) SDRA_LOG_WARN << st.message();
    return result.status();
  }
  if (Status st = cni::checkResult(*result); !st.isOk()) {
    // Undone: a result that cannot be recorded and shown is not an attachment.
    (void)cni_.del(*parsed, argsFor(record, a.if_name, options_.cni_bin_dirs), *result);
    record.interfaces.pop_back();
    if (Status saved = records_.save(record); !saved.isOk()) SDRA_LOG_WARN << saved.message();
    return Status(st.code(), "CNI plugin " + parsed->types.back() + ": " + st.message());
  }
  record.interfaces.back().state = dra::AttachedInterface::State::kAttached;
  record.interfaces.back().cni_result = *result;
  SDRA_RETURN_IF_ERROR(records_.save(record));
  SDRA_LOG_INFO << "attached VF " << a.pci_address << " (ResourceClaim " << a.claim_namespace << "/"
                << a.claim_name << ") to pod " << record.pod_namespace << "/" << record.pod_name
                << " as " << a.if_name;
  return Status::ok();
}

Status Attacher::del(const dra::AttachRecord& record, const dra::AttachedInterface& i,
                     cni::Executor::Deadline deadline) const {
  auto parsed = cni::parseNetworkConfig(i.cni_config);
  if (!parsed.ok()) return parsed.status();
  return cni_.del(*parsed, argsFor(record, i.if_name, options_.cni_bin_dirs), i.cni_result,
                  deadline);
}

Status Attacher::attach(const nri::Pod& pod, Caller caller, uint64_t snapshot) {
  const bool sync = caller == Caller::kSync;
  auto deadline = sync ? cni::Executor::Deadline::max()
                       : std::chrono::steady_clock::now() + options_.attach_budget;
  NadReads reads;
  auto wanted_or = wantedFor(pod, reads, deadline);
  if (!wanted_or.ok()) return wanted_or.status();
  const auto& wanted = *wanted_or;
  if (wanted.empty()) return Status::ok();
  if (caller == Caller::kRunPodSandbox) fault::point("attach");
  if (pod.netns.empty()) {
    return Status(Code::kInvalidArgument, "pod " + podName(pod) + " has " +
                                              std::to_string(wanted.size()) +
                                              " VF(s) to attach but the runtime gave it no "
                                              "network namespace");
  }
  if (!sync) SDRA_RETURN_IF_ERROR(detachEarlierSandboxes(pod, deadline));
  auto guard = lockSandbox(pod.id, deadline);
  if (!guard.owns_lock()) return busy(pod.id);
  if (sync && newerThan(pod.id, snapshot)) return Status::ok();
  auto loaded = records_.load(pod.id);
  if (!loaded.ok()) return loaded.status();
  dra::AttachRecord record =
      loaded->value_or(dra::AttachRecord{pod.id, pod.uid, pod.namespace_, pod.name, pod.netns, {}});
  auto added = addMissing(pod, caller, wanted, record, reads, deadline);
  if (!added.ok()) {
    // The sandbox fails: nothing of this pod stays attached. A container that fails leaves the
    // pod's sandbox, and what runs in it, as it was (the failed ADD undid itself).
    if (caller != Caller::kCreateContainer) {
      if (Status st = detach(pod.id); !st.isOk()) SDRA_LOG_WARN << st.message();
    }
  } else {
    markComplete(pod.id, true);
    if (*added == 0 && caller == Caller::kCreateContainer) return Status::ok();
    announce(record, sync, deadline);
  }
  std::set<std::string> claims;
  for (const auto& a : wanted) claims.insert(a.claim_uid);
  writeStatuses(claims);
  return added.status();
}

void Attacher::markComplete(const std::string& sandbox, bool complete) {
  std::lock_guard lock(events_mu_);
  if (complete) {
    complete_.insert(sandbox);
  } else {
    complete_.erase(sandbox);
  }
}

Result<size_t> Attacher::addMissing(const nri::Pod& pod, Caller caller,
                                    const std::vector<dra::Attachment>& wanted,
                                    dra::AttachRecord& record, NadReads& reads,
                                    cni::Executor::Deadline deadline) {
  size_t added = 0;
  for (const auto& a : wanted) {
    const dra::AttachedInterface* have = record.find(a.claim_uid, a.device);
    if (have != nullptr && have->state == dra::AttachedInterface::State::kAttached) continue;
    if (have != nullptr) {
      // Half added when the agent stopped: undo what CNI may have done, then add it again.
      if (Status st = del(record, *have); !st.isOk()) {
        SDRA_LOG_WARN << "cleaning up the interrupted attach of " << a.pci_address << ": "
                      << st.message();
      }
      dra::AttachedInterface stale = *have;  // a copy: *have lives in the list being edited
      auto& list = record.interfaces;
      list.erase(std::remove(list.begin(), list.end(), stale), list.end());
    }
    Status st = add(record, a, reads, deadline);
    if (st.isOk()) {
      ++added;
      continue;
    }
    std::string message = "attaching VF " + a.pci_address + " of ResourceClaim " +
                          a.claim_namespace + "/" + a.claim_name + " to pod " + podName(pod) +
                          " as " + a.if_name + ": " + st.message();
    if (st.code() == Code::kTimeout && caller != Caller::kSync) {
      message += std::string(" (the agent answers the runtime's ") +
                 (caller == Caller::kRunPodSandbox ? "RunPodSandbox" : "CreateContainer") +
                 " within " + std::to_string(options_.attach_budget.count()) +
                 " ms, --nri-attach-timeout, below its NRI request timeout; raise both for "
                 "slower plugins)";
    }
    return Status(st.code(), message);
  }
  return added;
}

void Attacher::announce(const dra::AttachRecord& record, bool sync,
                        cni::Executor::Deadline deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  Status written = sync ? writeNetworkStatus(record, kNetworkStatusRetryTimeout)
                   : left.count() > 0
                       ? writeNetworkStatus(record, std::min(left, kNetworkStatusTimeout))
                       : Status(Code::kTimeout, "no time left within the attach budget");
  if (written.isOk()) return;
  SDRA_LOG_WARN << written.message() << (retriable(written) ? " (tried again)" : "");
  if (retriable(written)) {
    std::lock_guard sync_lock(sync_mu_);
    status_retries_.emplace(record.sandbox, 0);
    sync_cv_.notify_all();
  }
}

Status Attacher::writeNetworkStatus(const dra::AttachRecord& record,
                                    std::chrono::milliseconds timeout) const {
  std::string status = dra::networkStatus(record);
  if (status.empty()) return Status::ok();
  json::Document patch(rapidjson::kObjectType);
  api::Writer metadata = api::Writer(patch, patch.GetAllocator()).object("metadata");
  metadata.strAlways("uid", record.pod_uid)
      .object("annotations")
      .strAlways(dra::kNetworkStatusAnnotation, status);
  auto written = client_->patch(kube::resources::kPods, record.pod_namespace, record.pod_name,
                                kube::PatchType::kMerge, json::dump(patch),
                                {.timeout = timeout, .metadata_only = true});
  if (written.ok()) return Status::ok();
  std::string hint = written.status().code() == Code::kForbidden
                         ? " (the agent's ServiceAccount needs the ClusterRole "
                           "sriov-dra-agent-pod-network-status of "
                           "config/rbac/agent_validating_admission_policy.yaml)"
                         : "";
  return Status(written.status().code(),
                "writing the " + std::string(dra::kNetworkStatusAnnotation) +
                    " annotation of pod " + record.pod_namespace + "/" + record.pod_name + ": " +
                    written.status().message() + hint);
}

void Attacher::retryNetworkStatus() {
  std::map<std::string, int> due;
  {
    std::lock_guard sync_lock(sync_mu_);
    due = status_retries_;
  }
  for (const auto& [sandbox, attempts] : due) {
    Status st;
    {
      auto lock = lockOf(sandbox);
      std::lock_guard guard(*lock);
      auto loaded = records_.load(sandbox);
      if (!loaded.ok()) {
        st = loaded.status();
      } else if (*loaded) {
        st = writeNetworkStatus(**loaded, kNetworkStatusRetryTimeout);
      }  // no record: the sandbox is gone, nothing to write
    }
    bool again = retriable(st) && attempts + 1 < kNetworkStatusAttempts;
    if (!st.isOk()) {
      SDRA_LOG_WARN << st.message()
                    << (again           ? " (tried again)"
                        : retriable(st) ? " (given up)"
                                        : "");
    }
    // StopPodSandbox may have dropped it meanwhile: it stays dropped.
    std::lock_guard sync_lock(sync_mu_);
    if (auto it = status_retries_.find(sandbox); it != status_retries_.end()) {
      if (again) {
        it->second = attempts + 1;
      } else {
        status_retries_.erase(it);
      }
    }
  }
}

void Attacher::writeStatuses(const std::set<std::string>& claim_uids) const {
  for (const auto& uid : claim_uids) {
    // A claim unprepared meanwhile has nothing to write.
    if (Status st = local_.writeClaimStatus(uid); !st.isOk()) {
      SDRA_LOG_WARN << st.message() << " (the network data is written again on the pod's next "
                    << "event)";
    }
  }
}

Status Attacher::runPodSandbox(const nri::Pod& pod) {
  noteEvent(pod.id);
  return attach(pod, Caller::kRunPodSandbox);
}

Status Attacher::createContainer(const nri::Pod& pod, const std::string& container) {
  // Not a pod event for dra::planSync: a Synchronize's worker may still attach the pod too
  // (whoever holds the sandbox's lock first; the other finds it attached).
  {
    std::lock_guard lock(events_mu_);
    if (complete_.count(pod.id) != 0) return Status::ok();
  }
  auto wanted = local_.attachmentsFor(pod.uid, options_.interface_prefix);
  if (wanted.empty()) return Status::ok();
  auto record = records_.load(pod.id);
  auto attached = [&](const dra::Attachment& a) {
    const dra::AttachedInterface* i =
        record.ok() && *record ? (*record)->find(a.claim_uid, a.device) : nullptr;
    return i != nullptr && i->state == dra::AttachedInterface::State::kAttached;
  };
  // After an agent restart, until the synchronization attached the pod: the record answers,
  // except for a VF of an extended-resource claim that no network of the pod takes (never
  // recorded): attach() reads the pod's networks to know.
  if (std::all_of(wanted.begin(), wanted.end(), attached)) return Status::ok();
  SDRA_LOG_WARN << "pod " << podName(pod) << ": container " << container
                << " is being created while VFs of the pod are not attached (the agent was away "
                   "at its RunPodSandbox?); attaching them first";
  return attach(pod, Caller::kCreateContainer);
}

Status Attacher::detachEarlierSandboxes(const nri::Pod& pod, cni::Executor::Deadline deadline) {
  for (const auto& record : records_.all()) {
    if (record.pod_uid != pod.uid || record.sandbox == pod.id) continue;
    SDRA_LOG_WARN << "pod " << podName(pod) << " gets a new sandbox while its earlier one ("
                  << record.sandbox << ") still has VFs recorded: the runtime never said it "
                  << "stopped (a reboot or a runtime restart); detaching them first";
    if (Status st = detachLocked(record.sandbox, "", deadline); !st.isOk()) {
      return Status(st.code(), "pod " + podName(pod) + ": its earlier sandbox's VFs (the kubelet " +
                                   "retries the sandbox, and this DEL with it): " + st.message());
    }
  }
  return Status::ok();
}

Status Attacher::synchronize(const std::vector<nri::Pod>& pods) {
  Snapshot snapshot{.events = 0, .pods = pods};
  {
    std::lock_guard lock(events_mu_);
    snapshot.events = events_;
  }
  {
    std::lock_guard lock(sync_mu_);
    sync_pending_ = std::move(snapshot);
  }
  sync_cv_.notify_all();
  return Status::ok();
}

void Attacher::reconcile(const Snapshot& snapshot) {
  std::vector<std::string> recorded, running;
  for (const auto& record : records_.all()) recorded.push_back(record.sandbox);
  std::map<std::string, const nri::Pod*> pods;
  for (const auto& p : snapshot.pods) {
    running.push_back(p.id);
    pods[p.id] = &p;
  }
  std::set<std::string> newer;
  for (const auto& sandbox : recorded) {
    if (newerThan(sandbox, snapshot.events)) newer.insert(sandbox);
  }
  for (const auto& sandbox : running) {
    if (newerThan(sandbox, snapshot.events)) newer.insert(sandbox);
  }
  auto plan = dra::planSync(recorded, running, newer);
  for (const auto& sandbox : plan.detach) {
    auto lock = lockOf(sandbox);
    std::lock_guard guard(*lock);
    if (newerThan(sandbox, snapshot.events)) continue;  // an event arrived meanwhile
    if (Status st = detach(sandbox); !st.isOk()) {
      SDRA_LOG_WARN << "sandbox " << sandbox << " is gone: " << st.message();
    }
  }
  for (const auto& sandbox : plan.attach) {
    const nri::Pod& p = *pods.at(sandbox);
    if (Status st = attach(p, Caller::kSync, snapshot.events); !st.isOk()) {
      SDRA_LOG_WARN << "synchronizing pod " << podName(p) << ": " << st.message();
    }
  }
  {
    // Events older than this snapshot can matter to no later one.
    std::lock_guard lock(events_mu_);
    std::erase_if(last_event_, [&](const auto& e) { return e.second <= snapshot.events; });
  }
  SDRA_LOG_INFO << "NRI: the " << snapshot.pods.size()
                << " pod(s) the runtime has are attached as recorded";
}

}  // namespace sriovdra::attach
