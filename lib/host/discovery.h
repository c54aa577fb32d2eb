#pragma once
// Discovers a node's PCI topology through a Sysfs: SR-IOV capable network PFs with their VFs,
// GPUs (NVIDIA, display/3D class), and the PCIe tree (root complexes -> switches -> devices)
// with NUMA nodes. The PCIe root is computed as Kubernetes computes
// resource.kubernetes.io/pcieRoot: the first component after sys/devices/ of the resolved
// sys/bus/pci/devices/<bdf> link. Read-only. A device that cannot be read is skipped with a
// warning; discovery itself fails only when sys/bus/pci/devices cannot be listed. Through the
// Netlink: every netdev at once (one RTM_GETLINK dump: name, address, MTU, flags, link type,
// altNames, by the PCI device the kernel says it sits on), each PF's eSwitch mode ("legacy"
// when its driver has none) and an InfiniBand PF's VF GUIDs (port GUIDs, "" when its driver
// reports none). From a kernel that does not name netdevs' parent devices, or when
// the dump fails (a warning), a device's netdev is read from sysfs (net/<name>/...) instead.
// A VF on a network driver that shows no netdev here while its PF shows one has its netdev in
// another network namespace (sysfs and rtnetlink show this namespace's netdevs only): it is
// marked assigned "netns", in use by a pod, whoever gave it (api::kAssignedNetns). Drivers that
// make no netdev below the VF (vfio-pci and its variants, UIO, pci-stub, virtio-pci) never mark
// it; an InfiniBand PF without IPoIB has no netdev, so its VFs are never marked; a driver that
// registers its netdev late (iavf) marks its VF until it has.
#include <map>
#include <string>
#include <vector>

#include "api/node_state.h"
#include "host/model.h"
#include "host/netlink.h"
#include "host/sysfs.h"

namespace sriovdra::host {

Result<Topology> discover(const Sysfs& sysfs, const Netlink& netlink);

// The administrative MAC of each VF (by PCI address) of the spec's Ethernet PFs that have VFs in
// a netdevice group, as their PFs report them (one rtnetlink request per such PF): what
// planHost compares with each VF's own MAC. A PF that does not answer is left out, its reason
// in `warnings`.
std::map<std::string, std::string> readVfAdminMacs(const Netlink& netlink,
                                                   const api::SriovNodeStateSpec& spec,
                                                   const Topology& discovered,
                                                   std::vector<std::string>& warnings);

struct PciPlacement {
  std::string dir;                   // the resolved device directory, "sys/devices/pci0000:00/..."
  std::string root;                  // "pci0000:00"
  std::vector<std::string> bridges;  // root port, then switch ports, outermost first
  std::string pcie_switch;           // upstream port of the switch holding it, "" if none
};
// Where the device with this address sits (from the resolved sys/bus/pci/devices link).
Result<PciPlacement> placement(const Sysfs& sysfs, const std::string& bdf);

// NotFound when there is no PCI function with this address.
Result<VfAccess> readVfAccess(const Sysfs& sysfs, const std::string& bdf);

// For each GPU, the advertised VFs (device names) under its root and under its switch, and
// whether a shared root implies a shared switch on this node. Pure.
api::Alignment computeAlignment(const Topology& topology,
                                const std::vector<api::Device>& advertised);

}  // namespace sriovdra::host
