#pragma once
// The kubelet DRA plugin of the node agent: NodePrepareResources and NodeUnprepareResources for
// this driver's devices on this node (the gRPC services are in grpc_server.h).
// Prepare, per claim (read, checked and serialized by the helper, helper.h): it must
// be reserved for one pod, and each of our results must name this node's pool and a device the
// agent advertises and the host has. Then: merge the VfConfigs (dra/vf_config.h); record the claim
// as Preparing in the checkpoint with each VF's driver; bind the VFs the config asks for through
// sysfs; write a CDI spec for the claim and one for the pod (dra/cdi.h), the Multus device-info
// file and, when enabled, the KEP-5304 metadata files (dra/device_metadata.h); record the claim as
// Prepared; add our entries to the claim's status.devices with a merge patch guarded by the claim's
// resourceVersion (other drivers' entries stay). The decision is dra::planPrepare(); this class
// fetches its inputs and applies it. A claim prepared before gets the same answer without touching
// the host. Unprepare undoes all of it, also after a restart and for claims already deleted, and
// for claims a lost checkpoint forgot (from their CDI spec on disk). One claim's failure never
// fails another. The checkpoint, the view of what the node advertises, the host lock and the claim
// status writer are the node's (node/state/local_state.h): the agent reads the same checkpoint, so
// it never tears down a prepared VF.
#include <chrono>
#include <filesystem>
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
#include "host/sysfs.h"
#include "kube/client.h"
#include "node/kubelet_plugin/dra_driver.h"
#include "node/state/local_state.h"

namespace sriovdra::kubelet_plugin {

struct KubeletPluginOptions {
  std::string driver_name;
  std::string node_name;
  std::string cdi_root;                   // CDI spec files
  std::string device_info_dir;            // Multus device-info files ("" = none written)
  std::set<std::string> allowed_drivers;  // VfConfig drivers beyond vfio-pci and the VF's own
  bool attaches = false;  // the agent attaches VFs itself (standalone mode): they need a NAD
  // KEP-5304 device metadata files (dra/device_metadata.h) under this plugin data directory,
  // mounted into the claim's containers through CDI; "" = none (--enable-device-metadata).
  std::string metadata_dir;
  // Called first when a claim is unprepared, with its UID (standalone mode: the attacher's
  // detachClaim, for pods whose sandbox end the runtime never reported); a failure fails the
  // unprepare, which the kubelet retries. Empty: nothing.
  std::function<Status(const std::string& claim_uid)> detach_claim;
};

class KubeletPlugin : public DraDriver {
 public:
  KubeletPlugin(std::shared_ptr<kube::Client> client, std::shared_ptr<host::Sysfs> sysfs,
                node::LocalState& local, KubeletPluginOptions options);
  ~KubeletPlugin() override;

  std::map<std::string, PrepareResult> prepare(
      const std::vector<api::ResourceClaim>& claims) override;
  std::map<std::string, std::string> unprepare(const std::vector<ClaimRef>& claims) override;

 private:
  Result<std::vector<PreparedDeviceResult>> prepareClaim(const api::ResourceClaim& claim);
  // Whether what prepare made for a claim recorded Prepared is still on the host: its CDI spec
  // and each VF on the driver its VfConfig asked for (a reboot loses both).
  bool stillApplied(const dra::PreparedClaim& claim) const;
  // What planPrepare() needs; `earlier` holds the checkpoint's record the input points to.
  dra::PrepareInput gather(const api::ResourceClaim& claim, dra::PreparedClaim& earlier);
  // Binds, then writes the CDI specs, device-info and metadata files (host lock held).
  Status applyPlan(dra::PreparePlan& plan, const api::ResourceClaim& claim);
  // With metadata on: each request's metadata file and its CDI spec; the devices of the request
  // get its CDI device ID.
  Status writeMetadata(dra::PreparePlan& plan, const api::ResourceClaim& claim);
  // The metadata files and CDI specs of the claim; ns/name "" for a claim the checkpoint lost
  // (its files are found through its specs).
  Status removeMetadata(const std::string& uid, const std::string& ns, const std::string& name);
  // The metadata file a metadata CDI spec of ours mounts, if it lies under our directory.
  std::optional<std::filesystem::path> mountedMetadataFile(const std::string& spec_path) const;
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
  // The pod's CDI spec naming every VF prepared for it (none left: removed).
  Status writePodSpec(const std::string& pod_uid);
  std::vector<PreparedDeviceResult> results(const dra::PreparedClaim& claim) const;

  std::shared_ptr<kube::Client> client_;
  std::shared_ptr<host::Sysfs> sysfs_;
  node::LocalState& local_;
  const KubeletPluginOptions options_;
};

}  // namespace sriovdra::kubelet_plugin
