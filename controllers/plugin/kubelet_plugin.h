#pragma once
// The kubelet DRA plugin of the node agent: NodePrepareResources and NodeUnprepareResources for
// this driver's devices on this node (the gRPC services are in grpc_server.h).
// Prepare, per claim: read the ResourceClaim; it must be allocated and reserved for one pod, and
// each of our results must name this node's pool and a device the agent advertises and the host
// has. Then: merge the VfConfigs (dra/vf_config.h); record the claim as Preparing in the
// checkpoint with each VF's driver; bind the VFs the config asks for through sysfs; write a CDI
// spec for the claim and one for the pod (dra/cdi.h) and the Multus device-info file; record the
// claim as Prepared; add our entries to the claim's status.devices with a merge patch guarded
// by the claim's resourceVersion (other drivers' entries stay). The decision is
// dra::planPrepare(); this class fetches its inputs and applies it. A claim prepared before gets
// the same answer without touching the host. Unprepare undoes all of it, also after a restart and
// for claims already deleted, and for claims a lost checkpoint forgot (from their CDI spec on
// disk). Calls are serialized; one claim's failure never fails another. The
// agent reads the checkpoint (never tears down a prepared VF) and holds the host lock while it
// changes VFs.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/resource.h"
#include "dra/checkpoint.h"
#include "dra/prepare.h"
#include "host/prepared.h"
#include "host/sysfs.h"
#include "kube/client.h"
#include "plugin/attach_records.h"
#include "plugin/dra_driver.h"

namespace prometheus {
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus

namespace sriovdra::plugin {

struct KubeletPluginOptions {
  std::string driver_name;
  std::string node_name;
  std::string state_dir;                  // checkpoint.json
  std::string cdi_root;                   // CDI spec files
  std::string device_info_dir;            // Multus device-info files ("" = none written)
  std::set<std::string> allowed_drivers;  // VfConfig drivers beyond vfio-pci and the VF's own
  std::chrono::milliseconds status_retry{100};
  // Standalone mode: the NRI attacher's records, so the status written at prepare keeps a pod's
  // network data (nullptr: Multus mode, none).
  const AttachRecords* attach_records = nullptr;
};

// The device `name` as the agent publishes it in this node's ResourceSlices, if it does.
using AdvertisedLookup = std::function<std::optional<api::SliceDevice>(const std::string& name)>;
// True when the VF (PCI address) belongs to a node-policy VF group with needVhostNet.
using VhostNetLookup = std::function<bool(const std::string& pci_address)>;

class KubeletPlugin : public DraDriver, public host::PreparedSource {
 public:
  KubeletPlugin(std::shared_ptr<kube::Client> client, std::shared_ptr<host::Sysfs> sysfs,
         AdvertisedLookup advertised, KubeletPluginOptions options, VhostNetLookup vhost_net = nullptr);
  ~KubeletPlugin() override;

  // Reads the checkpoint. A corrupt one is moved aside (its name is in the error) and the plugin
  // starts empty; the caller reports it.
  Status load();

  std::map<std::string, PrepareResult> prepare(const std::vector<ClaimRef>& claims) override;
  std::map<std::string, std::string> unprepare(const std::vector<ClaimRef>& claims) override;

  host::PreparedVfs prepared() const override;
  // The checkpoint, the claims the API server shows allocated from this node's pool (any state)
  // and the CDI specs of ours on disk (dra/in_use.h).
  Result<host::PreparedVfs> inUse() const override;
  std::unique_lock<std::mutex> holdHost() override;
  dra::Checkpoint checkpoint() const;

 private:
  Result<std::vector<PreparedDeviceResult>> prepareClaim(const ClaimRef& ref);
  Result<api::ResourceClaim> readClaim(const ClaimRef& ref);
  // What planPrepare() needs; `earlier` holds the checkpoint's record the input points to.
  dra::PrepareInput gather(const ClaimRef& ref, const api::ResourceClaim& claim,
                           dra::PreparedClaim& earlier);
  // Binds, then writes the CDI specs and device-info files (host lock held).
  Status applyPlan(dra::PreparePlan& plan);
  // Undoes a failed applyPlan(): drivers back, files removed, the record dropped; `error` back.
  Status undo(const dra::PreparedClaim& claim, Status error);
  Status unprepareClaim(const std::string& uid);
  // Unprepare of a claim the checkpoint does not hold (lost, corrupt, or prepared by a process
  // that died before recording it): whatever its CDI spec on disk names is undone; VFs on a
  // user-space driver go back to their default driver, their device-info files and the pod
  // specs that name only them are removed, then the spec itself. Nothing found: done.
  Status cleanUpUnrecorded(const std::string& uid);
  Status restoreDrivers(const dra::PreparedClaim& claim);
  Status removeFiles(const dra::PreparedClaim& claim);
  Status writePodSpec(const std::string& pod_uid);
  Status save();
  void writeClaimStatus(const api::ResourceClaim& claim, const dra::PreparedClaim& prepared);
  std::vector<PreparedDeviceResult> results(const dra::PreparedClaim& claim) const;

  std::shared_ptr<kube::Client> client_;
  std::shared_ptr<host::Sysfs> sysfs_;
  AdvertisedLookup advertised_;
  const KubeletPluginOptions options_;
  VhostNetLookup vhost_net_;

  std::mutex calls_mu_;       // one prepare/unprepare at a time
  std::mutex host_mu_;        // sysfs changes: the plugin's and the agent's
  mutable std::mutex cp_mu_;  // guards checkpoint_
  dra::Checkpoint checkpoint_;

  prometheus::Counter* prepare_ok_;
  prometheus::Counter* prepare_failed_;
  prometheus::Counter* unprepare_ok_;
  prometheus::Counter* unprepare_failed_;
  prometheus::Histogram* prepare_seconds_;
  prometheus::Histogram* unprepare_seconds_;
  prometheus::Gauge* prepared_claims_;
};

}  // namespace sriovdra::plugin
