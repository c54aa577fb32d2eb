#pragma once
// CDI (Container Device Interface) specs for prepared VFs, with the device nodes and environment
// variables of the reference driver (<D> is the device name with '-' as '_'):
//   SRIOVNETWORK_VF_DEVICE_<D>=<PCI address>, SRIOVNETWORK_NET_ATTACH_DEF_NAME=<NAD>;
//   vfio-pci: /dev/vfio/<group> (host /dev/vfio/noiommu-<group> for no-IOMMU groups) and
//     /dev/vfio/vfio, SRIOVNETWORK_<D>_VFIO_DEVICE;
//   RDMA (an RDMA-capable VF on a network driver): uverbs, umad, issm and rdma_cm under
//     /dev/infiniband, SRIOVNETWORK_<D>_RDMA_{UVERB,UMAD,ISSM,CM,DEVICE};
//   addVhostMount: /dev/vhost-net and /dev/net/tun.
// One spec file per claim holds a device per VF ("<claim UID>-<device>"); one per pod holds the
// device "<pod UID>" with SRIOVNETWORK_PCI_ADDRESSES of every VF prepared for the pod. Pure: the
// plugin writes the files.
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "dra/checkpoint.h"
#include "dra/vf_config.h"
#include "host/model.h"

namespace sriovdra::dra {

inline constexpr std::string_view kCdiVendor = "sriovnetwork.k8snetworkplumbingwg.io";
inline constexpr std::string_view kCdiClass = "vf";
inline constexpr std::string_view kCdiVersion = "0.5.0";

struct CdiDeviceNode {
  std::string path;
  std::string host_path;  // "" = same as path
  bool operator==(const CdiDeviceNode&) const = default;
};

struct CdiMount {
  std::string host_path;
  std::string container_path;
  std::vector<std::string> options;
  bool operator==(const CdiMount&) const = default;
};

struct CdiDevice {
  std::string name;
  std::vector<std::string> env;
  std::vector<CdiDeviceNode> device_nodes;
  std::vector<CdiMount> mounts;
  bool operator==(const CdiDevice&) const = default;
};

struct VfEditsInput {
  std::string device_name;  // "0000-11-00-1"
  std::string pci_address;  // "0000:11:00.1"
  VfConfig config;          // effective
  host::VfAccess access;    // read after binding
  bool rdma_capable = false;
};

// The container edits of one VF, as the CDI device `cdi_name`. An RDMA-capable VF on a network
// driver without an RDMA device is an error (mlx5_ib not loaded?).
Result<CdiDevice> vfCdiDevice(std::string cdi_name, const VfEditsInput& in);
// The device plugin's info of a VF prepared with the container edits `vf` (checkpoint.h
// PluginInfo), read from its device nodes as the plugin's providers read theirs: rdma when it has
// /dev/infiniband nodes (with `rdma_device`), vfio with /dev/vfio/vfio, vhost with
// /dev/vhost-net.
PluginInfo devicePluginInfo(const CdiDevice& vf, const std::string& rdma_device);
// The pod-level device: SRIOVNETWORK_PCI_ADDRESSES=<a>,<b>,... (the reference driver's) and,
// per k8s.cni.cncf.io/resourceName <prefix>/<name> of its VFs, what the SR-IOV network device
// plugin gives a container of that resource: PCIDEVICE_<PREFIX>_<NAME>=<a>,... (upper case, '.'
// and '/' as '_') and PCIDEVICE_<PREFIX>_<NAME>_INFO={"<a>":{"generic":{"deviceID":"<a>"},
// "rdma":{...},...},...} (each VF's generic part and its PluginInfo, keys in Go's sorted order).
// A resource name with other characters than a DNS prefix's and a device-plugin name's
// ([A-Za-z0-9_-]), or whose variables another resource of the pod already set (x and x_info;
// a.b and a_b), gets none. `vfs` in PCI address order.
CdiDevice podCdiDevice(std::string pod_uid, const std::vector<PodVf>& vfs);

// "sriovnetwork.k8snetworkplumbingwg.io/vf=<device>"
std::string cdiQualifiedName(std::string_view device);
// A spec of `kind` ("<vendor>/<class>"; default: ours for VFs and pods).
json::Document cdiSpec(const std::vector<CdiDevice>& devices, const std::string& kind = "");
// "sriovnetwork.k8snetworkplumbingwg.io-vf_<id>.json": one file per claim or pod UID.
std::string cdiSpecFileName(std::string_view id);
// The inverse: the claim or pod UID of one of our spec file names, "" for any other name.
std::string cdiSpecId(std::string_view file_name);

}  // namespace sriovdra::dra
