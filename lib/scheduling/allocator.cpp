#include "scheduling/allocator.h"

#include <algorithm>

#include "api/selectors.h"
#include "base/strings.h"

namespace sriovdra::scheduling {

struct Allocator::ClassInfo {
  const api::DeviceClass* object = nullptr;
  std::vector<Result<cel::Program>> selectors;
};

namespace detail {

// What a device takes from its pool's shared counters: (index of the counter, amount).
using Consumption = std::vector<std::pair<size_t, Quantity>>;
using ConsumptionByDevice = std::unordered_map<const api::SliceDevice*, Consumption>;

struct Pool {
  std::string driver;
  std::string name;
  std::vector<const api::ResourceSlice*> slices;     // device slices reaching the node, by name
  std::vector<const api::ResourceSlice*> elsewhere;  // the pool's other device slices
  // Shared counters: every counter of the pool's counter sets ("set/counter") with its value, and
  // what each device that consumes counters takes.
  std::vector<std::string> counter_names;
  std::vector<Quantity> counter_values;
  ConsumptionByDevice consumption;
  bool binding_conditions = false;  // a device has binding conditions: searched after the others
  bool incomplete = false;
  std::string problem;  // incomplete or invalid: not used
};

// The shared counters of one pool during a search: what the devices other claims hold left, and
// what the devices picked so far take.
struct CounterState {
  const ConsumptionByDevice* consumption = nullptr;
  std::vector<Quantity> left;
  std::vector<Quantity> used;

  // Takes the device's counters; false, taking nothing, when any counter of the pool would be
  // consumed beyond what is left (kube-scheduler checks every counter of the pool, so one already
  // overcommitted by allocated devices blocks every device that consumes counters there).
  bool take(const api::SliceDevice* d) {
    for (const auto& [i, q] : consumption->at(d)) used[i] = used[i] + q;
    for (size_t i = 0; i < left.size(); ++i) {
      if (left[i] < used[i]) {
        give(d);
        return false;
      }
    }
    return true;
  }
  void give(const api::SliceDevice* d) {
    for (const auto& [i, q] : consumption->at(d)) used[i] = used[i] - q;
  }
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
  // Consumable capacity: what a share of each candidate with allowMultipleAllocations takes;
  // candidates whose allocated shares leave too little; devices that can never serve the request.
  std::map<DeviceId, Capacities> shares;
  size_t capacity_blocked = 0;
  size_t capacity_misfits = 0;
};

}  // namespace detail

namespace {

using detail::Alternative;
using detail::ConsumptionByDevice;
using detail::CounterState;
using detail::Pool;
using detail::PoolKey;

bool deviceReaches(const api::SliceDevice& d, const ClusterNode& node) {
  if (!d.node_name.empty()) return d.node_name == node.name;
  if (d.all_nodes) return true;
  return d.node_selector && api::matchesNodeSelector(*d.node_selector, node.name, node.labels);
}

// Whether the slice offers devices (or counters) to the node, as kube-scheduler gathers pools.
bool reaches(const api::ResourceSlice& s, const ClusterNode& node) {
  const auto& spec = s.spec;
  if (!spec.node_name.empty()) return spec.node_name == node.name;
  if (spec.all_nodes) return true;
  if (spec.node_selector) {
    return api::matchesNodeSelector(*spec.node_selector, node.name, node.labels);
  }
  return spec.per_device_node_selection &&
         std::any_of(spec.devices.begin(), spec.devices.end(),
                     [&](const api::SliceDevice& d) { return deviceReaches(d, node); });
}

// Whether every NoSchedule and NoExecute taint of the device is tolerated by the request (other
// effects never keep a device from being allocated).
bool tolerated(const api::SliceDevice& d, const api::DeviceSubRequest& request) {
  return std::all_of(d.taints.begin(), d.taints.end(), [&](const api::DeviceTaint& t) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") return true;
    return std::any_of(request.tolerations.begin(), request.tolerations.end(),
                       [&](const api::DeviceToleration& tol) { return tol.tolerates(t); });
  });
}

constexpr const char* kSelectorErrorHint =
    " (kube-scheduler stops on this error and schedules the pod on no node until the selector is "
    "fixed: guard optional attributes with has() or the ? operator)";

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

class Search {
 public:
  Search(std::vector<Request>& requests, std::vector<Constraint>& constraints,
         const std::set<DeviceId>& in_use, const SharedAllocations& shared,
         std::map<PoolKey, CounterState>& counters)
      : requests_(requests),
        constraints_(constraints),
        in_use_(in_use),
        shared_(shared),
        counters_(counters) {}

  // True when the claim fits; false when it does not or the search met an error (error()).
  bool run() { return request(0) && error_.empty(); }
  const std::string& error() const { return error_; }
  const std::vector<PickedDevice>& picked() const { return picked_; }
  const std::vector<const Alternative*>& chosen() const { return chosen_; }

 private:
  enum class Added { kYes, kNo, kBreaksConstraint };

  // Each step returns true when the search is over: a solution, or an error in error_.
  // Past the claim's device limit, kube-scheduler stops trying other devices and goes back to
  // the nearest prioritized list, whose next subrequest may need fewer (exceeded_ says so).
  bool request(size_t r) {
    if (r == requests_.size()) return true;
    bool all_exceeded = !requests_[r].alternatives.empty();
    for (auto& alt : requests_[r].alternatives) {
      chosen_.push_back(&alt);
      exceeded_ = false;
      bool ok = alt.spec->allocation_mode == "All" ? all(r, alt) : pick(r, alt, 0, 0);
      if (ok) return true;
      chosen_.pop_back();
      all_exceeded = all_exceeded && exceeded_;
    }
    exceeded_ = all_exceeded;
    return false;
  }

  bool overLimit(size_t more) {
    exceeded_ = picked_.size() + more > kMaxDevicesPerClaim;
    return exceeded_;
  }

  bool all(size_t r, const Alternative& alt) {
    // All needs every matching device, so a pool that cannot be read completely rules it out.
    if (alt.candidates.empty() || !alt.problems.empty() || !alt.notes.empty()) return false;
    if (overLimit(alt.candidates.size())) return false;
    size_t added = 0;
    bool ok = true;
    for (const auto& c : alt.candidates) {
      Added result = usable(c, alt) ? add(c, alt) : Added::kNo;
      if (result == Added::kBreaksConstraint) {
        // A device that must be taken breaks a constraint: an error, no backtracking.
        error_ = "request " + alt.name + ": cannot add device " + c.id.toString() +
                 " because a claim constraint would not be satisfied (allocationMode All takes "
                 "every matching device)";
        return true;
      }
      if (result != Added::kYes) {
        ok = false;
        break;
      }
      ++added;
    }
    if (ok && request(r + 1)) return true;
    while (added-- > 0) remove();
    return false;
  }

  // Picks device number `k` of the request from candidates[start...] (combinations).
  bool pick(size_t r, const Alternative& alt, int64_t k, size_t start) {
    if (k == alt.spec->count) return request(r + 1);
    if (overLimit(static_cast<size_t>(alt.spec->count - k))) return false;
    for (size_t i = start; i <= alt.candidates.size(); ++i) {
      if (failsBefore(alt, i)) return true;
      if (i == alt.candidates.size()) break;
      const auto& c = alt.candidates[i];
      if (!usable(c, alt) || add(c, alt) != Added::kYes) continue;
      if (pick(r, alt, k + 1, i + 1)) return true;
      remove();
      if (exceeded_) return false;
    }
    return false;
  }

  // Whether a device whose selectors fail sits just before candidates[i] (or after the last).
  bool failsBefore(const Alternative& alt, size_t i) {
    for (const auto& [position, message] : alt.failing) {
      if (position != i) continue;
      error_ = message;
      return true;
    }
    return false;
  }

  // A device with allowMultipleAllocations may be picked again by another request of the claim.
  bool usable(const PickedDevice& c, const Alternative& alt) const {
    if (alt.untolerated.count(c.id) != 0) return false;
    if (!alt.admin_access && in_use_.count(c.id) != 0) return false;
    return c.device->allow_multiple_allocations ||
           std::none_of(picked_.begin(), picked_.end(),
                        [&](const PickedDevice& p) { return p.id == c.id; });
  }

  // The counters the device consumes from, or nullptr.
  CounterState* countersOf(const PickedDevice& c) {
    if (c.device->consumes_counters.empty()) return nullptr;
    return &counters_.at({c.id.driver, c.id.pool});
  }

  // Takes the device: its shared counters first (not again for a device already shared), then
  // the constraints, then a share of its capacity, as kube-scheduler does.
  Added add(const PickedDevice& c, const Alternative& alt) {
    bool multi = c.device->allow_multiple_allocations;
    bool shared = multi && (shared_.count(c.id) != 0 || allocating_.count(c.id) != 0);
    CounterState* counters = shared ? nullptr : countersOf(c);
    if (counters != nullptr && !counters->take(c.device)) return Added::kNo;
    size_t applied = 0;
    for (auto& con : constraints_) {
      if (!con.covers(c.request)) continue;
      const api::AttributeValue* v = api::findAttribute(*c.device, c.id.driver, con.attribute);
      bool ok = v != nullptr;
      if (ok && con.match) ok = !con.value || *con.value == *v;
      if (ok && !con.match) {
        ok = std::none_of(con.taken.begin(), con.taken.end(),
                          [&](const api::AttributeValue& t) { return t == *v; });
      }
      if (!ok) {
        undoConstraints(c, applied);
        if (counters != nullptr) counters->give(c.device);
        return Added::kBreaksConstraint;
      }
      if (con.match) {
        if (con.holders++ == 0) con.value = *v;
      } else {
        con.taken.push_back(*v);
      }
      ++applied;
    }
    const Capacities* share = multi ? &alt.shares.at(c.id) : nullptr;
    if (share != nullptr) {
      Capacities taken = allocating_[c.id].second;
      if (auto it = shared_.find(c.id); it != shared_.end()) addCapacities(taken, it->second, 1);
      if (!capacityFits(*share, taken, *c.device)) {
        if (allocating_[c.id].first == 0) allocating_.erase(c.id);
        undoConstraints(c, applied);
        if (counters != nullptr) counters->give(c.device);
        return Added::kNo;
      }
      ++allocating_[c.id].first;
      addCapacities(allocating_[c.id].second, *share, 1);
    }
    picked_.push_back(c);
    undo_.push_back({counters != nullptr, share});
    return Added::kYes;
  }

  void remove() {
    PickedDevice c = picked_.back();
    Undo undo = undo_.back();
    picked_.pop_back();
    undo_.pop_back();
    if (undo.share != nullptr) {
      auto& [count, taken] = allocating_.at(c.id);
      addCapacities(taken, *undo.share, -1);
      if (--count == 0) allocating_.erase(c.id);
    }
    undoConstraints(c, constraints_.size());
    if (undo.counters) countersOf(c)->give(c.device);
  }

  // Undoes the first `n` constraints that cover `c`.
  void undoConstraints(const PickedDevice& c, size_t n) {
    size_t undone = 0;
    for (auto& con : constraints_) {
      if (undone == n) return;
      if (!con.covers(c.request)) continue;
      if (con.match) {
        if (--con.holders == 0) con.value.reset();
      } else {
        con.taken.pop_back();
      }
      ++undone;
    }
  }

  std::vector<Request>& requests_;
  std::vector<Constraint>& constraints_;
  const std::set<DeviceId>& in_use_;
  const SharedAllocations& shared_;
  std::map<PoolKey, CounterState>& counters_;
  // Shares picked so far per device: how many, and the capacity they take.
  std::map<DeviceId, std::pair<int, Capacities>> allocating_;
  std::vector<PickedDevice> picked_;
  // Per picked device, what add() took besides the constraints.
  struct Undo {
    bool counters = false;
    const Capacities* share = nullptr;
  };
  std::vector<Undo> undo_;
  std::vector<const Alternative*> chosen_;
  std::string error_;
  bool exceeded_ = false;
};

// "gpu free on pci0000:00, pci0000:3a; vf free on pci0000:b9" for a failed matchAttribute; with
// counts when a request needs more than one device: "gpu needs 3, free on pci0000:00 (2)".
std::string constraintReason(const Constraint& con, const std::vector<Request>& requests,
                             const std::set<DeviceId>& in_use) {
  std::vector<std::string> parts, involved;
  for (const auto& r : requests) {
    for (const auto& alt : r.alternatives) {
      if (!con.covers(alt.name)) continue;
      involved.push_back(alt.name);
      std::map<std::string, size_t> values;  // value -> free devices holding it
      size_t without = 0;
      for (const auto& c : alt.candidates) {
        if (!alt.admin_access && in_use.count(c.id) != 0) continue;
        const api::AttributeValue* v = api::findAttribute(*c.device, c.id.driver, con.attribute);
        if (v == nullptr) {
          ++without;
        } else {
          ++values[v->toString()];
        }
      }
      bool counted = alt.spec->allocation_mode != "All" && alt.spec->count > 1;
      std::vector<std::string> free;
      free.reserve(values.size());
      for (const auto& [value, n] : values) {
        free.push_back(counted ? value + " (" + std::to_string(n) + ")" : value);
      }
      std::string part = alt.name +
                         (counted ? " needs " + std::to_string(alt.spec->count) + "," : "") +
                         " free on " + (free.empty() ? std::string("none") : join(free, ", "));
      if (without > 0) {
        part += " (" + std::to_string(without) + " free without " + con.attribute + ")";
      }
      parts.push_back(part);
    }
  }
  std::string what = con.match ? "the same " : "distinct values of ";
  return "no " + join(involved, " and ") + " with " + what + con.attribute + ": " +
         join(parts, "; ");
}

// Why a claim does not fit a node whose search found no solution: per request first (what
// ruled out each of its alternatives), then, when every request had candidates, the
// constraints with the values that were free.
std::vector<std::string> whyNot(const std::vector<Request>& requests,
                                const std::vector<Constraint>& constraints, bool unusable,
                                const std::set<DeviceId>& in_use) {
  std::vector<std::string> reasons;
  bool every_request_possible = !unusable;
  for (const auto& req : requests) {
    bool possible = false;
    std::vector<std::string> why;
    for (const auto& alt : req.alternatives) {
      bool ok = alt.problems.empty() && !alt.candidates.empty();
      possible = possible || ok;
      for (const auto& p : alt.problems) {
        why.push_back((req.alternatives.size() > 1 ? alt.name + ": " : "") + p);
      }
      for (const auto& n : alt.notes) why.push_back(n);
    }
    if (!possible) {
      every_request_possible = false;
      reasons.push_back("request " + req.name + ": " + join(why, "; "));
    }
  }
  if (!every_request_possible) return reasons;
  for (const auto& con : constraints) reasons.push_back(constraintReason(con, requests, in_use));
  if (constraints.empty()) {
    reasons.push_back("the requests compete for the same devices: not enough for all");
  }
  return reasons;
}

}  // namespace

std::set<DeviceId> allocatedDevices(const std::vector<api::ResourceClaim>& claims,
                                    const std::string& except_uid) {
  std::set<DeviceId> out;
  for (const auto& c : claims) {
    if (!c.status.allocation || (!except_uid.empty() && c.metadata.uid == except_uid)) continue;
    for (const auto& r : c.status.allocation->results) {
      if (!r.admin_access && r.share_id.empty()) out.insert({r.driver, r.pool, r.device});
    }
  }
  return out;
}

SharedAllocations sharedAllocations(const std::vector<api::ResourceClaim>& claims,
                                    const std::string& except_uid) {
  SharedAllocations out;
  for (const auto& c : claims) {
    if (!c.status.allocation || (!except_uid.empty() && c.metadata.uid == except_uid)) continue;
    for (const auto& r : c.status.allocation->results) {
      if (r.admin_access || r.share_id.empty()) continue;
      Capacities& taken = out[{r.driver, r.pool, r.device}];
      for (const auto& [name, text] : r.consumed_capacity) {
        if (auto q = Quantity::parse(text); q.ok()) taken[name] = taken[name] + *q;
      }
    }
  }
  return out;
}

Allocator::Allocator(std::vector<api::ResourceSlice> slices, std::vector<api::DeviceClass> classes)
    : slices_(std::move(slices)) {
  std::sort(slices_.begin(), slices_.end(), [](const auto& a, const auto& b) {
    return std::tie(a.spec.driver, a.spec.pool.name, a.metadata.name) <
           std::tie(b.spec.driver, b.spec.pool.name, b.metadata.name);
  });
  class_objects_ = std::move(classes);
  for (const auto& c : class_objects_) {
    auto info = std::make_unique<ClassInfo>();
    info->object = &c;
    for (const auto& expr : c.spec.cel_selectors) {
      info->selectors.push_back(cel::Program::compile(expr));
    }
    classes_[c.metadata.name] = std::move(info);
  }
}

Allocator::~Allocator() = default;

std::vector<std::string> Allocator::nodeNames() const {
  std::set<std::string> names;
  for (const auto& s : slices_) {
    if (!s.spec.node_name.empty()) names.insert(s.spec.node_name);
    for (const auto& d : s.spec.devices) {
      if (!d.node_name.empty()) names.insert(d.node_name);
    }
  }
  return {names.begin(), names.end()};
}

namespace {

// The counters of a pool's counter sets and what its devices consume, as kube-scheduler validates
// them: "" or why the pool is invalid.
std::string readCounters(const std::vector<const api::ResourceSlice*>& counter_slices,
                         std::vector<std::string>& names, std::vector<Quantity>& values,
                         ConsumptionByDevice& consumption,
                         const std::vector<const api::ResourceSlice*>& device_slices) {
  std::map<std::string, std::map<std::string, size_t>> index;  // set -> counter -> position
  for (const auto* s : counter_slices) {
    for (const auto& set : s->spec.shared_counters) {
      if (index.count(set.name) != 0) return "counter set " + set.name + " is published twice";
      auto& counters = index[set.name];
      for (const auto& [counter, text] : set.counters) {
        auto q = Quantity::parse(text);
        if (!q.ok()) return "counter " + set.name + "/" + counter + ": " + q.status().message();
        counters[counter] = names.size();
        names.push_back(set.name + "/" + counter);
        values.push_back(*q);
      }
    }
  }
  for (const auto* s : device_slices) {
    for (const auto& d : s->spec.devices) {
      for (const auto& use : d.consumes_counters) {
        auto set = index.find(use.counter_set);
        if (set == index.end()) {
          return "device " + d.name + " consumes counter set " + use.counter_set +
                 ", which the pool does not publish";
        }
        for (const auto& [counter, text] : use.counters) {
          auto at = set->second.find(counter);
          if (at == set->second.end()) {
            return "device " + d.name + " consumes counter " + counter + ", which counter set " +
                   use.counter_set + " does not have";
          }
          auto q = Quantity::parse(text);
          if (!q.ok()) return "device " + d.name + ": " + q.status().message();
          consumption[&d].emplace_back(at->second, *q);
        }
      }
    }
  }
  return "";
}

}  // namespace

// One pool for the node from all the slices of (driver, pool), or nothing when no slice reaches
// the node or a newer generation makes the node's slices obsolete.
std::optional<Allocator::Pool> Allocator::poolFor(const api::ResourceSlice* group, size_t size,
                                                  const ClusterNode& node) {
  std::vector<const api::ResourceSlice*> mine;
  for (size_t i = 0; i < size; ++i) {
    const auto* s = &group[i];
    if (!reaches(*s, node)) continue;
    if (!mine.empty() && s->spec.pool.generation < mine[0]->spec.pool.generation) continue;
    if (!mine.empty() && s->spec.pool.generation > mine[0]->spec.pool.generation) mine.clear();
    mine.push_back(s);
  }
  if (mine.empty()) return std::nullopt;
  Pool p;
  p.driver = mine[0]->spec.driver;
  p.name = mine[0]->spec.pool.name;
  std::string id = p.driver + "/" + p.name;
  int64_t generation = mine[0]->spec.pool.generation;
  int64_t expected = mine[0]->spec.pool.resource_slice_count;
  std::vector<const api::ResourceSlice*> all = mine;
  if (static_cast<int64_t>(mine.size()) != expected) {
    // The node's slices do not complete the pool: the pool's other slices may.
    all.clear();
    for (size_t i = 0; i < size; ++i) {
      if (group[i].spec.pool.generation > generation) return std::nullopt;
      if (group[i].spec.pool.generation == generation) all.push_back(&group[i]);
    }
  }
  std::vector<const api::ResourceSlice*> counter_slices;
  for (const auto* s : all) {
    bool here = std::find(mine.begin(), mine.end(), s) != mine.end();
    if (!s->spec.shared_counters.empty()) {
      counter_slices.push_back(s);
    } else {
      (here ? p.slices : p.elsewhere).push_back(s);
    }
  }
  if (static_cast<int64_t>(all.size()) != expected) {
    p.incomplete = true;
    p.problem = "pool " + id + " is incomplete (" + std::to_string(all.size()) + " of " +
                std::to_string(expected) + " slices published at generation " +
                std::to_string(generation) + ")";
    return p;
  }
  std::set<std::string> names;
  for (const auto* s : p.slices) {
    for (const auto& d : s->spec.devices) {
      if (!names.insert(d.name).second) {
        p.problem = "pool " + id + " is invalid: device " + d.name + " is published twice";
        return p;
      }
      p.binding_conditions = p.binding_conditions || !d.binding_conditions.empty();
    }
  }
  std::vector<const api::ResourceSlice*> device_slices = p.slices;
  device_slices.insert(device_slices.end(), p.elsewhere.begin(), p.elsewhere.end());
  std::string invalid =
      readCounters(counter_slices, p.counter_names, p.counter_values, p.consumption, device_slices);
  if (!invalid.empty()) p.problem = "pool " + id + " is invalid: " + invalid;
  return p;
}

const std::vector<Allocator::Pool>& Allocator::poolsOf(const ClusterNode& node) {
  if (auto it = pools_by_node_.find(node.name); it != pools_by_node_.end()) return it->second;
  // Slices are sorted by (driver, pool, name): each pool is a run. Pools whose devices have
  // binding conditions come after the others, as kube-scheduler orders them.
  std::vector<Pool> pools, with_binding_conditions;
  for (size_t i = 0; i < slices_.size();) {
    size_t end = i;
    while (end < slices_.size() && slices_[end].spec.driver == slices_[i].spec.driver &&
           slices_[end].spec.pool.name == slices_[i].spec.pool.name) {
      ++end;
    }
    if (auto p = poolFor(&slices_[i], end - i, node)) {
      (p->binding_conditions ? with_binding_conditions : pools).push_back(std::move(*p));
    }
    i = end;
  }
  for (auto& p : with_binding_conditions) pools.push_back(std::move(p));
  return pools_by_node_[node.name] = std::move(pools);
}

Result<bool> Allocator::selectorMatches(const cel::Program& p, const api::SliceDevice& d,
                                        std::string_view driver) {
  auto key = std::make_pair(static_cast<const void*>(&p), static_cast<const void*>(&d));
  if (auto it = selector_cache_.find(key); it != selector_cache_.end()) return it->second;
  return selector_cache_.emplace(key, p.matches({driver, d})).first->second;
}

Result<bool> Allocator::classMatches(const ClassInfo& c, const api::SliceDevice& d,
                                     std::string_view driver) {
  auto key = std::make_pair(static_cast<const void*>(&c), static_cast<const void*>(&d));
  if (auto it = class_cache_.find(key); it != class_cache_.end()) return it->second;
  Result<bool> out = true;
  for (size_t i = 0; i < c.selectors.size() && out.ok() && *out; ++i) {
    if (!c.selectors[i].ok()) {
      out = Status(Code::kInvalidArgument, "DeviceClass " + c.object->metadata.name +
                                               " selector: " + c.selectors[i].status().message());
    } else {
      out = c.selectors[i]->matches({driver, d});
    }
  }
  class_cache_.emplace(key, out);
  return out;
}

namespace {

// The shared counters of the node's pools as the devices other claims hold (alone or in shares)
// leave them.
std::map<PoolKey, CounterState> counterStates(const std::vector<Pool>& pools,
                                              const std::set<DeviceId>& in_use,
                                              const SharedAllocations& shared) {
  std::map<PoolKey, CounterState> out;
  for (const auto& pool : pools) {
    if (pool.counter_values.empty() || !pool.problem.empty()) continue;
    CounterState st{&pool.consumption, pool.counter_values,
                    std::vector<Quantity>(pool.counter_values.size())};
    for (const auto& slices : {&pool.slices, &pool.elsewhere}) {
      for (const auto* slice : *slices) {
        for (const auto& d : slice->spec.devices) {
          auto c = pool.consumption.find(&d);
          DeviceId id{pool.driver, pool.name, d.name};
          if (c == pool.consumption.end() || (in_use.count(id) == 0 && shared.count(id) == 0)) {
            continue;
          }
          for (const auto& [i, q] : c->second) st.left[i] = st.left[i] - q;
        }
      }
    }
    out.emplace(PoolKey{pool.driver, pool.name}, std::move(st));
  }
  return out;
}

// Why an alternative cannot be satisfied on its own, from what its candidates phase counted.
void summarize(Alternative& alt, size_t selector_misses, const std::string& first_selector_miss) {
  size_t tolerated_candidates = alt.candidates.size() - alt.untolerated.size();
  std::vector<std::string> causes = {"allocated to other claims"};
  if (!alt.untolerated.empty()) causes.push_back("tainted (not tolerated)");
  if (alt.counter_blocked > 0) causes.push_back("short of shared counters");
  if (alt.capacity_blocked > 0) causes.push_back("without the capacity left");
  std::string taken = " " + join(causes, " or ");
  std::string count = std::to_string(alt.candidates.size());
  const std::string& klass = alt.spec->device_class_name;
  if (!alt.candidates.empty() && tolerated_candidates == 0) {
    alt.problems.push_back("all " + count +
                           " matching device(s) have a taint the request does not tolerate");
  } else if (alt.class_matches == 0 && alt.problems.empty()) {
    alt.problems.push_back("no device of DeviceClass " + klass +
                           (alt.notes.empty() ? "" : " in a usable pool"));
  } else if (alt.candidates.empty() && alt.capacity_misfits > 0) {
    alt.problems.push_back(std::to_string(alt.capacity_misfits) +
                           " matching device(s) of DeviceClass " + klass +
                           ", none can give the capacity the request asks for");
  } else if (alt.candidates.empty() && selector_misses > 0) {
    alt.problems.push_back(std::to_string(alt.class_matches) + " device(s) of DeviceClass " +
                           klass + ", none matches the selector " + first_selector_miss);
  } else if (alt.spec->allocation_mode != "All" &&
             static_cast<int64_t>(alt.free) < alt.spec->count && !alt.candidates.empty()) {
    alt.problems.push_back(alt.free == 0 ? "all " + count + " matching device(s) are" + taken
                                         : "needs " + std::to_string(alt.spec->count) +
                                               " device(s), " + std::to_string(alt.free) + " of " +
                                               count + " matching are free");
  } else if (alt.spec->allocation_mode == "All" && alt.free < alt.candidates.size()) {
    alt.problems.push_back("allocationMode All, but " +
                           std::to_string(alt.candidates.size() - alt.free) + " of " + count +
                           " matching device(s) are" + taken);
  }
}

// The node selector of an allocation, as kube-scheduler writes it: the node itself when a device
// is local to it (nodeName) or binds to it; else the requirements of the devices' node selectors;
// none for devices every node reaches.
std::optional<api::NodeSelector> allocationNodeSelector(const std::vector<PickedDevice>& picked,
                                                        const std::string& node) {
  api::NodeSelectorTerm merged;
  for (const auto& p : picked) {
    bool per_device = p.slice->spec.per_device_node_selection;
    const std::string& name = per_device ? p.device->node_name : p.slice->spec.node_name;
    const auto& selector = per_device ? p.device->node_selector : p.slice->spec.node_selector;
    if (!name.empty() || p.device->binds_to_node) {
      api::NodeSelectorTerm term;
      term.match_fields.push_back({"metadata.name", "In", {node}});
      return api::NodeSelector{{term}};
    }
    if (!selector || selector->terms.size() != 1) continue;
    auto addNew = [](const auto& from, auto& to) {
      for (const auto& r : from) {
        if (std::find(to.begin(), to.end(), r) == to.end()) to.push_back(r);
      }
    };
    addNew(selector->terms[0].match_fields, merged.match_fields);
    addNew(selector->terms[0].match_expressions, merged.match_expressions);
  }
  if (merged.match_fields.empty() && merged.match_expressions.empty()) return std::nullopt;
  return api::NodeSelector{{merged}};
}

}  // namespace

bool Allocator::compile(Alternative& alt) {
  auto cls = classes_.find(alt.spec->device_class_name);
  if (cls == classes_.end()) {
    alt.problems.push_back("DeviceClass " + alt.spec->device_class_name + " does not exist");
    return false;
  }
  alt.klass = cls->second.get();
  for (const auto& expr : alt.spec->selectors) {
    auto it = request_selectors_.find(expr);
    if (it == request_selectors_.end()) {
      it = request_selectors_.emplace(expr, cel::Program::compile(expr)).first;
    }
    if (!it->second.ok()) {
      alt.problems.push_back("selector: " + it->second.status().message());
      continue;
    }
    alt.selectors.push_back(&*it->second);
  }
  return alt.problems.empty();
}

// kube-scheduler's view of one request alternative on the node: its devices in search order
// (class selectors, request selectors, then the device's own node selection), with the selector
// errors placed where the search meets them (allocationMode All meets them, and incomplete or
// invalid pools, before any search: node_error, the first one wins).
void Allocator::findCandidates(Alternative& alt, const std::vector<Pool>& pools,
                               const ClusterNode& node, const std::set<DeviceId>& in_use,
                               const SharedAllocations& shared,
                               std::map<PoolKey, CounterState>& counters, std::string& node_error) {
  bool all = alt.spec->allocation_mode == "All";
  std::string first_selector_miss;
  size_t selector_misses = 0;
  for (const auto& pool : pools) {
    if (all && !pool.problem.empty()) {
      if (node_error.empty()) {
        node_error = "request " + alt.name + ": asks for all devices, but resource pool " +
                     pool.driver + "/" + pool.name + " is currently " +
                     (pool.incomplete ? "being updated" : "invalid") + " (" + pool.problem + ")";
      }
      return;
    }
    auto state = counters.find({pool.driver, pool.name});
    for (const auto* slice : pool.slices) {
      for (const auto& d : slice->spec.devices) {
        // kube-scheduler skips a device another claim holds before it evaluates selectors;
        // allocationMode All evaluates them on every device up front.
        DeviceId id{pool.driver, pool.name, d.name};
        bool held = !alt.admin_access && in_use.count(id) != 0;
        auto fails = [&](const std::string& what, const Status& st,
                         const char* hint = kSelectorErrorHint) {
          std::string message = "request " + alt.name + ": device " + pool.name + "/" + d.name +
                                ": " + what + ": " + st.message() + hint;
          if (all) {
            if (node_error.empty()) node_error = message;
          } else if (!held) {
            alt.failing.push_back({alt.candidates.size(), message});
          }
        };
        auto in_class = classMatches(*alt.klass, d, pool.driver);
        if (!in_class.ok()) {
          fails("a selector of DeviceClass " + alt.spec->device_class_name, in_class.status());
          continue;
        }
        if (!*in_class) continue;
        if (!pool.problem.empty()) {
          if (std::find(alt.notes.begin(), alt.notes.end(), pool.problem) == alt.notes.end()) {
            alt.notes.push_back(pool.problem);
          }
          continue;
        }
        bool here = !slice->spec.per_device_node_selection || deviceReaches(d, node);
        if (here) ++alt.class_matches;
        Result<bool> selected = true;
        std::string source;
        for (size_t i = 0; i < alt.selectors.size() && selected.ok() && *selected; ++i) {
          source = alt.selectors[i]->source();
          selected = selectorMatches(*alt.selectors[i], d, pool.driver);
          if (here && selected.ok() && !*selected && first_selector_miss.empty()) {
            first_selector_miss = source;
          }
        }
        if (!selected.ok()) {
          fails("selector " + source, selected.status());
          continue;
        }
        if (!here) continue;
        if (!*selected) {
          ++selector_misses;
          continue;
        }
        // Consumable capacity: a device that can never give the request its share is passed
        // over (allocationMode All does not count it).
        // (A device that is not shared and has no request policy serves any request that asks
        // for no capacity: its whole capacity.)
        bool multi = d.allow_multiple_allocations;
        Result<std::optional<Capacities>> share = std::optional<Capacities>(Capacities{});
        if (multi || !alt.spec->capacity_requests.empty() || !d.request_policies.empty()) {
          share = capacityFor(alt.spec->capacity_requests, d);
        }
        if (!share.ok()) {
          fails("checking capacity", share.status(), "");
          continue;
        }
        if (!*share || !capacityFits(**share, {}, d)) {
          ++alt.capacity_misfits;
          continue;
        }
        auto allocated_shares = shared.find(id);
        if (multi) alt.shares[id] = **share;
        if (!tolerated(d, *alt.spec)) {
          alt.untolerated.insert(id);
        } else if (!held) {
          bool counters_left = true;
          if (!d.consumes_counters.empty() && state != counters.end() &&
              !(multi && allocated_shares != shared.end())) {
            counters_left = state->second.take(&d);
            if (counters_left) state->second.give(&d);
          }
          bool capacity_left = !multi || allocated_shares == shared.end() ||
                               capacityFits(**share, allocated_shares->second, d);
          ++(!counters_left   ? alt.counter_blocked
             : !capacity_left ? alt.capacity_blocked
                              : alt.free);
        }
        alt.candidates.push_back({alt.name, std::move(id), &d, slice});
      }
    }
  }
  summarize(alt, selector_misses, first_selector_miss);
}

// kube-scheduler's structured allocation for one node: the candidates of every request
// alternative, the claim's device limit, then the search (class Search); the reasons when nothing
// fits come from whyNot().
NodeAllocation Allocator::allocate(const api::ResourceClaimSpec& claim, const ClusterNode& node,
                                   const std::set<DeviceId>& in_use,
                                   const SharedAllocations& shared) {
  NodeAllocation out;
  out.node = node.name;
  const auto& pools = poolsOf(node);
  auto counters = counterStates(pools, in_use, shared);

  std::vector<Request> requests;
  for (const auto& r : claim.requests) {
    Request req{r.name, {}};
    if (r.exactly) req.alternatives.push_back({r.name, &*r.exactly, r.admin_access});
    for (const auto& sub : r.first_available) {
      req.alternatives.push_back({r.name + "/" + sub.name, &sub, false});
    }
    requests.push_back(std::move(req));
  }

  bool unusable = false;
  std::string node_error;  // met before any search
  size_t devices = 0;      // the fewest the claim can take
  for (auto& req : requests) {
    size_t fewest = SIZE_MAX;
    for (auto& alt : req.alternatives) {
      if (compile(alt)) {
        findCandidates(alt, pools, node, in_use, shared, counters, node_error);
      } else {
        unusable = true;
      }
      bool all = alt.spec->allocation_mode == "All";
      fewest = std::min(fewest, all ? alt.candidates.size() : static_cast<size_t>(alt.spec->count));
    }
    if (fewest > kMaxDevicesPerClaim - devices && node_error.empty()) {
      node_error = "request " + req.name + ": adding " + std::to_string(fewest) +
                   " devices exceeds the claim limit of " + std::to_string(kMaxDevicesPerClaim) +
                   ", with " + std::to_string(devices) + " already accounted for";
    }
    devices += std::min(fewest, kMaxDevicesPerClaim);
  }

  std::vector<Constraint> constraints;
  for (const auto& c : claim.constraints) {
    bool match = !c.match_attribute.empty();
    constraints.push_back({&c, match ? c.match_attribute : c.distinct_attribute, match});
  }

  if (!node_error.empty()) {
    out.error = node_error;
    return out;
  }
  if (!unusable) {
    Search search(requests, constraints, in_use, shared, counters);
    bool found = search.run();
    if (!search.error().empty()) {
      out.error = search.error();
      return out;
    }
    if (found) {
      out.fits = true;
      out.devices = search.picked();
      out.allocation = result(claim, search.chosen(), out.devices, node.name);
      return out;
    }
  }
  out.reasons = whyNot(requests, constraints, unusable, in_use);
  return out;
}

// The allocation kube-scheduler writes for a solution: a result per device (with its binding
// conditions, and for a share its ID and capacity), each class's config once for the requests
// that use it, then the claim's config.
api::AllocationResult Allocator::result(const api::ResourceClaimSpec& claim,
                                        const std::vector<const Alternative*>& chosen,
                                        const std::vector<PickedDevice>& picked,
                                        const std::string& node) const {
  api::AllocationResult out;
  int shares = 0;
  for (const auto& p : picked) {
    const auto* alt = *std::find_if(chosen.begin(), chosen.end(),
                                    [&](const Alternative* a) { return a->name == p.request; });
    out.results.push_back({p.request, p.id.driver, p.id.pool, p.id.device, alt->admin_access,
                           p.device->binding_conditions, p.device->binding_failure_conditions});
    if (auto share = alt->shares.find(p.id); share != alt->shares.end()) {
      auto& r = out.results.back();
      r.share_id = "share-" + std::to_string(++shares);
      for (const auto& [name, q] : share->second) r.consumed_capacity[name] = q.text();
    }
  }
  std::map<std::string, size_t> first_config;  // class -> index of its first config entry
  for (const Alternative* alt : chosen) {
    const auto& cls = *alt->klass->object;
    auto [at, added] = first_config.emplace(cls.metadata.name, out.config.size());
    for (size_t i = 0; i < cls.spec.config.size(); ++i) {
      if (added) {
        out.config.push_back({"FromClass", {alt->name}, cls.spec.config[i]});
      } else {
        out.config[at->second + i].requests.push_back(alt->name);
      }
    }
  }
  for (const auto& cfg : claim.config) {
    out.config.push_back({"FromClaim", cfg.requests, cfg.opaque});
  }
  out.node_selector = allocationNodeSelector(picked, node);
  return out;
}

}  // namespace sriovdra::scheduling
