#pragma once
// What decides whether the agents' ValidatingAdmissionPolicy (sriov-dra-agent-own-node) still
// keeps each agent to its own node: the parts of its spec that decide what it admits, compared
// with the policy this build ships (config/rbac/agent_validating_admission_policy.yaml, compiled
// in). Pure. The parts: failurePolicy, matchConstraints.resourceRules (apiGroups, apiVersions,
// operations, resources), matchConditions, variables and validations (expression, message,
// messageExpression, reason), in order. What the API server fills in by default (matchPolicy,
// empty selectors, a rule's scope) is not compared, so an applied copy of the file matches.
#include <string>

#include "base/json.h"
#include "base/status.h"

namespace sriovdra::op {

// The deciding parts of a ValidatingAdmissionPolicy, as canonical JSON.
std::string agentPolicyEssence(const json::Value& policy);

// "" when `live` decides as the shipped policy does, else which parts differ
// ("validations, variables").
std::string agentPolicyDifference(const json::Value& live);

}  // namespace sriovdra::op
