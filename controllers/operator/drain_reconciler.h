#pragma once
// Drains a node before its agent recreates VFs that pods use, when SriovOperatorConfig "default"
// asks for it (disableDrain: false; without the config, or with disableDrain: true, the agent
// waits for the pods to go, as always). Per node, keyed by node name:
//   a disruptive change in progress (kDisruptiveAnnotation "true" and the agent not done):
//     1. cordon the Node, unless it is cordoned already, and mark the SriovNodeState
//        (kDrainAnnotation: "cordoned" or "draining");
//     2. evict, through the Eviction API, every pod that holds a device of this driver on the
//        node (the pods its allocated ResourceClaims are reserved for), as upstream's partial
//        drain evicts only the pods using SR-IOV resources; a PodDisruptionBudget that forbids
//        an eviction is reported (DrainBlocked Warning Event naming pod and budget) and retried,
//        never overridden: no pod is deleted directly;
//     3. again every rollout_retry until the agent has applied the change;
//   otherwise, a marked node is done: it is uncordoned if the operator cordoned it, and the mark
//   is removed (also when the drain is switched off meanwhile, so no node stays cordoned).
// How many nodes drain at once is the rollout's limit (node_state_reconciler.h: pools).
// Thread-safety: reconcile() runs on several workers, one node each.
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "api/resource.h"
#include "kube/controller.h"
#include "kube/events.h"
#include "operator/caches.h"
#include "operator/options.h"

namespace sriovdra::op {

struct PodRef {
  std::string namespace_;
  std::string name;
  bool operator==(const PodRef&) const = default;
  bool operator<(const PodRef& o) const {
    return std::tie(namespace_, name) < std::tie(o.namespace_, o.name);
  }
};
// The pods holding devices of `driver` from the pool of `node` (pure): each once, sorted.
std::vector<PodRef> podsUsingDevicesOn(const std::string& node, std::string_view driver,
                                       const std::vector<const api::ResourceClaim*>& claims);

class DrainReconciler {
 public:
  DrainReconciler(kube::Client& client, const OperatorOptions& options, kube::EventRecorder& events,
                  const Caches& caches)
      : client_(client), options_(options), events_(events), caches_(caches) {}
  Result<kube::ReconcileResult> reconcile(const std::string& node);

 private:
  Status cordon(const std::string& node, bool unschedulable);
  Status mark(const std::string& node, const std::string& value);  // "" removes the mark
  Status evictPods(const std::string& node, const kube::ObjectReference& state);

  kube::Client& client_;
  const OperatorOptions& options_;
  kube::EventRecorder& events_;
  const Caches& caches_;
  // The marks this process wrote ("" = removed), by node: they win over a cache that has not
  // seen them yet, so a second pass never takes its own cordon for someone else's.
  std::mutex mu_;
  std::map<std::string, std::string> marks_;  // guarded by mu_
};

}  // namespace sriovdra::op
