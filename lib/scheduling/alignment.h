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
#include "scheduling/allocator.h"

namespace sriovdra::scheduling {

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

// A ResourceSlice as the alignment reads it: its pool and node and, per device, the placement
// attributes, as plain fields (about 200 bytes a device, a fifth of its JSON), so an operator can
// cache every slice of a large cluster.
struct PublishedDevice {
  std::string name;
  std::string pcie_root;    // resource.kubernetes.io/pcieRoot
  std::string pci_address;  // VFs: pciAddress; others: pciBusID (or gpu.nvidia.com/pcieBusID)
  std::string pf;           // VFs: pfPciAddress
  std::string pf_name;      // VFs: PFName
  int64_t numa = -1;        // dra.net/numaNode of a VF
};
struct SlicePlacements {
  kube::ObjectMeta metadata;
  std::string driver;
  std::string pool;
  std::string node;
  std::vector<PublishedDevice> devices;
  static SlicePlacements of(const api::ResourceSlice& slice);
  static Result<SlicePlacements> decode(const json::Value& v);
};

// Indexes slices by pool and states by node (linear in their number); placements are computed
// when asked for, so a report over a few allocated devices does not place every published one.
class ClusterTopology {
 public:
  // Pointers, so that callers holding informer caches need not copy them; they must outlive
  // the topology.
  ClusterTopology(const std::vector<const SlicePlacements*>& slices,
                  const std::vector<const api::SriovNodeState*>& states);
  // nullopt when no slice publishes the device.
  std::optional<DevicePlacement> placement(const DeviceId& id) const;
  // Every published device.
  std::map<DeviceId, DevicePlacement> devices() const;

 private:
  DevicePlacement place(const SlicePlacements& slice, const PublishedDevice& d) const;

  // (driver, pool) -> the slices publishing it.
  std::map<std::pair<std::string, std::string>, std::vector<const SlicePlacements*>> pools_;
  std::map<std::string, const api::SriovNodeState*> states_;  // by node
};

// What the alignment report reads of a claim and nothing else, for caches that keep claims only
// for it (kube::Informer::setTransform): its name and namespace, allocation results and node,
// and the pods it is reserved for.
void trimForAlignment(api::ResourceClaim& claim);

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

}  // namespace sriovdra::scheduling
