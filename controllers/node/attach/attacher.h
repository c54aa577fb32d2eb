#pragma once
// Standalone mode's pod attach (the reference driver's default): the NRI plugin's handler, which
// puts each VF prepared for a pod into the pod's network namespace with CNI and says so in the
// claim's status.
//   RunPodSandbox: for each attachment (dra::attachmentsFor: the pod's prepared VFs whose
//     VfConfig names a NetworkAttachmentDefinition, and those of extended-resource claims given
//     the networks of the pod's k8s.v1.cni.cncf.io/networks annotation as Multus gives them:
//     dra/network_selection.h, NADs read in the pod's namespace only, a malformed annotation
//     failing the sandbox), read that NAD from the claim's namespace
//     (never another: a claim must not make the agent read what its author may not), check
//     that it runs only what the administrator allows (cni/allow.h), set deviceID to the VF's
//     PCI address (and the pod's mac, ips and GUID as capability arguments), record the
//     interface as Adding, run CNI ADD with the pod's netns, interface
//     name and CNI_ARGS, record it Attached with the result, then write the pod's
//     k8s.v1.cni.cncf.io/network-status annotation as Multus writes it (within what is left of
//     the budget, at most 300 ms; when the API server was slow or away, the sync worker tries
//     again every 5 s for about 5 minutes) and status.devices (data {vfConfig, cniConfig,
//     cniResult}, networkData). A missing NAD, an unknown plugin type or a
//     failing plugin fails the sandbox with that message, and whatever this pod had attached is
//     detached again. Attached interfaces are skipped, so a repeated RunPodSandbox attaches
//     nothing twice; an interface recorded Adding (the agent died during ADD) is deleted and
//     added again.
//   The CNI work of a RunPodSandbox has options.attach_budget: a plugin still running then is
//   killed and undone, and the sandbox fails saying so (the kubelet creates it again), so the
//   runtime never drops this plugin for a slow one. Synchronize's work has no such bound.
//   CreateContainer (before each container of the pod, init containers too): nothing when an
//     attach of the sandbox succeeded in this process since its last detach; else when a VF of the
//     pod is not recorded Attached in its sandbox (the agent was away during the RunPodSandbox:
//     containerd drops a plugin whose connection closes and starts the sandbox without it),
//     attaches it as RunPodSandbox would (earlier sandboxes detached first), within the same
//     budget, and fails the container (the kubelet creates it again) when that fails or another
//     operation holds the sandbox past it; what was attached stays (the claim's status is
//     written only when something was). Containers never start before the pod's VFs are in its
//     netns while the agent is connected; for containers created while it is away, see
//     docs/attach.md (containerd's required-plugins validation).
//   StopPodSandbox, RemovePodSandbox: CNI DEL with the recorded configuration and result, in
//     the recorded netns; the status loses the network data. The record goes once every DEL
//     succeeded.
//   A RunPodSandbox of a pod whose earlier sandbox still has VFs recorded (gone without a
//     StopPodSandbox: a reboot, or containerd restarted since) detaches those first, within the
//     sandbox's budget; a failure or the budget running out fails the sandbox, and the kubelet's
//     next one runs the rest.
//   detachClaim (the kubelet unprepares a claim, KubeletPlugin calls it first): CNI DEL of every
//     interface of the claim still recorded, in any sandbox. The kubelet unprepares a claim only
//     once no pod of the node runs with it, so such an interface is one whose StopPodSandbox never
//     reached the agent: containerd keeps its NRI state of pods in memory, and after it restarts
//     it tells NRI plugins nothing of the end of a pod it had before (v2.4: internal/nri, pod
//     state set in RunPodSandbox only). Unprepare fails while a DEL fails; the kubelet retries.
//   Synchronize (after the agent or the runtime restarted) answers at once and hands the pods to
//     a worker thread: the runtime's request timeout (containerd: 2 s by default) must not cut a
//     synchronization whose CNI calls take longer, or the plugin would never register. The
//     worker detaches sandboxes the runtime no longer has, gives the pods it has what
//     RunPodSandbox would (attached late if the agent was down when they started; an interface
//     recorded Adding is deleted with its recorded configuration and added again), and writes
//     their claims' status again (an agent killed before the status write). Failures there are
//     logged. A newer Synchronize replaces one not yet started. A pod event that arrived after
//     the snapshot wins over it (dra::planSync): the worker never tears down what a newer
//     RunPodSandbox attached, nor attaches what a newer StopPodSandbox detached.
// Every detach (all of the above; not the undoing of a failed or half-done ADD) skips an
//   interface whose VF another sandbox's record has attached now (a stale record; the sriov
//   and ib-sriov DELs would reset the VF under its new pod): the record forgets it. A DEL that
//   can never succeed (the plugin removed, its recorded configuration
//   unreadable) would hold the claim's unprepare and the pod's next sandbox for ever: after
//   kDelGiveUpAttempts failures over options.del_give_up_after (counted by this process), the
//   interface is forgotten with an error in the log and a Warning Event (DetachAbandoned, on the
//   node's SriovNodeState, naming the pod) saying what may be left (the VF's VLAN, MAC or trust,
//   the IPAM lease).
// A status write that fails is logged; the next event or Synchronize of the pod writes it again.
// Thread-safe: events of one sandbox are serialized, different sandboxes run in parallel.
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/networks.h"
#include "cni/allow.h"
#include "cni/exec.h"
#include "dra/attach.h"
#include "kube/client.h"
#include "kube/events.h"
#include "node/state/local_state.h"
#include "nri/plugin.h"

namespace sriovdra::attach {

struct AttacherOptions {
  std::vector<std::string> cni_bin_dirs = {"/opt/cni/bin"};
  std::chrono::milliseconds cni_timeout{60'000};  // per plugin
  // RunPodSandbox's CNI work ends within this, answered before the runtime's own NRI request
  // timeout (containerd: 2 s) would drop the plugin; what has not finished fails the sandbox.
  std::chrono::milliseconds attach_budget{1500};
  cni::AllowList allowed;  // what a NetworkAttachmentDefinition may run
  // Interfaces a VfConfig names no ifName for are <prefix>0, <prefix>1, ... (dra/attach.h).
  std::string interface_prefix = dra::kDefaultInterfacePrefix;
  // A DEL that failed at least kDelGiveUpAttempts times over this long is given up (below).
  std::chrono::seconds del_give_up_after{600};
};
inline constexpr int kDelGiveUpAttempts = 10;

class Attacher : public nri::PodHandler {
 public:
  // The prepared claims, the attach records and the claim status writer are the node's; Events
  // (a DEL given up) go to `events`, about the node's SriovNodeState `node_state`.
  Attacher(std::shared_ptr<kube::Client> client, node::LocalState& local, AttacherOptions options,
           kube::EventRecorder& events, kube::ObjectReference node_state);
  ~Attacher() override;
  Attacher(const Attacher&) = delete;
  Attacher& operator=(const Attacher&) = delete;
  Status synchronize(const std::vector<nri::Pod>& pods) override;
  Status runPodSandbox(const nri::Pod& pod) override;
  Status stopPodSandbox(const nri::Pod& pod) override;
  Status removePodSandbox(const nri::Pod& pod) override;
  Status createContainer(const nri::Pod& pod, const std::string& container) override;
  Status detachClaim(const std::string& claim_uid);

 private:
  // A Synchronize's pods and the number of pod events seen when it arrived.
  struct Snapshot {
    uint64_t events = 0;
    std::vector<nri::Pod> pods;
  };
  // Who attaches: the runtime's RunPodSandbox or CreateContainer, within options_.attach_budget
  // (the waits for the sandboxes' locks included), or the sync worker with a Synchronize's
  // snapshot, unbounded and doing nothing when an event newer than the snapshot arrived for the
  // sandbox. A failure detaches the whole pod, except for CreateContainer.
  enum class Caller { kRunPodSandbox, kCreateContainer, kSync };
  Status attach(const nri::Pod& pod, Caller caller, uint64_t snapshot = 0);
  void syncLoop(const std::stop_token& stop);
  void reconcile(const Snapshot& snapshot);
  // Counts a pod event as it arrives (before it waits for the sandbox's lock).
  void noteEvent(const std::string& sandbox);
  // Whether an event for the sandbox arrived after the first `events` events.
  bool newerThan(const std::string& sandbox, uint64_t events) const;
  // RunPodSandbox: a pod runs in one sandbox at a time, so the records of its other sandboxes are
  // of sandboxes that are gone without a StopPodSandbox; they are detached first (DEL: their
  // leases released, the VF reset), before the new sandbox takes the VF.
  Status detachEarlierSandboxes(const nri::Pod& pod, cni::Executor::Deadline deadline);
  // CNI DEL of every interface the sandbox's record holds (with `claim_uid`, only the claim's);
  // the record keeps the others and those whose DEL failed and is not given up (settleDel); a
  // VF prepared for another claim now leaves it without a DEL. The sandbox's lock is held.
  Status detach(const std::string& sandbox, const std::string& claim_uid = "",
                cni::Executor::Deadline deadline = cni::Executor::Deadline::max());
  // detach() as a pod event of the sandbox, its lock taken (waited for until `deadline`).
  Status detachLocked(const std::string& sandbox, const std::string& claim_uid = "",
                      cni::Executor::Deadline deadline = cni::Executor::Deadline::max());
  // The sandbox's lock: waited for until `deadline` (for ever at Deadline::max()); not owned when
  // it passed first, then busy() is the answer.
  std::unique_lock<std::timed_mutex> lockSandbox(const std::string& sandbox,
                                                 cni::Executor::Deadline deadline);
  static Status busy(const std::string& sandbox);
  // The NetworkAttachmentDefinitions one attach read, by "namespace/name": each read once.
  using NadReads = std::map<std::string, Result<api::NetworkAttachmentDefinition>>;
  // attach()'s CNI work, the sandbox's lock held: each wanted VF not recorded Attached is added
  // (one recorded Adding is deleted first); the first failure ends it, named for the user.
  // How many it added.
  Result<size_t> addMissing(const nri::Pod& pod, Caller caller,
                            const std::vector<dra::Attachment>& wanted, dra::AttachRecord& record,
                            NadReads& reads, cni::Executor::Deadline deadline);
  // Whether every VF of the sandbox is attached as far as this process knows (an attach()
  // succeeded since its last detach()): CreateContainer's answer without a read.
  void markComplete(const std::string& sandbox, bool complete);
  void forgetDelFailures(const dra::AttachRecord& record, const dra::AttachedInterface& i);
  // After an attach: the pod's network-status annotation, within what the budget has left (the
  // sync worker's own timeout when `sync`); a write that may pass later is queued for retry.
  void announce(const dra::AttachRecord& record, bool sync, cni::Executor::Deadline deadline);
  Result<api::NetworkAttachmentDefinition> readNad(const std::string& ns, const std::string& name,
                                                   NadReads& reads) const;
  // The pod's VFs to attach; those of extended-resource claims with the networks of the pod's
  // annotation (dra/network_selection.h).
  Result<std::vector<dra::Attachment>> wantedFor(const nri::Pod& pod, NadReads& reads,
                                                 cni::Executor::Deadline deadline) const;
  Status add(dra::AttachRecord& record, const dra::Attachment& a, NadReads& reads,
             cni::Executor::Deadline deadline);
  Status del(const dra::AttachRecord& record, const dra::AttachedInterface& i,
             cni::Executor::Deadline deadline = cni::Executor::Deadline::max()) const;
  // The NAD's configuration as CNI runs it (deviceID and the pod's values in), parsed, and
  // checked against what the node allows.
  struct NadConfig {
    std::string text;
    cni::NetworkConfig parsed;
  };
  Result<NadConfig> nadConfig(const dra::Attachment& a, NadReads& reads) const;
  void writeStatuses(const std::set<std::string>& claim_uids) const;
  // Multus's network-status annotation on the record's pod (dra::networkStatus), in one merge
  // patch that carries the pod's UID (a namesake of another UID refuses it), waited for at most
  // `timeout`; nothing to write is Ok.
  Status writeNetworkStatus(const dra::AttachRecord& record,
                            std::chrono::milliseconds timeout) const;
  // The sync worker's retry of the writes in status_retries_ (attacher.cpp says how often and
  // how long).
  void retryNetworkStatus();
  std::shared_ptr<std::timed_mutex> lockOf(const std::string& sandbox);
  // Whether the interface leaves the record after its DEL: it succeeded, or it failed often and
  // long enough to be given up (said in the log and an Event); else the failure is counted (not
  // a timeout of a DEL `deadline` cut short: that one was slow).
  bool settleDel(const dra::AttachRecord& record, const dra::AttachedInterface& i,
                 const Status& del, cni::Executor::Deadline deadline);

  std::shared_ptr<kube::Client> client_;
  node::LocalState& local_;
  node::AttachRecords& records_;
  const AttacherOptions options_;
  cni::Executor cni_;
  kube::EventRecorder& recorder_;
  const kube::ObjectReference node_state_;
  // Failed DELs by "<sandbox>/<claim>/<device>": how many, since when; guarded by del_mu_.
  struct DelFailures {
    int count = 0;
    std::chrono::steady_clock::time_point first;
  };
  std::mutex del_mu_;
  std::map<std::string, DelFailures> del_failures_;
  std::mutex locks_mu_;
  std::map<std::string, std::weak_ptr<std::timed_mutex>> locks_;  // guarded by locks_mu_
  mutable std::mutex events_mu_;
  uint64_t events_ = 0;                         // guarded by events_mu_
  std::map<std::string, uint64_t> last_event_;  // sandbox -> events_ at its last event; ditto
  std::set<std::string> complete_;              // markComplete(); ditto
  mutable std::mutex sync_mu_;
  std::condition_variable_any sync_cv_;
  std::optional<Snapshot> sync_pending_;  // guarded by sync_mu_
  bool sync_running_ = false;             // guarded by sync_mu_
  // Sandboxes whose network-status write failed for a reason that may pass, by the attempts
  // made since; guarded by sync_mu_. StopPodSandbox drops its sandbox.
  std::map<std::string, int> status_retries_;
  std::jthread sync_worker_;  // last: stopped first
};

}  // namespace sriovdra::attach
