#pragma once
// Whether the agents' ValidatingAdmissionPolicy (sriov-dra-agent-own-node) still keeps each agent
// to its own node. Pure: the parts of its spec that decide what it admits, compared with the
// policy this build ships (config/rbac/agent_validating_admission_policy.yaml, compiled in).
// AgentPolicyCheck reads the live policy and binding. The parts: failurePolicy,
// matchConstraints.resourceRules (apiGroups, apiVersions, operations, resources), matchConditions,
// variables and validations (expression, message, messageExpression, reason), in order. What the
// API server fills in by default (matchPolicy, empty selectors, a rule's scope) is not compared, so
// an applied copy of the file matches.
#include <chrono>
#include <mutex>
#include <string>

#include "base/json.h"
#include "base/status.h"
#include "kube/client.h"

namespace sriovdra::op {

// The deciding parts of a ValidatingAdmissionPolicy, as canonical JSON.
std::string agentPolicyEssence(const json::Value& policy);

// "" when `live` decides as the shipped policy does, else which parts differ
// ("validations, variables").
std::string agentPolicyDifference(const json::Value& live);

inline constexpr const char* kAgentPolicyName = "sriov-dra-agent-own-node";
inline constexpr std::chrono::seconds kAgentPolicyRecheck{10};

// Reads the policy and its binding (by name, nothing else of admission's) at most every
// kAgentPolicyRecheck; the drain reconciler and the SriovOperatorConfig condition share one.
// Thread-safety: problem() may be called from any thread.
class AgentPolicyCheck {
 public:
  explicit AgentPolicyCheck(kube::Client& client) : client_(client) {}
  // "" when the policy and a binding that denies with it exist and the policy decides as the
  // shipped one, else what is wrong, for people; an error when they could not be read (the
  // answer is then not cached: a read that failed says nothing either way).
  Result<std::string> problem();

 private:
  kube::Client& client_;
  std::mutex mu_;
  std::string problem_;                              // guarded by mu_
  std::chrono::steady_clock::time_point checked_{};  // guarded by mu_
};

}  // namespace sriovdra::op
