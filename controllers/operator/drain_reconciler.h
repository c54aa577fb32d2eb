#pragma once
// Drains a node before its agent recreates VFs that pods use, when SriovOperatorConfig "default"
// asks for it (disableDrain: false; without the config, or with disableDrain: true, the agent
// waits for the pods to go, as always), and grants the reboots agents ask for. Per node, keyed
// by node name, while the node holds a rollout slot (kDisruptiveAnnotation "true", the agent not
// done; node_state_reconciler.h):
//   with drains on:
//     1. cordon the Node, unless it is cordoned already, and mark the SriovNodeState
//        (kDrainAnnotation: "cordoned" or "draining");
//     2. evict, through the Eviction API, every pod that holds a device of this driver on the
//        node (the pods its allocated ResourceClaims are reserved for), as upstream's partial
//        drain evicts only the pods using SR-IOV resources; before a reboot, every pod of the
//        node but DaemonSets', static (mirror) and finished ones, as upstream's full drain. Each
//        eviction is for the pod's UID (the one a claim is reserved for, or the listed pod's): a
//        pod created under the same name since, on any node, is passed over (read first, and
//        the eviction's UID precondition covers a race). A
//        PodDisruptionBudget that forbids an eviction is reported (DrainBlocked Warning Event
//        naming pod and budget) and retried, never overridden: no pod is deleted directly;
//     3. again every rollout_retry until the agent has applied the change; a drain that has not
//        ended after drain_timeout (from kDrainStartedAnnotation, written with the mark) is
//        reported, a DrainTimedOut Warning Event naming the pods in the way and the ways out
//        (let them go, or undo the change), again after each further drain_timeout; it goes on,
//        never forced;
//   a reboot the agent asks for (rollout.h rebootRequested) is granted, api::kRebootGrantAnnotation
//   = the state's generation (host/reboot.h), once no pod of step 2 is left on the node (gone,
//   not merely terminating); with drains off, once no pod uses the node's VFs (RebootWaiting
//   Event naming them until then);
//   otherwise, a marked node is done: it is uncordoned if the operator cordoned it, and the mark
//   is removed (also when the drain is switched off meanwhile, so no node stays cordoned); a
//   grant is removed.
// Every step above acts on what an agent wrote in its node's status (InProgress, a reboot
// request). The ValidatingAdmissionPolicy sriov-dra-agent-own-node and its Deny binding are what
// keep an agent to its own node's status; an install without them (OLM cannot ship them) would
// let one node's agent token drain and reboot any node. So while either is missing (the API
// server answers 404), the binding does not deny with the policy, or the policy does not decide
// as the shipped one (AgentPolicyCheck, agent_policy.h), nothing is done on a node that would be
// drained or rebooted, nothing undone either: a DrainRefused Warning Event on the node's state
// names what to install, and the node waits (SriovOperatorConfig's AgentAdmissionPolicy
// condition says so too: operator_config_reconciler.h). A failed read is retried.
// How many nodes drain at once is the rollout's limit (node_state_reconciler.h: pools).
// Thread-safety: reconcile() runs on several workers, one node each.
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "api/resource.h"
#include "base/json.h"
#include "kube/controller.h"
#include "kube/events.h"
#include "operator/agent_policy.h"
#include "operator/caches.h"
#include "operator/options.h"

namespace sriovdra::op {

struct PodRef {
  std::string namespace_;
  std::string name;
  std::string uid;  // evictions are for this pod only, not one created under its name since
  bool operator==(const PodRef&) const = default;
  bool operator<(const PodRef& o) const {
    return std::tie(namespace_, name, uid) < std::tie(o.namespace_, o.name, o.uid);
  }
};
// The pods holding devices of `driver` from the pool of `node` (pure): each once, sorted.
std::vector<PodRef> podsUsingDevicesOn(const std::string& node, std::string_view driver,
                                       const std::vector<const api::ResourceClaim*>& claims);

struct NodePod {
  PodRef pod;
  bool terminating = false;  // deleted already, waiting for its containers to stop
};
// The pods of a PodList (one node's) that a drain before a reboot evicts (pure): all but those a
// DaemonSet owns, static pods' mirrors and pods that have finished; sorted.
std::vector<NodePod> podsToDrainForReboot(const json::Value& pod_list);

class DrainReconciler {
 public:
  DrainReconciler(kube::Client& client, const OperatorOptions& options, kube::EventRecorder& events,
                  const Caches& caches, AgentPolicyCheck& policy_check)
      : client_(client),
        options_(options),
        events_(events),
        caches_(caches),
        policy_check_(policy_check) {}
  Result<kube::ReconcileResult> reconcile(const std::string& node);

 private:
  Status cordon(const std::string& node, bool unschedulable);
  // Sets (or, with "", removes) an annotation of the node's SriovNodeState.
  Status annotate(const std::string& node, const char* key, const std::string& value);
  // The pods a drain evicts: with `all`, those podsToDrainForReboot keeps (read from the API
  // server), else those using the node's VFs.
  Result<std::vector<NodePod>> podsInTheWay(const std::string& node, bool all);
  Status evictPods(const std::vector<NodePod>& pods, const kube::ObjectReference& state);
  // Grants the reboot (`reboot`: the agent asks, the node holds a slot) once `in_the_way` is
  // empty, or removes a grant that no request stands behind.
  Status grantReboot(const CachedNodeState& state, bool reboot, bool drain,
                     const std::vector<NodePod>& in_the_way, const kube::ObjectReference& ref);
  // The DrainTimedOut Event, when the drain is older than drain_timeout and pods are in the way.
  Status reportTimeout(const CachedNodeState& state, const std::vector<NodePod>& in_the_way,
                       const kube::ObjectReference& ref);

  kube::Client& client_;
  const OperatorOptions& options_;
  kube::EventRecorder& events_;
  const Caches& caches_;
  AgentPolicyCheck& policy_check_;
  // The marks this process wrote ("" = removed), by node: they win over a cache that has not
  // seen them yet, so a second pass never takes its own cordon for someone else's.
  std::mutex mu_;
  std::map<std::string, std::string> marks_;          // guarded by mu_
  std::map<std::string, std::string> drain_started_;  // guarded by mu_; as marks_
  std::map<std::string, int64_t> timeouts_reported_;  // guarded by mu_; periods, by node
};

}  // namespace sriovdra::op
