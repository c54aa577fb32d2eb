#pragma once
// The node's local state, with one owner. The three parts of the agent process that act on this
// node's VFs each depend on it, one way, and on none of the others: the agent (creates and
// configures VFs, controllers/node/agent), the kubelet plugin (prepares them for claims,
// controllers/node/kubelet_plugin) and the NRI attacher (puts them into pods,
// controllers/node/attach).
//
//   the view of what the node publishes | its SriovNodeState (an informer cache; the agent
//                                       | reconciles on its events): advertised(),
//                                       | needsVhostNet(), driversOf(); the ResourceSlices
//                                       | are the agent's alone (node/agent/slice_publisher.h)
//   the prepared claims                 | <state-dir>/checkpoint.json: written atomically first,
//                                       | then memory changes; a failed write changes nothing
//   the attach records                  | <state-dir>/attach (attach_records.h)
//   the host lock                       | held while VFs are created, reset or rebound
//   which VFs are in use                | host::PreparedSource (prepared(), inUse())
//   our entries of status.devices       | writeClaimStatus(): the one writer, from the prepared
//                                       | claim and its attach records; the network data of
//                                       | the claim's metadata files with them
//
// Thread-safety: every method from any thread. The cache is read-only to the parts; the
// checkpoint is guarded here, so a part gets what it asks for (one claim, one pod's attachments)
// without copying the whole of it.
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "api/node_state.h"
#include "api/resource.h"
#include "dra/attach.h"
#include "dra/checkpoint.h"
#include "host/prepared.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "node/state/attach_records.h"

namespace prometheus {
class Gauge;
}  // namespace prometheus

namespace sriovdra::node {

struct LocalStateOptions {
  std::string driver_name;
  std::string node_name;
  std::string namespace_;  // of the SriovNodeStates
  std::string state_dir;   // checkpoint.json, attach/
  std::string cdi_root;    // our CDI spec files
  // KEP-5304 metadata files ("" = none; node/kubelet_plugin/kubelet_plugin.h).
  std::string metadata_dir;
  std::chrono::milliseconds status_retry{100};
};

class LocalState : public host::PreparedSource {
 public:
  LocalState(std::shared_ptr<kube::Client> client, LocalStateOptions options);
  ~LocalState() override;
  LocalState(const LocalState&) = delete;
  LocalState& operator=(const LocalState&) = delete;

  // The cache. Handlers are added (by the agent) before start().
  void start();
  void stop();
  bool synced() const;
  // Waits until synced, the timeout passes or stop is requested; returns synced().
  bool waitForSync(std::chrono::milliseconds timeout, const std::stop_token& stop) const;
  kube::Informer<api::SriovNodeState>& nodeStates() { return states_; }
  // The device as this node publishes it, if its SriovNodeState's spec lists it and the agent
  // would publish it: dra::buildSlices of the spec's device over the status's PFs, from which the
  // agent builds its slices. Not asked of the published slices: the agent's own slice write
  // reaches its cache a moment after the API server shows it, and a claim allocated from it in
  // that moment would lose its attributes (and with them Multus' device-info file).
  std::optional<api::SliceDevice> advertised(const std::string& device) const;
  // A VF of this node as its SriovNodeState's status says it was discovered, with the built-in
  // attributes only (what an allocated VF that is no longer advertised is prepared with).
  std::optional<api::SliceDevice> discovered(const std::string& device) const;
  // The PFs and their VFs as its SriovNodeState's status says they were discovered last.
  std::vector<api::InterfaceExt> discoveredPfs() const;
  // True when the VF is in a VF group of the spec whose node policy has needVhostNet.
  bool needsVhostNet(const std::string& pci_address) const;
  // The drivers claims may use the device with, as the spec lists them (empty: no limit).
  std::vector<std::string> driversOf(const std::string& device) const;

  // Reads the checkpoint. A corrupt one is moved aside (its name is in the error) and the node
  // starts without prepared claims; the caller reports it.
  Status load();
  std::optional<dra::PreparedClaim> claim(const std::string& uid) const;
  dra::Checkpoint checkpoint() const;
  // Records the claim (replacing the one of its UID), or forgets one.
  Status record(const dra::PreparedClaim& claim);
  Status forget(const std::string& uid);
  // The VFs of every claim prepared for the pod (its pod CDI spec).
  std::vector<dra::PodVf> podVfs(const std::string& pod_uid) const;
  // What the pod's VFs are to be attached as (dra::attachmentsFor).
  std::vector<dra::Attachment> attachmentsFor(const std::string& pod_uid,
                                              const std::string& interface_prefix) const;

  AttachRecords& attachRecords() { return records_; }
  // Writes our entries of the claim's status.devices from its prepared claim and attach records
  // (claim_status.h), and their network data into the claim's metadata files when they exist.
  // A claim not prepared (any more) has nothing to write: ok. An error names the claim.
  Status writeClaimStatus(const std::string& uid) const;

  host::PreparedVfs prepared() const override;
  // The checkpoint, the claims the API server shows allocated from this node's pool (any state)
  // and the CDI specs of ours on disk (dra/in_use.h).
  Result<host::PreparedVfs> inUse() const override;
  std::unique_lock<std::mutex> holdHost() override;

 private:
  Status writeMetadata(const dra::PreparedClaim& claim,
                       const std::vector<api::AllocatedDeviceStatus>& statuses) const;
  Status saveLocked();  // mu_ held

  std::shared_ptr<kube::Client> client_;
  const LocalStateOptions options_;
  kube::Informer<api::SriovNodeState> states_;
  AttachRecords records_;
  std::mutex host_mu_;
  mutable std::mutex mu_;
  dra::Checkpoint checkpoint_;  // guarded by mu_; what checkpoint.json holds
  prometheus::Gauge* prepared_claims_;
};

// One of our CDI spec files and the VFs it names.
struct CdiSpecOnDisk {
  std::string path;
  std::string id;  // claim or pod UID
  Result<std::vector<std::string>> addresses;
};
// Our CDI spec files under `root`; none when `root` does not exist.
Result<std::vector<CdiSpecOnDisk>> ourCdiSpecs(const std::string& root);

}  // namespace sriovdra::node
