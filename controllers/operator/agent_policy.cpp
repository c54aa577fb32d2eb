#include "operator/agent_policy.h"

#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "base/yaml.h"
#include "operator/shipped_agent_policy.h"

namespace sriovdra::op {
namespace {

constexpr const char* kParts[] = {"failurePolicy", "resourceRules", "matchConditions", "variables",
                                  "validations"};

// `from`'s members named in `keys`, in that order, into a new object.
json::Value pick(const json::Value& from, std::initializer_list<const char*> keys,
                 json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  if (!from.IsObject()) return out;
  for (const char* k : keys) {
    auto it = from.FindMember(k);
    if (it != from.MemberEnd()) out.AddMember(json::str(k, a), json::Value(it->value, a), a);
  }
  return out;
}

// Each element of the array at `path` under `spec`, reduced to `keys`.
json::Value each(const json::Value& spec, std::initializer_list<std::string_view> path,
                 std::initializer_list<const char*> keys, json::Allocator& a) {
  json::Value out(rapidjson::kArrayType);
  const json::Value* items = json::at(spec, path);
  if (items == nullptr || !items->IsArray()) return out;
  for (const auto& item : items->GetArray()) out.PushBack(pick(item, keys, a), a);
  return out;
}

// The deciding parts, one member per entry of kParts.
json::Document essence(const json::Value& policy) {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  static const json::Value kNull;
  const json::Value* found = json::at(policy, {"spec"});
  const json::Value& spec = found != nullptr ? *found : kNull;
  const json::Value* failure = json::at(spec, {"failurePolicy"});
  doc.AddMember("failurePolicy", failure ? json::Value(*failure, a) : json::Value(), a);
  doc.AddMember("resourceRules",
                each(spec, {"matchConstraints", "resourceRules"},
                     {"apiGroups", "apiVersions", "operations", "resources"}, a),
                a);
  doc.AddMember("matchConditions", each(spec, {"matchConditions"}, {"name", "expression"}, a), a);
  doc.AddMember("variables", each(spec, {"variables"}, {"name", "expression"}, a), a);
  doc.AddMember(
      "validations",
      each(spec, {"validations"}, {"expression", "message", "messageExpression", "reason"}, a), a);
  return doc;
}

const json::Document& shippedEssence() {
  static const json::Document kShipped = [] {
    auto docs = yamlToJson(kShippedAgentPolicyYaml);
    SDRA_CHECK(docs.ok() && !docs->empty());
    for (auto& d : *docs) {
      if (json::stringOr(d, "kind") == "ValidatingAdmissionPolicy") return essence(d);
    }
    SDRA_CHECK(false);
    return json::Document();
  }();
  return kShipped;
}

}  // namespace

std::string agentPolicyEssence(const json::Value& policy) { return json::dump(essence(policy)); }

std::string agentPolicyDifference(const json::Value& live) {
  json::Document mine = essence(live);
  const json::Document& shipped = shippedEssence();
  std::vector<std::string> differ;
  for (const char* part : kParts) {
    if (mine[part] != shipped[part]) differ.emplace_back(part);
  }
  return join(differ, ", ");
}

Result<std::string> AgentPolicyCheck::problem() {
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    if (checked_ != std::chrono::steady_clock::time_point{} &&
        now - checked_ < kAgentPolicyRecheck) {
      return problem_;
    }
  }
  static const kube::ResourceType kPolicies{"admissionregistration.k8s.io", "v1",
                                            "validatingadmissionpolicies",
                                            "ValidatingAdmissionPolicy", false};
  static const kube::ResourceType kBindings{"admissionregistration.k8s.io", "v1",
                                            "validatingadmissionpolicybindings",
                                            "ValidatingAdmissionPolicyBinding", false};
  std::string problem;
  auto policy = client_.get(kPolicies, "", kAgentPolicyName);
  auto binding = client_.get(kBindings, "", kAgentPolicyName);
  // Only an answer that it is not there counts; a read that failed says nothing either way.
  for (const auto* got : {&policy, &binding}) {
    if (!got->ok() && got->status().code() != Code::kNotFound) {
      return Status(got->status()).prepend("reading the agents' admission policy");
    }
  }
  if (!policy.ok()) {
    problem = "the ValidatingAdmissionPolicy " + std::string(kAgentPolicyName) + " does not exist";
  } else if (!binding.ok()) {
    problem =
        "the ValidatingAdmissionPolicyBinding " + std::string(kAgentPolicyName) + " does not exist";
  } else {
    const json::Value* actions = json::at(*binding, {"spec", "validationActions"});
    bool deny = false;
    if (actions != nullptr && actions->IsArray()) {
      for (const auto& a : actions->GetArray()) deny = deny || (a.IsString() && a == "Deny");
    }
    const json::Value* spec = json::at(*binding, {"spec"});
    if (spec == nullptr || json::stringOr(*spec, "policyName") != kAgentPolicyName || !deny) {
      problem = "the ValidatingAdmissionPolicyBinding " + std::string(kAgentPolicyName) +
                " does not deny with the policy " + kAgentPolicyName;
    } else if (auto differ = agentPolicyDifference(*policy); !differ.empty()) {
      problem = "the ValidatingAdmissionPolicy " + std::string(kAgentPolicyName) +
                " is not the one this operator ships (its " + differ + " differ)";
    }
  }
  std::lock_guard lock(mu_);
  if (problem != problem_ || checked_ == std::chrono::steady_clock::time_point{}) {
    if (!problem.empty()) SDRA_LOG_WARN << "drains and reboots refused: " << problem;
    if (problem.empty() && !problem_.empty())
      SDRA_LOG_INFO << "the agents' admission policy is back";
  }
  problem_ = problem;
  checked_ = now;
  return problem;
}

}  // namespace sriovdra::op
