#pragma once
// The policies of the operator's namespace as one set, split into the valid ones (which render
// uses) and the invalid ones (which get a Degraded condition and are otherwise ignored), with
// the admission warnings of each. The operator, `sriov-dra render` and `sriov-dra validate` all
// go through here, so they agree on what counts.
#include <vector>

#include "policy/render.h"
#include "policy/validate.h"

namespace sriovdra::policy {

struct InvalidPolicy {
  PolicyRef policy;
  std::vector<std::string> errors;
};

struct ValidatedPolicies {
  Policies valid;
  std::vector<InvalidPolicy> invalid;
  std::vector<Warning> warnings;
};

// Static rules only (each object on its own); cross-policy conflicts are resolved by render.
ValidatedPolicies validatePolicies(const Policies& all);

}  // namespace sriovdra::policy
