#pragma once
// What the status of a policy says, from the facts the operator gathered on every node. Pure.
// Conditions:
//   Ready     True when the policy applies to at least one device; otherwise why not
//             (InvalidSpec, NoMatchingNodes, NoMatchingDevices, NotSelected).
//   Degraded  True when the spec is invalid (InvalidSpec) or the policy lost a conflict to another
//             policy (ConflictLost); False otherwise (AsExpected, or AppliedWithWarnings with the
//             warnings in the message).
#include <string>
#include <vector>

#include "api/policies.h"
#include "policy/render.h"

namespace sriovdra::op {

struct PolicyFacts {
  policy::PolicyRef ref;
  int64_t generation = 0;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  int64_t matched_nodes = 0;
  int64_t matched_devices = 0;
  std::vector<api::PolicyConflict> conflicts;  // every conflict lost, any order
};

inline constexpr size_t kMaxStatusConflicts = 20;

// `current` supplies lastTransitionTime for conditions whose status does not change.
api::PolicyStatus computePolicyStatus(const PolicyFacts& facts, const api::PolicyStatus& current,
                                      const std::string& now);

}  // namespace sriovdra::op
