#pragma once
// Applies SriovOperatorConfig "default" of the operator's namespace (policy/operator_config.h):
// the operator's log verbosity, and the Ready condition that `kubectl get sriovoperatorconfig`
// shows: True with what is in effect, False naming what the webhook would have refused (an
// object written while the webhook was unavailable), in which case the flags stay in effect.
// Its condition AgentAdmissionPolicy says whether the operator trusts agents' reports for drains
// and reboots (AgentPolicyCheck, agent_policy.h): True (Verified), False (Missing or Changed,
// naming what is wrong and what to apply, with an AgentAdmissionPolicyMissing Warning Event when
// it turns False), Unknown while it cannot be read; looked at again every kPolicyRecheck, so a
// policy deleted or applied later shows within that time.
// The other settings are read where they act: currentSettings().
// Thread-safety: reconcile() from one worker; currentSettings() from any thread.
#include <chrono>
#include <string>

#include "kube/controller.h"
#include "kube/events.h"
#include "operator/agent_policy.h"
#include "operator/caches.h"
#include "operator/options.h"
#include "policy/operator_config.h"

namespace sriovdra::op {

// SriovOperatorConfig "default" when it is valid (what the webhook admits), else null.
std::shared_ptr<const api::SriovOperatorConfig> appliedConfig(const Caches& caches,
                                                              const OperatorOptions& options);
// The settings in effect: those of appliedConfig() refining the flags.
policy::OperatorSettings currentSettings(const Caches& caches, const OperatorOptions& options);

class OperatorConfigReconciler {
 public:
  static constexpr const char* kKey = api::kDefaultOperatorConfigName;
  static constexpr std::chrono::seconds kPolicyRecheck{30};
  OperatorConfigReconciler(kube::Client& client, const OperatorOptions& options,
                           kube::EventRecorder& events, const Caches& caches,
                           AgentPolicyCheck& policy_check)
      : client_(client),
        options_(options),
        events_(events),
        caches_(caches),
        policy_check_(policy_check) {}
  Result<kube::ReconcileResult> reconcile(const std::string& key);

 private:
  api::Condition agentPolicyCondition(int64_t generation);

  kube::Client& client_;
  const OperatorOptions& options_;
  kube::EventRecorder& events_;
  const Caches& caches_;
  AgentPolicyCheck& policy_check_;
};

}  // namespace sriovdra::op
