#pragma once
// The structured allocator with Kubernetes' semantics (k8s.io/dynamic-resource-allocation
// structured, the "incubating" variant kube-scheduler 1.37 runs with its default feature gates):
// per node, pools per (driver, pool name) from the slices that reach the node (by nodeName,
// allNodes, nodeSelector, or per device with perDeviceNodeSelection), highest generation only; a
// pool the node's slices do not complete is completed from the pool's other slices, and is
// skipped as obsolete when another slice has a newer generation; incomplete or invalid pools
// (duplicate device or counter set names, consumption of unknown counters) are skipped and named;
// pools with binding conditions after the others. Class selectors then request selectors (CEL),
// then the device's own node selection; ExactCount and All (All fails the node on an incomplete
// or invalid pool); firstAvailable in listed order; matchAttribute and distinctAttribute with
// fully qualified names (an unqualified attribute of a device counts under its driver's domain);
// devices allocated to other claims are skipped unless the request has adminAccess; shared
// counters (partitionable devices): a device fits only while no counter of its pool is consumed
// beyond its value by the allocated devices and the ones picked (a device already shared is not
// charged again); consumable capacity: a device with allowMultipleAllocations is taken by several
// requests while their shares (scheduling/capacity.h) fit its capacity; at most 32 devices per
// claim; depth-first search with backtracking over combinations, pools sorted by (driver, pool),
// slices by name, devices in slice order; the first complete solution wins. Pure; not thread-safe
// (it caches pools per node name, compiled request selectors and every selector's result per
// device, so a node keeps its labels for the life of an Allocator). A claim that does not fit a
// node comes back with reasons a person can act on: which request had no candidate and why, or
// which constraint failed with the values that were free.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/attributes.h"
#include "api/objects.h"
#include "api/resource.h"
#include "scheduling/capacity.h"
#include "scheduling/cel.h"
#include "scheduling/quantity.h"

namespace sriovdra::scheduling {

struct DeviceId {
  std::string driver;
  std::string pool;
  std::string device;
  auto operator<=>(const DeviceId&) const = default;  // NOLINT(modernize-use-nullptr)
  std::string toString() const { return driver + "/" + pool + "/" + device; }
};

struct ClusterNode {
  std::string name;
  std::map<std::string, std::string> labels;
};

struct PickedDevice {
  std::string request;  // "gpu" or "nic/fast" for a firstAvailable subrequest
  DeviceId id;
  const api::SliceDevice* device = nullptr;  // points into the Allocator's slices
  const api::ResourceSlice* slice = nullptr;
};

// kube-scheduler's limit on the devices of one claim (resource.k8s.io/v1 AllocationResultsMaxSize).
inline constexpr size_t kMaxDevicesPerClaim = 32;

struct NodeAllocation {
  std::string node;
  bool fits = false;
  std::vector<PickedDevice> devices;  // when it fits, in request order
  api::AllocationResult allocation;   // when it fits
  std::vector<std::string> reasons;   // when it does not: one line per problem
  // kube-scheduler's search met an error here (a selector failing on a device it reached, or a
  // constraint broken by a device allocationMode All must take): it then fails the pod as a whole,
  // on every node, until the claim or the devices change.
  std::string error;
};

namespace detail {  // allocator.cpp
struct Pool;
struct Alternative;
struct CounterState;
using PoolKey = std::pair<std::string, std::string>;  // (driver, pool)
}  // namespace detail

// The devices allocated to the claims (except the claim with UID `except_uid`), each to one claim
// (admin access and shares of devices with allowMultipleAllocations do not count).
std::set<DeviceId> allocatedDevices(const std::vector<api::ResourceClaim>& claims,
                                    const std::string& except_uid = "");

// Devices allocated in shares (results with a shareID): the capacity all their shares take.
using SharedAllocations = std::map<DeviceId, Capacities>;
SharedAllocations sharedAllocations(const std::vector<api::ResourceClaim>& claims,
                                    const std::string& except_uid = "");

class Allocator {
 public:
  Allocator(std::vector<api::ResourceSlice> slices, std::vector<api::DeviceClass> classes);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // A share of a device with allowMultipleAllocations gets a placeholder shareID ("share-1", ...):
  // kube-scheduler generates a random UID there.
  NodeAllocation allocate(const api::ResourceClaimSpec& claim, const ClusterNode& node,
                          const std::set<DeviceId>& in_use, const SharedAllocations& shared = {});

  // The nodes that any slice or device names in nodeName, sorted (for nodes not in a list).
  std::vector<std::string> nodeNames() const;
  const std::vector<api::ResourceSlice>& slices() const { return slices_; }

 private:
  using Pool = detail::Pool;
  using Alternative = detail::Alternative;
  struct ClassInfo;
  friend struct detail::Alternative;
  const std::vector<Pool>& poolsOf(const ClusterNode& node);
  static std::optional<Pool> poolFor(const api::ResourceSlice* group, size_t size,
                                     const ClusterNode& node);
  bool compile(Alternative& alt);
  void findCandidates(Alternative& alt, const std::vector<Pool>& pools, const ClusterNode& node,
                      const std::set<DeviceId>& in_use, const SharedAllocations& shared,
                      std::map<detail::PoolKey, detail::CounterState>& counters,
                      std::string& node_error);
  api::AllocationResult result(const api::ResourceClaimSpec& claim,
                               const std::vector<const Alternative*>& chosen,
                               const std::vector<PickedDevice>& picked,
                               const std::string& node) const;
  Result<bool> classMatches(const ClassInfo& c, const api::SliceDevice& d, std::string_view driver);
  Result<bool> selectorMatches(const cel::Program& p, const api::SliceDevice& d,
                               std::string_view driver);

  std::vector<api::ResourceSlice> slices_;
  std::vector<api::DeviceClass> class_objects_;
  std::map<std::string, std::unique_ptr<ClassInfo>> classes_;
  std::map<std::string, std::vector<Pool>> pools_by_node_;
  // Selector results per device: devices and compiled selectors never change in an Allocator.
  struct PairHash {
    size_t operator()(const std::pair<const void*, const void*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  std::unordered_map<std::pair<const void*, const void*>, Result<bool>, PairHash> class_cache_;
  std::unordered_map<std::pair<const void*, const void*>, Result<bool>, PairHash> selector_cache_;
  std::map<std::string, Result<cel::Program>> request_selectors_;  // compiled once
};

}  // namespace sriovdra::scheduling
