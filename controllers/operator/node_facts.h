#pragma once
// What the last render of each node said: which policies matched how many devices, the conflicts
// and warnings, and the VFs desired and advertised per resourceName. Written by the node-state
// reconciler, read by the policy-status reconciler, summed into the gauges sriov_dra_nodes,
// sriov_dra_vfs{state,resource} and sriov_dra_policy_conflicts. Thread-safe.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "operator/policy_status.h"
#include "policy/render.h"

namespace sriovdra::op {

struct NodeFacts {
  std::map<policy::PolicyRef, int64_t> matches;
  std::vector<policy::Conflict> conflicts;
  std::vector<policy::Warning> warnings;
  std::map<std::string, int64_t> desired;     // by resourceName
  std::map<std::string, int64_t> advertised;  // by resourceName
  bool operator==(const NodeFacts&) const = default;
  auto operator<=>(const NodeFacts&) const = default;  // NOLINT(modernize-use-nullptr)
};

// The key of a policy in the policy-status reconciler's queue: "<kind>/<name>".
std::string policyStatusKey(const std::string& kind, const std::string& name);

class NodeFactsStore {
 public:
  // Records the node's facts (nullopt: the node has none any more). Returns the policy status
  // keys whose facts changed (empty when nothing did).
  std::set<std::string> set(const std::string& node, std::optional<NodeFacts> facts);
  // Adds what every node says about `ref` to `facts` (matches, conflicts) and `warnings`.
  void addTo(const policy::PolicyRef& ref, PolicyFacts& facts,
             std::set<std::string>& warnings) const;

 private:
  // Adds (sign +1) or takes away (-1) a node's facts from the totals; mu_ held.
  void count(const NodeFacts& f, int sign);
  // The totals as gauges, a resource that reached 0 once more and then forgotten; mu_ held.
  void publishMetricsLocked();

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const NodeFacts>> facts_;    // guarded by mu_; interned
  std::map<std::string, int64_t> desired_total_, advertised_total_;  // guarded by mu_
  int64_t conflicts_total_ = 0;                                      // guarded by mu_
};

}  // namespace sriovdra::op
