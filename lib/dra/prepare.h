#pragma once
// What the kubelet plugin does for one claim, decided from what it read (pure; the plugin reads
// the claim, the node's devices and the host, calls these, and applies the result).
//
// planPrepare(): the claim (which the kubelet plugin's helper checked is the one kubelet named)
// must be allocated and reserved for exactly one pod; each of its results for `driver` must be in
// this node's pool and a VF of this node the host has. The scheduler's allocation is the contract:
// a VF allocated to the claim is prepared also when it stopped being advertised since (a policy
// changed before the pod started); advertising decides future allocations only. The plan records
// every such VF with its effective VfConfig (dra/vf_config.h) and its original driver (from an
// interrupted earlier attempt if there was one, so a crash between binding and recording never
// loses the driver to restore), and says which VFs must be bound to another driver first (also,
// when preparing again, a VF whose claim names no driver and that was prepared on a user-space
// driver but is on another now: back to the one it was prepared on). The
// driver a VfConfig names must be vfio-pci, the VF's own kernel driver ("default", or its name) or
// one the administrator allowed: a claim author never makes the agent bind a VF to an arbitrary
// kernel driver as root. A resource filter's `drivers` (PrepareInput::device_drivers) picks the
// driver of a claim that names none and limits the others. A VfConfig's netAttachDefNamespace,
// accepted for compatibility, must be empty or the claim's own namespace: the agent reads
// NetworkAttachmentDefinitions for a claim only where its author works. Where the agent attaches
// VFs itself (standalone mode), a VF that stays on a kernel driver needs the
// NetworkAttachmentDefinition its VfConfig names, or the pod would start without the interface:
// refused as the reference driver refuses it (which also refuses vfio-pci VFs without one; those
// are devices the pod opens, and pass here), except in a claim kube-scheduler made for a
// container's extended resource (annotated resource.kubernetes.io/extended-resource-claim: "true"),
// whose network the pod's k8s.v1.cni.cncf.io/networks annotation names (recorded:
// PreparedClaim::extended_resource, each VF's k8s.cni.cncf.io/resourceName). A claim with none of
// our results has an empty plan. Every refusal is kInvalidArgument with a message naming the claim
// and the device.
//
// deviceArtifacts(): once a VF is bound as planned, its CDI device for the claim and, when the
// device carries the Multus attributes, its device-info file.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/resource.h"
#include "dra/cdi.h"
#include "dra/checkpoint.h"
#include "host/model.h"

namespace sriovdra::dra {

struct PrepareInput {
  const api::ResourceClaim* claim = nullptr;
  std::string driver;
  std::string node;
  // The claim's devices of this node, by name: as advertised, or for a device no longer
  // advertised as the node discovered it (built-in attributes only); absent: not a VF here.
  std::map<std::string, api::SliceDevice> devices;
  // The host's view of each VF the claim names, by PCI address (absent or an error: not there).
  std::map<std::string, Result<host::VfAccess>> host;
  const PreparedClaim* earlier = nullptr;  // the checkpoint's record of this claim, if any
  // Drivers a VfConfig may name besides vfio-pci and the VF's own kernel driver (an
  // administrator's choice: the agent's --allowed-vf-drivers).
  std::set<std::string> allowed_drivers;
  // VFs (PCI addresses) whose node-policy VF group has needVhostNet: their config gets
  // addVhostMount unless the claim says otherwise.
  std::set<std::string> vhost_net_vfs;
  // The agent attaches VFs with CNI through their NetworkAttachmentDefinition (standalone mode).
  bool attaches = false;
  // By device name: the drivers its SriovResourcePolicy's filter lets claims use it with
  // (api::Device::drivers; "default" = its kernel driver). A claim that names no driver gets
  // the first; one that names another is refused. Absent or empty: no such limit.
  std::map<std::string, std::vector<std::string>> device_drivers;
};

struct PlannedVf {
  std::optional<std::string> rebind_to;  // bind the VF to this driver ("" = its default) first
  api::SliceDevice device;               // as PrepareInput::devices has it
};

struct PreparePlan {
  PreparedClaim claim;         // state kPreparing; devices in the claim's result order
  std::vector<PlannedVf> vfs;  // one per claim.devices entry
};

// The PCI addresses of the devices in `devices` that the claim's results for `driver` name
// (what the plugin must read from the host before planning).
std::vector<std::string> addressesToRead(const api::ResourceClaim& claim, const std::string& driver,
                                         const std::map<std::string, api::SliceDevice>& devices);

Result<PreparePlan> planPrepare(const PrepareInput& in);

// True when a VF whose config wants `target` ("" = its default driver) must be rebound from
// `current`: a VF on a userspace driver (vfio-pci) goes back to its kernel driver by default.
bool needsRebind(const std::string& target, const std::string& current);

struct DeviceArtifacts {
  CdiDevice cdi;
  std::vector<std::string> cdi_device_ids;  // the claim's device, then the pod's
  std::string device_info_path;             // "" = none
  std::string device_info_json;
  PluginInfo plugin_info;  // devicePluginInfo of `cdi` (cdi.h)
};

Result<DeviceArtifacts> deviceArtifacts(const PreparedClaim& claim, const PreparedDevice& device,
                                        const host::VfAccess& current,
                                        const api::SliceDevice& attributes,
                                        const std::string& driver,
                                        const std::string& device_info_dir);

}  // namespace sriovdra::dra
