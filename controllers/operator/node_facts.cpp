#include "operator/node_facts.h"

#include "base/interner.h"
#include "metrics/registry.h"

namespace sriovdra::op {
namespace {

prometheus::Family<prometheus::Gauge>& nodesGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_nodes")
                       .Help("Nodes that have a SriovNodeState rendered by the operator")
                       .Register(metrics::registry());
  return f;
}
prometheus::Family<prometheus::Gauge>& vfsGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_vfs")
                       .Help(
                           "VFs per resourceName: desired (in SriovNodeState specs) and "
                           "advertised (on nodes whose agent applied the spec)")
                       .Register(metrics::registry());
  return f;
}
prometheus::Family<prometheus::Gauge>& conflictsGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_policy_conflicts")
                       .Help(
                           "Conflicts between policies on all nodes (a policy lost a PF range "
                           "or VFs to another)")
                       .Register(metrics::registry());
  return f;
}

}  // namespace

std::string policyStatusKey(const std::string& kind, const std::string& name) {
  return kind + "/" + name;
}

std::set<std::string> NodeFactsStore::set(const std::string& node, std::optional<NodeFacts> facts) {
  std::set<std::string> changed;
  // Nodes alike have equal facts: each distinct one is kept once.
  std::shared_ptr<const NodeFacts> shared;
  if (facts) shared = Interner<NodeFacts>::global().intern(std::move(*facts));
  std::lock_guard lock(mu_);
  auto it = facts_.find(node);
  const NodeFacts* old = it == facts_.end() ? nullptr : it->second.get();
  if (old != nullptr && shared && *old == *shared) return changed;
  auto collect = [&](const NodeFacts* f) {
    if (f == nullptr) return;
    for (const auto& [ref, n] : f->matches) changed.insert(policyStatusKey(ref.kind, ref.name));
    for (const auto& c : f->conflicts) changed.insert(policyStatusKey(c.loser.kind, c.loser.name));
    for (const auto& w : f->warnings) changed.insert(policyStatusKey(w.policy.kind, w.policy.name));
  };
  collect(old);
  collect(shared.get());
  if (old != nullptr) count(*old, -1);
  if (shared) count(*shared, +1);
  if (shared) {
    facts_[node] = std::move(shared);
  } else if (it != facts_.end()) {
    facts_.erase(it);
  }
  publishMetricsLocked();
  return changed;
}

void NodeFactsStore::addTo(const policy::PolicyRef& ref, PolicyFacts& facts,
                           std::set<std::string>& warnings) const {
  std::lock_guard lock(mu_);
  for (const auto& [node, shared] : facts_) {
    const NodeFacts& f = *shared;
    auto m = f.matches.find(ref);
    if (m != f.matches.end()) {
      if (ref.kind != policy::kDeviceAttributesKind || m->second > 0) ++facts.matched_nodes;
      facts.matched_devices += m->second;
    }
    for (const auto& c : f.conflicts) {
      if (c.loser == ref) facts.conflicts.push_back({node, c.target, c.winner, c.reason});
    }
    for (const auto& w : f.warnings) {
      if (w.policy == ref) warnings.insert(w.message);
    }
  }
}

void NodeFactsStore::count(const NodeFacts& f, int sign) {
  auto add = [&](std::map<std::string, int64_t>& totals, const std::map<std::string, int64_t>& n) {
    for (const auto& [r, v] : n) totals[r] += sign * v;
  };
  add(desired_total_, f.desired);
  add(advertised_total_, f.advertised);
  conflicts_total_ += sign * static_cast<int64_t>(f.conflicts.size());
}

void NodeFactsStore::publishMetricsLocked() {
  nodesGauge().Add({}).Set(static_cast<double>(facts_.size()));
  conflictsGauge().Add({}).Set(static_cast<double>(conflicts_total_));
  auto publish = [](const char* state, std::map<std::string, int64_t>& totals) {
    for (auto it = totals.begin(); it != totals.end();) {
      vfsGauge()
          .Add({{"state", state}, {"resource", it->first}})
          .Set(static_cast<double>(it->second));
      it = it->second == 0 ? totals.erase(it) : std::next(it);
    }
  };
  publish("desired", desired_total_);
  publish("advertised", advertised_total_);
}

}  // namespace sriovdra::op
