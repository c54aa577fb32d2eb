#include "policy/policy_set.h"

namespace sriovdra::policy {
namespace {

template <typename T, typename Validate>
void classify(const std::vector<const T*>& items, const char* kind, Validate validate,
              std::vector<const T*>& valid, ValidatedPolicies& out) {
  for (const T* item : items) {
    Findings f = validate(*item);
    PolicyRef ref{kind, item->metadata.name};
    for (auto& w : f.warnings) out.warnings.push_back({ref, std::move(w)});
    if (f.ok()) {
      valid.push_back(item);
    } else {
      out.invalid.push_back({ref, std::move(f.errors)});
    }
  }
}

}  // namespace

ValidatedPolicies validatePolicies(const Policies& all) {
  ValidatedPolicies out;
  classify(all.node_policies, kNodePolicyKind, validateNodePolicy, out.valid.node_policies, out);
  classify(all.resource_policies, kResourcePolicyKind, validateResourcePolicy,
           out.valid.resource_policies, out);
  classify(all.device_attributes, kDeviceAttributesKind, validateDeviceAttributes,
           out.valid.device_attributes, out);
  return out;
}

}  // namespace sriovdra::policy
