#pragma once
// The structured allocator's parts shared by its files (not its interface, see allocator.h):
// allocator.cpp (each request's candidates on a node, the claim's device limit, the result),
// allocator_pools.cpp (pools as kube-scheduler gathers them for a node, shared counters) and
// allocator_search.cpp (the depth-first search, and why nothing fits).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scheduling/allocator.h"

namespace sriovdra::scheduling::detail {

// What a device takes from its pool's shared counters: (index of the counter, amount).
using Consumption = std::vector<std::pair<size_t, Quantity>>;
using ConsumptionByDevice = std::unordered_map<const api::SliceDevice*, Consumption>;

struct Pool {
  std::string driver;
  std::string name;
  std::vector<const api::ResourceSlice*> slices;     // device slices reaching the node, by name
  std::vector<const api::ResourceSlice*> elsewhere;  // the pool's other device slices
  // Shared counters: the value of every counter of the pool's counter sets, its (set, counter)
  // name, and what each device that consumes counters takes (by position in counter_values).
  std::vector<Quantity> counter_values;
  std::vector<std::pair<std::string, std::string>> counter_names;
  ConsumptionByDevice consumption;
  bool binding_conditions = false;  // a device has binding conditions: searched after the others
  bool incomplete = false;
  std::string problem;  // incomplete or invalid: not used
};

// The shared counters of one pool during a search: what the devices other claims hold left, and
// what the devices picked so far take.
struct CounterState {
  const Pool* pool = nullptr;
  std::vector<Quantity> left;
  std::vector<Quantity> used;

  // Takes the device's counters; false, taking nothing, when any counter of the pool would be
  // consumed beyond what is left (kube-scheduler checks every counter of the pool, so one already
  // overcommitted by allocated devices blocks every device that consumes counters there).
  bool take(const api::SliceDevice* d) {
    for (const auto& [i, q] : pool->consumption.at(d)) used[i] = used[i] + q;
    for (size_t i = 0; i < left.size(); ++i) {
      if (left[i] < used[i]) {
        give(d);
        return false;
      }
    }
    return true;
  }
  void give(const api::SliceDevice* d) {
    for (const auto& [i, q] : pool->consumption.at(d)) used[i] = used[i] - q;
  }
  // Why take(d) fails, naming the first counter it would overrun: "counter set gpu-0-counters has
  // 0 of 8 slices left" ("" when it would not).
  std::string shortage(const api::SliceDevice* d) const;
};

// One way to satisfy a request: the request itself (`exactly`) or one of its subrequests.
struct Alternative {
  std::string name;  // "gpu" or "gpu/sub"
  const api::DeviceSubRequest* spec = nullptr;
  bool admin_access = false;
  const Allocator::ClassInfo* klass = nullptr;  // owned by the Allocator
  std::vector<const cel::Program*> selectors;   // owned by the Allocator's cache
  // Filled per node:
  std::vector<PickedDevice> candidates;  // class and selectors match, in search order
  // Devices no other claim holds whose selectors fail: (the number of candidates before it, the
  // error). kube-scheduler meets the error when its search reaches the device.
  std::vector<std::pair<size_t, std::string>> failing;
  // Candidates with a NoSchedule or NoExecute taint the request does not tolerate: kube-scheduler
  // checks taints after the selectors, so they stay in the order but are never taken (and an
  // allocationMode All request that must take one has no solution).
  std::set<DeviceId> untolerated;
  std::vector<std::string> problems;  // why the alternative cannot be satisfied
  std::vector<std::string> notes;     // pools skipped
  size_t class_matches = 0;
  size_t free = 0;             // free to take: no other claim holds them, tolerated, counters left
  size_t counter_blocked = 0;  // free but short of shared counters left by the allocated devices
  // Why each such candidate (or one short of capacity) is held back: CounterState::shortage or
  // capacityShortage.
  std::map<DeviceId, std::string> held_back;
  // Consumable capacity: what a share of each candidate with allowMultipleAllocations takes;
  // candidates whose allocated shares leave too little; devices that can never serve the request.
  std::map<DeviceId, Capacities> shares;
  size_t capacity_blocked = 0;
  size_t capacity_misfits = 0;
};

struct Request {
  std::string name;
  std::vector<Alternative> alternatives;
};

struct Constraint {
  const api::DeviceConstraint* spec = nullptr;
  std::string attribute;
  bool match = true;  // matchAttribute, else distinctAttribute
  // Search state: the value fixed by the first device and how many devices hold it (match),
  // or the values taken (distinct).
  std::optional<api::AttributeValue> value;
  size_t holders = 0;
  std::vector<api::AttributeValue> taken;

  bool covers(const std::string& request) const {
    if (spec->requests.empty()) return true;
    std::string parent = request.substr(0, request.find('/'));
    for (const auto& r : spec->requests) {
      if (r == request || r == parent) return true;
    }
    return false;
  }
};

// Whether a device of a slice with perDeviceNodeSelection is reachable from the node.
bool deviceReaches(const api::SliceDevice& d, const ClusterNode& node);

// The shared counters of the node's pools as the devices other claims hold (alone or in shares)
// leave them.
std::map<PoolKey, CounterState> counterStates(const std::vector<Pool>& pools,
                                              const std::set<DeviceId>& in_use,
                                              const SharedAllocations& shared);

// The first solution in kube-scheduler's search order, or the error its search meets first.
struct SearchOutcome {
  bool found = false;
  std::string error;                       // the search stopped here: the pod fails
  std::vector<PickedDevice> picked;        // when found
  std::vector<const Alternative*> chosen;  // the alternative taken per request, when found
};
SearchOutcome search(std::vector<Request>& requests, std::vector<Constraint>& constraints,
                     const std::set<DeviceId>& in_use, const SharedAllocations& shared,
                     std::map<PoolKey, CounterState>& counters);

// Why a claim does not fit a node whose search found no solution: per request first (what
// ruled out each of its alternatives), then, when every request had candidates, the
// constraints with the values that were free.
std::vector<std::string> whyNot(const std::vector<Request>& requests,
                                const std::vector<Constraint>& constraints, bool unusable,
                                const std::set<DeviceId>& in_use);

}  // namespace sriovdra::scheduling::detail
