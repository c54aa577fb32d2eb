#include "operator/node_facts.h"

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
  std::lock_guard lock(mu_);
  auto it = facts_.find(node);
  const NodeFacts* old = it == facts_.end() ? nullptr : &it->second;
  if (old != nullptr && facts && *old == *facts) return changed;
  auto collect = [&](const NodeFacts* f) {
    if (f == nullptr) return;
    for (const auto& [ref, n] : f->matches) changed.insert(policyStatusKey(ref.kind, ref.name));
    for (const auto& c : f->conflicts) changed.insert(policyStatusKey(c.loser.kind, c.loser.name));
    for (const auto& w : f->warnings) changed.insert(policyStatusKey(w.policy.kind, w.policy.name));
  };
  collect(old);
  collect(facts ? &*facts : nullptr);
  if (facts) {
    facts_[node] = std::move(*facts);
  } else if (it != facts_.end()) {
    facts_.erase(it);
  }
  updateMetricsLocked();
  return changed;
}

void NodeFactsStore::addTo(const policy::PolicyRef& ref, PolicyFacts& facts,
                           std::set<std::string>& warnings) const {
  std::lock_guard lock(mu_);
  for (const auto& [node, f] : facts_) {
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

void NodeFactsStore::updateMetricsLocked() {
  std::map<std::string, int64_t> desired, advertised;
  int64_t conflicts = 0;
  for (const auto& [node, f] : facts_) {
    for (const auto& [r, n] : f.desired) desired[r] += n;
    for (const auto& [r, n] : f.advertised) advertised[r] += n;
    conflicts += static_cast<int64_t>(f.conflicts.size());
  }
  nodesGauge().Add({}).Set(static_cast<double>(facts_.size()));
  conflictsGauge().Add({}).Set(static_cast<double>(conflicts));
  auto publish = [](const char* state, const std::map<std::string, int64_t>& now,
                    std::map<std::string, int64_t>& before) {
    for (const auto& [r, n] : before) {
      if (now.count(r) == 0) vfsGauge().Add({{"state", state}, {"resource", r}}).Set(0);
    }
    for (const auto& [r, n] : now) {
      vfsGauge().Add({{"state", state}, {"resource", r}}).Set(static_cast<double>(n));
    }
    before = now;
  };
  publish("desired", desired, desired_total_);
  publish("advertised", advertised, advertised_total_);
}

}  // namespace sriovdra::op
