#include "scheduling/allocator.h"

#include <algorithm>

#include "base/strings.h"
#include "scheduling/allocator_internal.h"

namespace sriovdra::scheduling {

struct Allocator::ClassInfo {
  const api::DeviceClass* object = nullptr;
  std::vector<Result<cel::Program>> selectors;
};

namespace {

using detail::Alternative;
using detail::Constraint;
using detail::CounterState;
using detail::deviceReaches;
using detail::Pool;
using detail::PoolKey;
using detail::Request;

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

}  // namespace

namespace {

// Calls fn for every result of the allocated claims (except the claim with UID `except_uid`) that
// holds its device: admin access does not.
template <typename Fn>
void forEachHoldingResult(const std::vector<api::ResourceClaim>& claims,
                          const std::string& except_uid, Fn fn) {
  for (const auto& c : claims) {
    if (!c.status.allocation || (!except_uid.empty() && c.metadata.uid == except_uid)) continue;
    for (const auto& r : c.status.allocation->results) {
      if (!r.admin_access) fn(r);
    }
  }
}

}  // namespace

std::set<DeviceId> allocatedDevices(const std::vector<api::ResourceClaim>& claims,
                                    const std::string& except_uid) {
  std::set<DeviceId> out;
  forEachHoldingResult(claims, except_uid, [&](const api::DeviceRequestAllocationResult& r) {
    if (r.share_id.empty()) out.insert({r.driver, r.pool, r.device});
  });
  return out;
}

SharedAllocations sharedAllocations(const std::vector<api::ResourceClaim>& claims,
                                    const std::string& except_uid) {
  SharedAllocations out;
  forEachHoldingResult(claims, except_uid, [&](const api::DeviceRequestAllocationResult& r) {
    if (r.share_id.empty()) return;
    Capacities& taken = out[{r.driver, r.pool, r.device}];
    for (const auto& [name, text] : r.consumed_capacity) {
      if (auto q = Quantity::parse(text); q.ok()) taken[name] = taken[name] + *q;
    }
  });
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

// The distinct reasons devices are held back, at most four of them.
std::string heldBackText(const std::map<DeviceId, std::string>& held_back) {
  std::set<std::string> distinct;
  for (const auto& [id, why] : held_back) distinct.insert(why);
  std::vector<std::string> first(distinct.begin(), distinct.end());
  size_t more = first.size() > 4 ? first.size() - 4 : 0;
  first.resize(first.size() - more);
  return join(first, "; ") + (more > 0 ? "; " + std::to_string(more) + " more" : "");
}

// Why an alternative cannot be satisfied on its own, from what its candidates phase counted.
void summarize(Alternative& alt, size_t selector_misses, const std::string& first_selector_miss) {
  size_t tolerated_candidates = alt.candidates.size() - alt.untolerated.size();
  std::vector<std::string> causes = {"allocated to other claims"};
  if (!alt.untolerated.empty()) causes.push_back("tainted (not tolerated)");
  if (alt.counter_blocked > 0) causes.push_back("short of shared counters");
  if (alt.capacity_blocked > 0) causes.push_back("without the capacity left");
  std::string taken = " " + join(causes, " or ");
  if (!alt.held_back.empty()) taken += " (" + heldBackText(alt.held_back) + ")";
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
// Long on purpose: the search order of kube-scheduler's allocator in one place, so it reads
// beside allocator.go.
// NOLINTNEXTLINE(readability-function-size)
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
          std::string counters_short, capacity_short;
          if (!d.consumes_counters.empty() && state != counters.end() &&
              !(multi && allocated_shares != shared.end())) {
            counters_short = state->second.shortage(&d);
          }
          if (multi && allocated_shares != shared.end()) {
            capacity_short = capacityShortage(**share, allocated_shares->second, d);
            if (!capacity_short.empty()) capacity_short.insert(0, "device " + d.name + " ");
          }
          ++(!counters_short.empty()   ? alt.counter_blocked
             : !capacity_short.empty() ? alt.capacity_blocked
                                       : alt.free);
          if (!counters_short.empty() || !capacity_short.empty()) {
            alt.held_back[id] = counters_short.empty() ? capacity_short : counters_short;
          }
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
  auto counters = detail::counterStates(pools, in_use, shared);

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
    auto found = detail::search(requests, constraints, in_use, shared, counters);
    if (!found.error.empty()) {
      out.error = found.error;
      return out;
    }
    if (found.found) {
      out.fits = true;
      out.devices = std::move(found.picked);
      out.allocation = result(claim, found.chosen, out.devices, node.name);
      return out;
    }
  }
  out.reasons = detail::whyNot(requests, constraints, unusable, in_use);
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
