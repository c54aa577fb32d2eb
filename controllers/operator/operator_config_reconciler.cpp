#include "operator/operator_config_reconciler.h"

#include "api/names.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"

namespace sriovdra::op {
namespace {

std::string describe(const api::LabelSelector& s) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : s.match_labels) parts.emplace_back(k).append("=").append(v);
  for (const auto& r : s.match_expressions) {
    parts.push_back(r.key);
    parts.back().append(" ").append(r.op).append(" (").append(join(r.values, ",")).append(")");
  }
  return parts.empty() ? "every node" : join(parts, ",");
}

}  // namespace

std::shared_ptr<const api::SriovOperatorConfig> appliedConfig(const Caches& caches,
                                                              const OperatorOptions& options) {
  auto config = caches.operator_configs.get(options.namespace_, api::kDefaultOperatorConfigName);
  if (config && !policy::validateOperatorConfig(*config, options.namespace_).ok()) return nullptr;
  return config;
}

policy::OperatorSettings currentSettings(const Caches& caches, const OperatorOptions& options) {
  return policy::operatorSettings(appliedConfig(caches, options).get(),
                                  options.agent_node_selector);
}

Result<kube::ReconcileResult> OperatorConfigReconciler::reconcile(const std::string& key) {
  auto settings = currentSettings(caches_, options_);
  int verbosity = settings.log_level.value_or(options_.verbosity);
  if (log::verbosity() != verbosity) {
    SDRA_LOG_INFO << "log verbosity " << verbosity
                  << (verbosity != options_.verbosity ? " (SriovOperatorConfig logLevel)"
                                                      : " (--v)");
    log::setVerbosity(verbosity);
  }
  auto config = caches_.operator_configs.get(options_.namespace_, key);
  if (!config) return kube::ReconcileResult::done();

  auto findings = policy::validateOperatorConfig(*config, options_.namespace_);
  api::Condition ready{.type = "Ready", .observed_generation = config->metadata.generation};
  if (findings.ok()) {
    ready.status = "True";
    ready.reason = "Applied";
    ready.message = "agent nodes: " + describe(settings.agent_node_selector) + "; log level " +
                    std::to_string(verbosity) + "; changes that recreate VFs in use " +
                    (settings.drain ? "drain the node first (evictions honour "
                                      "PodDisruptionBudgets)"
                                    : "wait until the pods using them are gone");
  } else {
    ready.status = "False";
    ready.reason = "InvalidSpec";
    ready.message =
        "not applied, the operator's flags are in effect: " + join(findings.errors, "; ");
  }
  api::Condition policy = agentPolicyCondition(config->metadata.generation);
  auto conditions = config->status.conditions;
  const api::Condition* before = api::findCondition(conditions, policy.type);
  // Reported once per loss of trust: a read that failed in between (Unknown) is not a new one.
  bool turned_false = policy.status == "False" && (before == nullptr || before->status == "True");
  bool ready_changed = api::setCondition(conditions, ready, nowRfc3339());
  bool changed = api::setCondition(conditions, policy, nowRfc3339()) || ready_changed;
  auto recheck = kube::ReconcileResult::after(kPolicyRecheck);
  if (!changed) return recheck;

  auto doc = kube::newObject(api::resources::kSriovOperatorConfigs, options_.namespace_, key);
  api::Writer(doc, doc.GetAllocator())
      .object("status")
      .value("conditions", api::encodeConditions(conditions, doc.GetAllocator()));
  auto applied = client_.apply(
      api::resources::kSriovOperatorConfigs, options_.namespace_, doc,
      {.field_manager = kFieldManager, .force = true, .metadata_only = true}, "status");
  if (!applied.ok()) {
    if (applied.status().code() == Code::kNotFound) return kube::ReconcileResult::done();
    return applied.status();
  }
  auto ref = kube::ObjectReference::of(api::resources::kSriovOperatorConfigs, config->metadata);
  if (!findings.ok() && ready_changed) events_.warning(ref, "InvalidSpec", ready.message);
  if (turned_false) events_.warning(ref, "AgentAdmissionPolicyMissing", policy.message);
  return recheck;
}

api::Condition OperatorConfigReconciler::agentPolicyCondition(int64_t generation) {
  api::Condition c{.type = "AgentAdmissionPolicy", .observed_generation = generation};
  auto problem = policy_check_.problem();
  if (!problem.ok()) {
    c.status = "Unknown";
    c.reason = "Unreadable";
    c.message = std::string("the agents' admission policy cannot be read (") +
                std::string(codeName(problem.status().code())) + "); retrying";
  } else if (problem->empty()) {
    c.status = "True";
    c.reason = "Verified";
    c.message = std::string(kAgentPolicyName) +
                " keeps each agent to its own node: drains and reboots act on agents' reports";
  } else {
    c.status = "False";
    c.reason = problem->find("does not exist") != std::string::npos ? "Missing" : "Changed";
    c.message = *problem +
                ": no node is drained or rebooted on an agent's report until "
                "config/rbac/agent_validating_admission_policy.yaml is applied (docs/install.md)";
  }
  return c;
}

}  // namespace sriovdra::op
