#include "scheduling/allocator.h"

#include <algorithm>

#include "api/selectors.h"
#include "base/strings.h"

namespace sriovdra::scheduling {

struct Allocator::ClassInfo {
  const api::DeviceClass* object = nullptr;
  std::vector<Result<cel::Program>> selectors;
};

struct Allocator::Pool {
  std::string driver;
  std::string name;
  std::vector<const api::ResourceSlice*> slices;  // sorted by name
  std::string problem;                            // incomplete or invalid: not used
};

namespace {

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

// One way to satisfy a request: the request itself (`exactly`) or one of its subrequests.
struct Alternative {
  std::string name;  // "gpu" or "gpu/sub"
  const api::DeviceSubRequest* spec = nullptr;
  bool admin_access = false;
  std::vector<const cel::Program*> selectors;  // owned by the Allocator's cache
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
  size_t free = 0;
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

class Search {
 public:
  Search(std::vector<Request>& requests, std::vector<Constraint>& constraints,
         const std::set<DeviceId>& in_use)
      : requests_(requests), constraints_(constraints), in_use_(in_use) {}

  // True when the claim fits; false when it does not or the search met an error (error()).
  bool run() { return request(0) && error_.empty(); }
  const std::string& error() const { return error_; }
  const std::vector<PickedDevice>& picked() const { return picked_; }
  const std::vector<const Alternative*>& chosen() const { return chosen_; }

 private:
  // Each step returns true when the search is over: a solution, or an error in error_.
  bool request(size_t r) {
    if (r == requests_.size()) return true;
    for (auto& alt : requests_[r].alternatives) {
      chosen_.push_back(&alt);
      bool ok = alt.spec->allocation_mode == "All" ? all(r, alt) : pick(r, alt, 0, 0);
      if (ok) return true;
      chosen_.pop_back();
    }
    return false;
  }

  bool all(size_t r, const Alternative& alt) {
    // All needs every matching device, so a pool that cannot be read completely rules it out.
    if (alt.candidates.empty() || !alt.problems.empty() || !alt.notes.empty()) return false;
    size_t added = 0;
    bool ok = true;
    for (const auto& c : alt.candidates) {
      if (!usable(c, alt)) {
        ok = false;
        break;
      }
      if (!add(c)) {  // a device that must be taken breaks a constraint: an error, no backtracking
        error_ = "request " + alt.name + ": cannot add device " + c.id.toString() +
                 " because a claim constraint would not be satisfied (allocationMode All takes "
                 "every matching device)";
        return true;
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
    for (size_t i = start; i <= alt.candidates.size(); ++i) {
      if (failsBefore(alt, i)) return true;
      if (i == alt.candidates.size()) break;
      const auto& c = alt.candidates[i];
      if (!usable(c, alt) || !add(c)) continue;
      if (pick(r, alt, k + 1, i + 1)) return true;
      remove();
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

  bool usable(const PickedDevice& c, const Alternative& alt) const {
    if (alt.untolerated.count(c.id) != 0) return false;
    if (!alt.admin_access && in_use_.count(c.id) != 0) return false;
    return std::none_of(picked_.begin(), picked_.end(),
                        [&](const PickedDevice& p) { return p.id == c.id; });
  }

  bool add(const PickedDevice& c) {
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
        return false;
      }
      if (con.match) {
        if (con.holders++ == 0) con.value = *v;
      } else {
        con.taken.push_back(*v);
      }
      ++applied;
    }
    picked_.push_back(c);
    return true;
  }

  void remove() {
    PickedDevice c = picked_.back();
    picked_.pop_back();
    undoConstraints(c, constraints_.size());
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
  std::vector<PickedDevice> picked_;
  std::vector<const Alternative*> chosen_;
  std::string error_;
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
      if (!r.admin_access) out.insert({r.driver, r.pool, r.device});
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
  }
  return {names.begin(), names.end()};
}

const std::vector<Allocator::Pool>& Allocator::poolsOf(const ClusterNode& node) {
  if (auto it = pools_by_node_.find(node.name); it != pools_by_node_.end()) return it->second;
  // Slices are sorted by (driver, pool, name): one pass groups them.
  std::vector<Pool> pools;
  std::vector<const api::ResourceSlice*> group;
  auto flush = [&]() {
    if (group.empty()) return;
    int64_t generation = 0;
    for (const auto* s : group) generation = std::max(generation, s->spec.pool.generation);
    Pool p{group[0]->spec.driver, group[0]->spec.pool.name, {}, ""};
    int64_t expected = 0;
    std::set<std::string> names;
    for (const auto* s : group) {
      if (s->spec.pool.generation != generation) continue;
      p.slices.push_back(s);
      expected = s->spec.pool.resource_slice_count;
      for (const auto& d : s->spec.devices) {
        if (!names.insert(d.name).second && p.problem.empty()) {
          p.problem = "pool " + p.driver + "/" + p.name + " is invalid: device " + d.name +
                      " is published twice";
        }
      }
    }
    if (p.problem.empty() && static_cast<int64_t>(p.slices.size()) != expected) {
      p.problem = "pool " + p.driver + "/" + p.name + " is incomplete (" +
                  std::to_string(p.slices.size()) + " of " + std::to_string(expected) +
                  " slices published at generation " + std::to_string(generation) + ")";
    }
    pools.push_back(std::move(p));
    group.clear();
  };
  for (const auto& s : slices_) {
    bool reaches = s.spec.node_name == node.name || s.spec.all_nodes ||
                   (s.spec.node_selector &&
                    api::matchesNodeSelector(*s.spec.node_selector, node.name, node.labels));
    if (!reaches) continue;
    if (!group.empty() &&
        (group[0]->spec.driver != s.spec.driver || group[0]->spec.pool.name != s.spec.pool.name)) {
      flush();
    }
    group.push_back(&s);
  }
  flush();
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

// Long on purpose: kube-scheduler's structured allocation for one node, its candidates phase (each
// request alternative's devices in search order, with the errors placed where the search meets
// them) in one piece beside the search that uses them, to read beside the upstream code; the
// search is class Search, the reasons when nothing fits are whyNot().
NodeAllocation Allocator::allocate(const api::ResourceClaimSpec& claim, const ClusterNode& node,
                                   const std::set<DeviceId>& in_use) {
  NodeAllocation out;
  out.node = node.name;
  const auto& pools = poolsOf(node);

  std::vector<Request> requests;
  for (const auto& r : claim.requests) {
    Request req{r.name, {}};
    if (r.exactly) {
      req.alternatives.push_back({r.name, &*r.exactly, r.admin_access});
    }
    for (const auto& sub : r.first_available) {
      req.alternatives.push_back({r.name + "/" + sub.name, &sub, false});
    }
    requests.push_back(std::move(req));
  }

  // Candidates per alternative on this node.
  bool unusable = false;
  std::string node_error;  // met before any search (allocationMode All)
  for (auto& req : requests) {
    for (auto& alt : req.alternatives) {
      auto cls = classes_.find(alt.spec->device_class_name);
      if (cls == classes_.end()) {
        alt.problems.push_back("DeviceClass " + alt.spec->device_class_name + " does not exist");
        unusable = true;
        continue;
      }
      for (const auto& expr : alt.spec->selectors) {
        auto it = request_selectors_.find(expr);
        if (it == request_selectors_.end()) {
          it = request_selectors_.emplace(expr, cel::Program::compile(expr)).first;
        }
        if (!it->second.ok()) {
          alt.problems.push_back("selector: " + it->second.status().message());
          unusable = true;
          continue;
        }
        alt.selectors.push_back(&*it->second);
      }
      if (!alt.problems.empty()) continue;
      std::string first_selector_miss;
      size_t selector_misses = 0;
      for (const auto& pool : pools) {
        for (const auto* slice : pool.slices) {
          for (const auto& d : slice->spec.devices) {
            // kube-scheduler skips a device another claim holds before it evaluates selectors;
            // allocationMode All evaluates them on every device up front.
            bool held = !alt.admin_access && in_use.count({pool.driver, pool.name, d.name}) != 0;
            auto fails = [&](const std::string& what, const Status& st) {
              std::string message = "device " + pool.name + "/" + d.name + ": " + what + ": " +
                                    st.message() + kSelectorErrorHint;
              if (alt.spec->allocation_mode == "All") {
                if (node_error.empty()) node_error = "request " + alt.name + ": " + message;
              } else if (!held) {
                alt.failing.push_back(
                    {alt.candidates.size(), "request " + alt.name + ": " + message});
              }
            };
            auto in_class = classMatches(*cls->second, d, pool.driver);
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
            ++alt.class_matches;
            Result<bool> selected = true;
            std::string source;
            for (size_t i = 0; i < alt.selectors.size() && selected.ok() && *selected; ++i) {
              source = alt.selectors[i]->source();
              selected = selectorMatches(*alt.selectors[i], d, pool.driver);
              if (selected.ok() && !*selected && first_selector_miss.empty()) {
                first_selector_miss = source;
              }
            }
            if (!selected.ok()) {
              fails("selector " + source, selected.status());
              continue;
            }
            if (!*selected) {
              ++selector_misses;
              continue;
            }
            PickedDevice c{alt.name, {pool.driver, pool.name, d.name}, &d};
            if (!tolerated(d, *alt.spec)) {
              alt.untolerated.insert(c.id);
            } else if (alt.admin_access || in_use.count(c.id) == 0) {
              ++alt.free;
            }
            alt.candidates.push_back(std::move(c));
          }
        }
      }
      size_t tolerated_candidates = alt.candidates.size() - alt.untolerated.size();
      std::string taken = alt.untolerated.empty()
                              ? " allocated to other claims"
                              : " allocated to other claims or tainted (not tolerated)";
      if (!alt.candidates.empty() && tolerated_candidates == 0) {
        alt.problems.push_back("all " + std::to_string(alt.candidates.size()) +
                               " matching device(s) have a taint the request does not tolerate");
      } else if (alt.class_matches == 0 && alt.problems.empty()) {
        alt.problems.push_back("no device of DeviceClass " + alt.spec->device_class_name +
                               (alt.notes.empty() ? "" : " in a usable pool"));
      } else if (alt.candidates.empty() && selector_misses > 0) {
        alt.problems.push_back(std::to_string(alt.class_matches) + " device(s) of DeviceClass " +
                               alt.spec->device_class_name + ", none matches the selector " +
                               first_selector_miss);
      } else if (alt.spec->allocation_mode != "All" &&
                 static_cast<int64_t>(alt.free) < alt.spec->count && !alt.candidates.empty()) {
        alt.problems.push_back(
            alt.free == 0
                ? "all " + std::to_string(alt.candidates.size()) + " matching device(s) are" + taken
                : "needs " + std::to_string(alt.spec->count) + " device(s), " +
                      std::to_string(alt.free) + " of " + std::to_string(alt.candidates.size()) +
                      " matching are free");
      } else if (alt.spec->allocation_mode == "All" && alt.free < alt.candidates.size()) {
        alt.problems.push_back(
            "allocationMode All, but " + std::to_string(alt.candidates.size() - alt.free) + " of " +
            std::to_string(alt.candidates.size()) + " matching device(s) are" + taken);
      }
    }
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
    Search search(requests, constraints, in_use);
    bool found = search.run();
    if (!search.error().empty()) {
      out.error = search.error();
      return out;
    }
    if (found) {
      out.fits = true;
      out.devices = search.picked();
      for (const auto& p : out.devices) {
        const auto* alt = *std::find_if(search.chosen().begin(), search.chosen().end(),
                                        [&](const Alternative* a) { return a->name == p.request; });
        out.allocation.results.push_back(
            {p.request, p.id.driver, p.id.pool, p.id.device, alt->admin_access});
      }
      for (const Alternative* alt : search.chosen()) {
        const auto& cls = *classes_.at(alt->spec->device_class_name)->object;
        for (const auto& cfg : cls.spec.config) {
          out.allocation.config.push_back({"FromClass", {alt->name}, cfg});
        }
      }
      for (const auto& cfg : claim.config) {
        out.allocation.config.push_back({"FromClaim", cfg.requests, cfg.opaque});
      }
      api::NodeSelectorTerm term;
      term.match_fields.push_back({"metadata.name", "In", {node.name}});
      out.allocation.node_selector = api::NodeSelector{{term}};
      return out;
    }
  }

  out.reasons = whyNot(requests, constraints, unusable, in_use);
  return out;
}

}  // namespace sriovdra::scheduling
