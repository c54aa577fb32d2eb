#pragma once
// The node agent's controller: makes the host match this node's SriovNodeState.spec and reports
// what is there.
//   1. discover the PCI topology (sysfs, netlink), plan (host/plan.h), apply the plan (the only
//      writer of sysfs and devlink), discover again; repeat while the plan has work (VFs appear
//      before their drivers can be set), at most a few passes;
//   2. publish the node's ResourceSlices (dra/slices.h) through its SlicePublisher
//      (slice_publisher.h), which writes only slices that changed and recreates slices someone
//      deleted;
//   3. write status (an update of the status subresource, field manager sriov-dra-agent, only
//      when it changed):
//      PFs/VFs, GPUs, PCIe tree, alignment, syncStatus, lastSyncError, conditions Ready,
//      Progressing, Degraded, Blocked, observedGeneration.
// A spec change that leaves spec.interfaces as the last pass that succeeded left them changes
// only what is advertised: its slices are published first, from the topology that pass reported
// (its status), and then the pass runs as above; where its own discovery finds the host changed
// since, the slices it builds differ and are published too. The host part of the spec is
// `interfaces`; `devices` is what is advertised.
// Runs again on every spec change, reboot grant, slice change and every --resync-period, so VFs
// created or removed by anyone are noticed. PFs it configured are remembered in --state-dir, so
// only those are ever reset. Firmware changes that need a reboot are written for the next boot, and
// the node is rebooted only when the operator grants it (host/reboot.h). A VF a pod uses is never
// destroyed or rebound: in use is what the node's checkpoint, the API server's claims and the CDI
// specs on disk say (node/state/local_state.h); while that cannot be known, the changes wait
// (Blocked=True, reason InUseUnknown, Event) and retry. Its SriovNodeState comes from the node's
// cache (LocalState), which the process starts before the agent; its slices from its publisher.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/node_state.h"
#include "api/resource.h"
#include "dra/slices.h"
#include "host/netlink.h"
#include "host/plan.h"
#include "host/rdma.h"
#include "host/reboot.h"
#include "host/sync_status.h"
#include "host/sysfs.h"
#include "kube/controller.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "node/agent/slice_publisher.h"
#include "node/state/local_state.h"

namespace sriovdra::agent {

struct AgentOptions {
  std::string node_name;
  std::string namespace_;
  std::string state_dir;
  std::chrono::milliseconds resync_period{std::chrono::seconds(30)};
  int max_passes = 4;
  // The InfiniBand VF GUID pool (host/guids.h), read when the agent starts; without the file,
  // GUIDs derived from the node, the PF and the VF.
  std::string ib_guid_pool = "/etc/sriov-operator/infiniband/guids";
};

class Agent {
  struct Converged {
    int64_t generation = 0;                  // of the spec that pass applied
    std::vector<api::Interface> interfaces;  // that spec's host part
  };

 public:
  // `rebooter` null: the agent never reboots the node (a person or a reboot tool does).
  Agent(std::shared_ptr<kube::Client> client, std::shared_ptr<host::Sysfs> sysfs,
        std::shared_ptr<host::Netlink> netlink, std::shared_ptr<host::Firmware> firmware,
        std::shared_ptr<host::Rebooter> rebooter, std::shared_ptr<const host::Rdma> rdma,
        node::LocalState& local, AgentOptions options, kube::EventRecorder& events);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  void start();
  void stop();
  // The last reconcile succeeded (host matches the spec, status and slices written).
  bool ready() const;
  // At least one reconcile ran to the end (whatever its outcome): the basis of /readyz.
  bool reconciledOnce() const;
  // Whether Mellanox firmware may be changed (SriovOperatorConfig disablePlugins: [mellanox]
  // turns it off; on by default). A change runs a pass.
  void setFirmwareChanges(bool on);

 private:
  // Queues the agent's one key (from the caches' handlers and the slice publisher).
  void kick();
  Result<kube::ReconcileResult> reconcile(const std::string& key);
  // Writes the status (kube::Client::writeStatus) under the newest resourceVersion the agent
  // knows of its state: the cached one or its own last write's.
  Status writeStatus(const api::SriovNodeState& state, const api::SriovNodeStateStatus& status);
  // Plans and applies changes to the host until it matches the spec (or max_passes, or a
  // failure); the first change writes an InProgress status. Before the first change that
  // destroys or rebinds a VF it asks which VFs are in use beyond the checkpoint
  // (LocalState::inUse()); while that cannot be known, nothing changes. Returns the last
  // discovery; errors, blocked PFs and an unknown in-use set go to `outcome`.
  Result<host::Topology> converge(const api::SriovNodeState& state, std::set<std::string>& record,
                                  api::SriovNodeStateStatus& status, host::SyncOutcome& outcome);
  // Reads the firmware of the Mellanox NICs the spec may need changed (host::firmwareToRead),
  // writes the next-boot values planFirmware gives, and returns the PFs that wait for the reboot;
  // the reasons for it and any error go to `outcome`.
  std::set<std::string> configureFirmware(const api::SriovNodeStateSpec& spec,
                                          const host::Topology& topology,
                                          host::SyncOutcome& outcome);
  // Applies the spec's RDMA namespace mode (host/rdma_mode.h): the modprobe option written or
  // removed, a reboot reason added to `outcome` while the kernel runs in another mode; the
  // kernel's mode goes to status.system.rdmaMode.
  void configureRdmaMode(const api::SriovNodeStateSpec& spec, api::SriovNodeStateStatus& status,
                         host::SyncOutcome& outcome);
  // While firmware values or the RDMA mode wait for a reboot (outcome.reboot), reboots the node
  // once the operator granted it (host/reboot.h; the record is <state-dir>/reboot.json); the step
  // goes to `outcome`.
  void rebootIfGranted(const api::SriovNodeState& state, host::SyncOutcome& outcome);
  // Publishes the slices, then writes the status (and its Event) when it changed. `ahead`: the
  // slices publishAhead() wrote in this pass, if it did.
  Status report(const api::SriovNodeState& state, api::SriovNodeStateStatus status,
                const host::Topology& topology, host::SyncOutcome outcome,
                const std::optional<std::vector<dra::SliceSummary>>& ahead);
  // When only what the spec advertises changed since `last` (see the top of this file), publishes
  // the slices from the topology in the state's status and returns them; otherwise, or when a
  // write fails (the pass then publishes as usual), nothing.
  std::optional<std::vector<dra::SliceSummary>> publishAhead(const api::SriovNodeState& state,
                                                             const std::optional<Converged>& last);
  // The node's slices for `devices` on `pfs`, numbered on from `previous` (dra::buildSlices),
  // without the VFs discovery found assigned (in a pod's network namespace) that no claim of
  // this driver is prepared with: someone else's pod uses them.
  dra::SliceSet buildSlices(const std::vector<api::Device>& devices,
                            const std::vector<api::InterfaceExt>& pfs,
                            const std::vector<dra::SliceSummary>& previous) const;
  std::set<std::string> loadRecord() const;
  Status saveRecord(const std::set<std::string>& record) const;
  // Writes <state-dir>/<name> atomically, making the directory first.
  Status writeStateFile(const std::string& name, std::string_view content) const;

  std::shared_ptr<kube::Client> client_;
  std::shared_ptr<host::Sysfs> sysfs_;
  std::shared_ptr<host::Netlink> netlink_;
  std::shared_ptr<host::Firmware> firmware_;
  std::shared_ptr<host::Rebooter> rebooter_;
  std::shared_ptr<const host::Rdma> rdma_;
  node::LocalState& local_;
  const AgentOptions options_;
  const host::GuidAssigner guids_;
  kube::EventRecorder& events_;

  kube::Informer<api::SriovNodeState>& state_;  // local_'s cache
  kube::Controller controller_;
  SlicePublisher slices_;
  mutable std::mutex mu_;
  bool ready_ = false;            // guarded by mu_
  bool reconciled_once_ = false;  // guarded by mu_
  std::atomic<bool> firmware_changes_{true};
  // The last pass, when it left the host matching the spec and reported it (status written, or
  // unchanged). Only reconcile() touches it: the controller never runs its one key twice at once.
  std::optional<Converged> converged_;
  // What the last status write was answered with; a status write is guarded by the newer of it
  // and the cached state's. Only reconcile() touches it.
  std::string status_version_;
};

// The node's SriovNodeState status as the agent writes it (kube::Client::writeStatus, field
// manager sriov-dra-agent): apiVersion, kind, metadata.name and namespace, status.
json::Document statusDocument(const std::string& ns, const std::string& node,
                              const api::SriovNodeStateStatus& status);

}  // namespace sriovdra::agent
