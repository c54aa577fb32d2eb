#include <algorithm>

#include "base/strings.h"
#include "scheduling/allocator_internal.h"

namespace sriovdra::scheduling::detail {
namespace {

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
    auto rollback = [&](Added why) {
      undoConstraints(c, applied);
      if (counters != nullptr) counters->give(c.device);
      return why;
    };
    for (auto& con : constraints_) {
      if (!con.covers(c.request)) continue;
      const api::AttributeValue* v = api::findAttribute(*c.device, c.id.driver, con.attribute);
      bool ok = v != nullptr;
      if (ok && con.match) ok = !con.value || *con.value == *v;
      if (ok && !con.match) {
        ok = std::none_of(con.taken.begin(), con.taken.end(),
                          [&](const api::AttributeValue& t) { return t == *v; });
      }
      if (!ok) return rollback(Added::kBreaksConstraint);
      if (con.match) {
        if (con.holders++ == 0) con.value = *v;
      } else {
        con.taken.push_back(*v);
      }
      ++applied;
    }
    const Capacities* share = multi ? &alt.shares.at(c.id) : nullptr;
    if (share != nullptr) {
      Capacities taken;  // by other claims' shares and those picked so far
      if (auto it = allocating_.find(c.id); it != allocating_.end()) taken = it->second.second;
      if (auto it = shared_.find(c.id); it != shared_.end()) addCapacities(taken, it->second, 1);
      if (!capacityFits(*share, taken, *c.device)) return rollback(Added::kNo);
      auto& [count, picked] = allocating_[c.id];
      ++count;
      addCapacities(picked, *share, 1);
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

}  // namespace

SearchOutcome search(std::vector<Request>& requests, std::vector<Constraint>& constraints,
                     const std::set<DeviceId>& in_use, const SharedAllocations& shared,
                     std::map<PoolKey, CounterState>& counters) {
  Search s(requests, constraints, in_use, shared, counters);
  SearchOutcome out;
  out.found = s.run();
  out.error = s.error();
  if (out.found) {
    out.picked = s.picked();
    out.chosen = s.chosen();
  }
  return out;
}

namespace {

// "gpu free on pci0000:00, pci0000:3a; vf free on pci0000:b9" for a failed matchAttribute; with
// counts when a request needs more than one device: "gpu needs 3, free on pci0000:00 (2)".
std::string constraintReason(const Constraint& con, const std::vector<Request>& requests,
                             const std::set<DeviceId>& in_use) {
  std::vector<std::string> parts, involved;
  for (const auto& r : requests) {
    for (const auto& alt : r.alternatives) {
      if (!con.covers(alt.name)) continue;
      involved.push_back(alt.name);
      std::map<std::string, size_t> values;                    // value -> free devices holding it
      std::map<std::string, std::set<std::string>> held_back;  // value -> why devices are
      size_t without = 0;
      for (const auto& c : alt.candidates) {
        if (!alt.admin_access && in_use.count(c.id) != 0) continue;
        if (alt.untolerated.count(c.id) != 0) continue;
        const api::AttributeValue* v = api::findAttribute(*c.device, c.id.driver, con.attribute);
        if (auto why = alt.held_back.find(c.id); why != alt.held_back.end()) {
          if (v != nullptr) held_back[v->toString()].insert(why->second);
        } else if (v == nullptr) {
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
      std::vector<std::string> short_of;  // at most four values, each with at most four reasons
      short_of.reserve(std::min<size_t>(held_back.size(), 5));
      for (const auto& [value, why] : held_back) {
        if (short_of.size() == 4) {
          short_of.push_back(std::to_string(held_back.size() - 4) + " more");
          break;
        }
        std::vector<std::string> first(why.begin(), why.end());
        if (first.size() > 4) first.resize(4);
        short_of.push_back(value + " (" + join(first, "; ") + ")");
      }
      if (!short_of.empty()) part += ", held back on " + join(short_of, ", ");
      parts.push_back(part);
    }
  }
  std::string what = con.match ? "the same " : "distinct values of ";
  return "no " + join(involved, " and ") + " with " + what + con.attribute + ": " +
         join(parts, "; ");
}

}  // namespace

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
    bool shares = false;  // devices that share counters or capacity compete through them too
    for (const auto& req : requests) {
      for (const auto& alt : req.alternatives) {
        shares =
            shares || !alt.shares.empty() ||
            std::any_of(alt.candidates.begin(), alt.candidates.end(),
                        [](const PickedDevice& c) { return !c.device->consumes_counters.empty(); });
      }
    }
    reasons.push_back(shares ? "the requests compete for the same devices, their shared counters "
                               "or their capacity: not enough for all"
                             : "the requests compete for the same devices: not enough for all");
  }
  return reasons;
}

}  // namespace sriovdra::scheduling::detail
