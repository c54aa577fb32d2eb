#pragma once
// What the host library reports about a node, as plain values other libraries may use without
// linking the sysfs code: the discovered topology and what a container needs to use a VF.
#include <set>
#include <string>
#include <vector>

#include "api/node_state.h"

namespace sriovdra::host {

struct Topology {
  std::vector<api::InterfaceExt> pfs;  // with VFs, sorted by PCI address
  std::vector<api::Gpu> gpus;
  std::vector<api::PcieRoot> roots;
  std::vector<std::string> warnings;
  // The PCI drivers the kernel has (sys/bus/pci/drivers: loaded modules); empty = not read.
  std::set<std::string> pci_drivers;
};

// What a container needs to use a VF, read when the VF is prepared for a pod.
struct VfAccess {
  std::string driver;       // bound driver, "" = none
  std::string iommu_group;  // group number
  bool noiommu = false;     // a VFIO no-IOMMU group: the node is /dev/vfio/noiommu-<group>
  std::string netdev;
  std::string rdma_device;  // e.g. mlx5_3, "" = none
  std::string uverbs;       // verbs character device, e.g. uverbs3 ("" = none)
  std::string umad;         // MAD character devices
  std::string issm;
};

}  // namespace sriovdra::host
