#pragma once
// Where allocated devices sit and how well GPU/VF pairs are aligned. Pure.
// A ClusterTopology joins the ResourceSlices (device -> PCI address, pcieRoot, NUMA) with the
// SriovNodeStates the agents report (as api::NodeReport) (GPUs and PFs -> PCIe switch and NUMA
// node). A GPU is a device of another driver whose pciBusID the node reports as a GPU (or any
// gpu.nvidia.com device); a VF is a device of our driver. A pair is classified, best first: same
// switch, same root, same NUMA (different root), cross NUMA, unknown (a side without a root). The
// report pairs every GPU of a claim with the best aligned VF of the same claim and checks that the
// claim's VFs use distinct PFs.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/node_state.h"
#include "api/resource.h"
#include "host/pci.h"
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

// A device of a ResourceSlice as the alignment reads it: its placement attributes.
struct PublishedDevice {
  std::string name;
  std::string pcie_root;    // resource.kubernetes.io/pcieRoot
  std::string pci_address;  // VFs: pciAddress; others: pciBusID (or gpu.nvidia.com/pcieBusID)
  std::string pf;           // VFs: pfPciAddress
  std::string pf_name;      // VFs: PFName
  int64_t numa = -1;        // dra.net/numaNode of a VF
  bool operator==(const PublishedDevice&) const = default;
};

// A ResourceSlice as the alignment reads it: its pool and node and its devices' placements,
// small enough that an operator caches every slice of a large cluster (10,000 nodes x 256 VFs):
// the distinct (pcieRoot, PF, PF name, NUMA node) of its devices are kept once, and devices
// named after their PCI address (ours: api::deviceName(pciAddress)) whose addresses step evenly
// (host::PciRun) and that share those four are kept as one run, so the 128 VFs of one PF in a
// slice take one. Other devices (GPUs) are kept one by one. The devices part is interned
// (base/interner.h): the slices of nodes alike share it. Lossless for PublishedDevice.
struct SlicePlacements {
  kube::ObjectMeta metadata;
  std::string driver;
  std::string pool;
  std::string node;

  static SlicePlacements of(const api::ResourceSlice& slice);
  static Result<SlicePlacements> decode(const json::Value& v);
  // The devices in the slice's order.
  std::vector<PublishedDevice> devices() const;
  std::optional<PublishedDevice> device(std::string_view name) const;
  size_t runs() const;

  struct Devices;

 private:
  std::shared_ptr<const Devices> devices_;  // never null once made by of()
};

struct SlicePlacements::Devices {
  struct Location {
    std::string pcie_root, pf, pf_name;
    int64_t numa = -1;
    auto operator<=>(const Location&) const = default;  // NOLINT(modernize-use-nullptr)
  };
  struct Named {
    std::string name, pci_address;
    auto operator<=>(const Named&) const = default;  // NOLINT(modernize-use-nullptr)
  };
  struct Entry {
    host::PciRun addresses;                          // devices named api::deviceName(address), or
    std::optional<Named> single;                     // one device named otherwise
    uint32_t location = 0;                           // index into locations
    auto operator<=>(const Entry&) const = default;  // NOLINT(modernize-use-nullptr)
  };
  std::vector<Location> locations;
  std::vector<Entry> entries;
  void add(PublishedDevice d);
  PublishedDevice at(const Entry& e, const std::string& name, const std::string& pci) const;
  auto operator<=>(const Devices&) const = default;  // NOLINT(modernize-use-nullptr)
};

// Indexes slices by pool and states by node (linear in their number); placements are computed
// when asked for, so a report over a few allocated devices does not place every published one.
class ClusterTopology {
 public:
  // Pointers, so that callers holding informer caches need not copy them; they must outlive
  // the topology.
  ClusterTopology(const std::vector<const SlicePlacements*>& slices,
                  const std::vector<api::NodeReport>& states);
  // nullopt when no slice publishes the device.
  std::optional<DevicePlacement> placement(const DeviceId& id) const;
  // Every published device.
  std::map<DeviceId, DevicePlacement> devices() const;

 private:
  DevicePlacement place(const SlicePlacements& slice, const PublishedDevice& d) const;

  // (driver, pool) -> the slices publishing it.
  std::map<std::pair<std::string, std::string>, std::vector<const SlicePlacements*>> pools_;
  std::map<std::string_view, api::NodeReport> states_;  // by node
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
