#pragma once
// Writes the status of every policy (SriovNetworkNodePolicy, SriovResourcePolicy,
// DeviceAttributes): observedGeneration, what it matched, the conflicts it lost and the
// conditions of computePolicyStatus(), from the validation of the policy snapshot and the facts
// of every node; an Event on the policy when Ready or Degraded changes. Keys are
// policyStatusKey(kind, name); a policy that is gone is done.
#include <string>

#include "kube/controller.h"
#include "kube/events.h"
#include "operator/caches.h"
#include "operator/node_facts.h"
#include "operator/options.h"
#include "operator/policy_snapshot.h"

namespace sriovdra::op {

class PolicyStatusReconciler {
 public:
  PolicyStatusReconciler(kube::Client& client, const OperatorOptions& options,
                         kube::EventRecorder& events, const Caches& caches,
                         PolicySnapshots& policies, const NodeFactsStore& facts)
      : client_(client),
        options_(options),
        events_(events),
        caches_(caches),
        policies_(policies),
        facts_(facts) {}
  Result<kube::ReconcileResult> reconcile(const std::string& key);

 private:
  kube::Client& client_;
  const OperatorOptions& options_;
  kube::EventRecorder& events_;
  const Caches& caches_;
  PolicySnapshots& policies_;
  const NodeFactsStore& facts_;
};

}  // namespace sriovdra::op
