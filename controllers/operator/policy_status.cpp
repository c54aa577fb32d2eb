#include "operator/policy_status.h"

#include <algorithm>
#include <set>

#include "base/strings.h"

namespace sriovdra::op {
namespace {

std::string plural(int64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

api::PolicyStatus computePolicyStatus(const PolicyFacts& f, const api::PolicyStatus& current,
                                      const std::string& now) {
  api::PolicyStatus s;
  s.observed_generation = f.generation;
  s.matched_nodes = f.matched_nodes;
  s.matched_devices = f.matched_devices;
  auto conflicts = f.conflicts;
  std::sort(conflicts.begin(), conflicts.end(), [](const auto& a, const auto& b) {
    return std::tie(a.node, a.target, a.winner) < std::tie(b.node, b.target, b.winner);
  });
  s.conflicts.assign(
      conflicts.begin(),
      conflicts.begin() + static_cast<long>(std::min(conflicts.size(), kMaxStatusConflicts)));
  s.conditions = current.conditions;
  const std::string& kind = f.ref.kind;

  api::Condition ready{"Ready", "True", "Applied", "", "", f.generation};
  std::string devices = kind == policy::kNodePolicyKind ? "VFs configured" : "VFs";
  if (!f.errors.empty()) {
    ready = {"Ready", "False",     "InvalidSpec", "the spec is invalid; see the Degraded condition",
             "",      f.generation};
  } else if (f.matched_nodes == 0) {
    std::string what = kind == policy::kDeviceAttributesKind
                           ? "no SriovResourcePolicy config selects these attributes for any VF"
                           : "no node matches spec.nodeSelector";
    ready = {
        "Ready", "False", kind == policy::kDeviceAttributesKind ? "NotSelected" : "NoMatchingNodes",
        what,    "",      f.generation};
  } else if (f.matched_devices == 0) {
    std::string what = kind == policy::kNodePolicyKind
                           ? "no PF on them matches spec.nicSelector (or numVfs is 0)"
                           : "no discovered VF on them matches spec.configs";
    ready = {"Ready",
             "False",
             "NoMatchingDevices",
             "selects " + plural(f.matched_nodes, "node") + ", but " + what,
             "",
             f.generation};
  } else {
    std::string verb = kind == policy::kNodePolicyKind       ? "configures "
                       : kind == policy::kResourcePolicyKind ? "advertises "
                                                             : "applies to ";
    ready.message =
        verb + plural(f.matched_devices, "VF") + " on " + plural(f.matched_nodes, "node");
  }

  api::Condition degraded{"Degraded",   "False",
                          "AsExpected", "the spec is valid and the policy lost no conflict",
                          "",           f.generation};
  if (!f.errors.empty()) {
    degraded = {"Degraded", "True", "InvalidSpec", join(f.errors, "; "), "", f.generation};
  } else if (!conflicts.empty()) {
    std::set<std::string> winners, nodes;
    for (const auto& c : conflicts) {
      winners.insert("\"" + c.winner + "\"");
      nodes.insert(c.node);
    }
    degraded = {"Degraded",
                "True",
                "ConflictLost",
                "lost " + plural(static_cast<int64_t>(conflicts.size()), "conflict") + " on " +
                    plural(static_cast<int64_t>(nodes.size()), "node") + " to " +
                    join(winners, ", ") + "; see status.conflicts",
                "",
                f.generation};
  } else if (!f.warnings.empty()) {
    degraded = {"Degraded", "False",     "AppliedWithWarnings", join(f.warnings, "; "),
                "",         f.generation};
  }
  api::setCondition(s.conditions, ready, now);
  api::setCondition(s.conditions, degraded, now);
  return s;
}

}  // namespace sriovdra::op
