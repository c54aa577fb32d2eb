#include <algorithm>

#include "api/selectors.h"
#include "scheduling/allocator_internal.h"

namespace sriovdra::scheduling {

using detail::CounterState;
using detail::deviceReaches;
using detail::Pool;
using detail::PoolKey;

namespace detail {

bool deviceReaches(const api::SliceDevice& d, const ClusterNode& node) {
  if (!d.node_name.empty()) return d.node_name == node.name;
  if (d.all_nodes) return true;
  return d.node_selector && api::matchesNodeSelector(*d.node_selector, node.name, node.labels);
}

std::map<PoolKey, CounterState> counterStates(const std::vector<Pool>& pools,
                                              const std::set<DeviceId>& in_use,
                                              const SharedAllocations& shared) {
  std::map<PoolKey, CounterState> out;
  for (const auto& pool : pools) {
    if (pool.counter_values.empty() || !pool.problem.empty()) continue;
    CounterState st{&pool, pool.counter_values, std::vector<Quantity>(pool.counter_values.size())};
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

std::string CounterState::shortage(const api::SliceDevice* d) const {
  std::vector<Quantity> need = used;
  for (const auto& [i, q] : pool->consumption.at(d)) need[i] = need[i] + q;
  for (size_t i = 0; i < left.size(); ++i) {
    if (!(left[i] < need[i])) continue;
    const auto& [set, counter] = pool->counter_names[i];
    Quantity rest = left[i] - used[i];
    std::string out = "counter set " + set + " has ";
    out.append(rest.sign() < 0 ? "none" : rest.text()).append(" of ");
    return out.append(pool->counter_values[i].text()).append(" ").append(counter).append(" left");
  }
  return "";
}

}  // namespace detail

namespace {

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

// The counters of a pool's counter sets and what its devices consume, as kube-scheduler validates
// them: "" or why the pool is invalid.
std::string readCounters(const std::vector<const api::ResourceSlice*>& counter_slices,
                         const std::vector<const api::ResourceSlice*>& device_slices, Pool& pool) {
  auto& values = pool.counter_values;
  auto& consumption = pool.consumption;
  std::map<std::string, std::map<std::string, size_t>> index;  // set -> counter -> position
  for (const auto* s : counter_slices) {
    for (const auto& set : s->spec.shared_counters) {
      if (index.count(set.name) != 0) return "counter set " + set.name + " is published twice";
      auto& counters = index[set.name];
      for (const auto& [counter, text] : set.counters) {
        auto q = Quantity::parse(text);
        if (!q.ok()) return "counter " + set.name + "/" + counter + ": " + q.status().message();
        counters[counter] = values.size();
        values.push_back(*q);
        pool.counter_names.emplace_back(set.name, counter);
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
  std::string invalid = readCounters(counter_slices, device_slices, p);
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

}  // namespace sriovdra::scheduling
