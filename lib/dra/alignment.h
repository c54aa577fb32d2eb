#pragma once
// Where allocated devices sit and how well GPU/VF pairs are aligned. Pure.
// A ClusterTopology joins the ResourceSlices (device -> PCI address, pcieRoot, NUMA) with the
// SriovNodeStates the agents report (GPUs and PFs -> PCIe switch and NUMA node). A GPU is a
// device of another driver whose pciBusID the node reports as a GPU (or any gpu.nvidia.com
// device); a VF is a device of our driver.
// A pair is classified, best first: same switch, same root, same NUMA (different root), cross
// NUMA, unknown (a side without a root). The report pairs every GPU of a claim with the best
// aligned VF of the same claim and checks that the claim's VFs use distinct PFs.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/node_state.h"
#include "api/resource.h"
#include "dra/allocator.h"

namespace sriovdra::dra {

enum class PairAlignment { kSameSwitch, kSameRoot, kSameNuma, kCrossNuma, kUnknown };
inline constexpr PairAlignment kAllAlignments[] = {
    PairAlignment::kSameSwitch, PairAlignment::kSameRoot, PairAlignment::kSameNuma,
    PairAlignment::kCrossNuma, PairAlignment::kUnknown};
// "same switch", "same root", "same NUMA, different root", "cross NUMA", "unknown"
std::string_view alignmentName(PairAlignment a);
// same_switch, same_root, same_numa, cross_numa, unknown (metric labels, JSON)
std::string_view alignmentLabel(PairAlignment a);

struct DevicePlacement {
  DeviceId id;
  std::string node;
  std::string kind;  // "gpu", "vf" or "" (another device)
  std::string pci_address;
  std::string pcie_root;    // "" = unknown
  std::string pcie_switch;  // "" = directly on the root, or unknown
  int64_t numa = -1;
  std::string pf;       // VFs: the PF's PCI address
  std::string pf_name;  // VFs: the PF's netdev
};

PairAlignment classify(const DevicePlacement& gpu, const DevicePlacement& vf);

class ClusterTopology {
 public:
  // Pointers, so that callers holding informer caches need not copy them.
  ClusterTopology(const std::vector<const api::ResourceSlice*>& slices,
                  const std::vector<const api::SriovNodeState*>& states);
  // nullopt when no slice publishes the device.
  std::optional<DevicePlacement> placement(const DeviceId& id) const;
  const std::map<DeviceId, DevicePlacement>& devices() const { return devices_; }

 private:
  std::map<DeviceId, DevicePlacement> devices_;
};

struct ClaimAlignment {
  std::string namespace_;
  std::string name;
  std::string pod;  // the pod it is reserved for ("" = none)
  std::string node;
  std::vector<DevicePlacement> gpus;
  std::vector<DevicePlacement> vfs;
  struct Pair {
    std::string gpu;  // device names
    std::string vf;
    PairAlignment alignment;
  };
  std::vector<Pair> pairs;
  std::vector<std::string> shared_pfs;  // PFs that give more than one VF to the claim
};

// Every allocated claim with at least one device of our driver, sorted by namespace/name.
std::vector<ClaimAlignment> alignmentReport(const std::vector<const api::ResourceClaim*>& claims,
                                            const ClusterTopology& topology);

std::map<PairAlignment, int64_t> countPairs(const std::vector<ClaimAlignment>& report);

}  // namespace sriovdra::dra
