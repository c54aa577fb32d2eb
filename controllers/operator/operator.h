#pragma once
// The operator's controllers: watches the policy kinds, Nodes, SriovNodeStates and its
// DeviceClasses, and keeps
//   * one SriovNodeState per selected node, whose spec is the render of the policies (written
//     with server-side apply, only when it changes; removed when the node goes away), respecting
//     --max-unavailable for changes that tear down existing VFs;
//   * the DeviceClasses of the driver and of every resourceName in use;
//   * status, conditions and Events on every policy: what it matched, what it lost and why;
//   * sriov_dra_allocated_pairs{alignment}: how aligned the GPU/VF pairs of allocated claims are
//     (dra/alignment.h), from the ResourceClaims and ResourceSlices of the whole cluster;
//   * with agent_daemonset (as OLM installs it): the node agent's DaemonSet in its namespace,
//     applied from that manifest (image replaced by agent_image) and put back when changed.
// Informers run on every replica (for the admission webhook and fast fail-over); controllers only
// run on the leader (startControllers()).
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "api/node_state.h"
#include "api/objects.h"
#include "api/policies.h"
#include "api/resource.h"
#include "http/server.h"
#include "kube/controller.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "policy/policy_set.h"

namespace prometheus {
class Gauge;
}

namespace sriovdra::op {

inline constexpr const char* kFieldManager = "sriov-dra-operator";
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "sriov-dra-operator";
// On SriovNodeState: "true" while the spec written last tears down existing VFs.
inline constexpr const char* kDisruptiveAnnotation =
    "sriovnetwork.k8snetworkplumbingwg.io/disruptive-change";

struct OperatorOptions {
  std::string namespace_;
  std::string resource_prefix;
  api::LabelSelector agent_node_selector;  // empty = every node
  int max_unavailable = 1;
  int workers = 4;
  std::chrono::milliseconds rollout_retry{std::chrono::seconds(5)};
  // A node whose SriovNodeState is over the API server's size limit is retried this often.
  std::chrono::milliseconds too_large_retry{std::chrono::minutes(5)};
  std::shared_ptr<const json::Document> agent_daemonset;  // null = not managed here
  std::string agent_image;                                // "" = as in the manifest
};

// The DaemonSet of a YAML file (its first DaemonSet document), checked enough to apply it.
Result<json::Document> loadAgentDaemonSet(const std::string& yaml, const std::string& where);

// Just the metadata of an object, for informers that only need to notice changes.
struct ObjectOnly {
  kube::ObjectMeta metadata;
  static Result<ObjectOnly> decode(const json::Value& v);
};

class Operator {
 public:
  Operator(std::shared_ptr<kube::Client> client, OperatorOptions options,
           kube::EventRecorder& events);
  ~Operator();
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  void startInformers();
  bool waitForSync(std::chrono::milliseconds timeout);
  bool synced() const;
  void startControllers();
  void stop();

  http::Response handleMutate(const http::Request& req);
  http::Response handleValidate(const http::Request& req);

 private:
  struct PolicySnapshot;
  struct NodeFacts;

  std::shared_ptr<const PolicySnapshot> policies();
  void policiesChanged(const std::string& kind, const std::string& name);
  void enqueueAllNodes();

  Result<kube::ReconcileResult> reconcileNode(const std::string& name);
  Result<kube::ReconcileResult> reconcileDeviceClasses(const std::string& key);
  Result<kube::ReconcileResult> reconcilePolicyStatus(const std::string& key);
  Result<kube::ReconcileResult> reconcileAlignment(const std::string& key);
  Result<kube::ReconcileResult> reconcileAgentDaemonSet(const std::string& key);

  // Returns the generation of the written object.
  Result<int64_t> applyNodeState(const api::Node& node, const api::SriovNodeStateSpec& spec,
                                 bool disruptive);
  // A Warning Event on the SriovNodeState and a slow retry if `error` is kTooLarge, else `error`.
  Result<kube::ReconcileResult> tooLargeOr(const std::string& node,
                                           const api::SriovNodeState* state,
                                           const api::SriovNodeStateSpec& spec, Status error);
  Status deleteNodeState(const std::string& name);
  int disruptiveInFlight(const std::string& except) const;
  void setFacts(const std::string& node, std::optional<NodeFacts> facts);
  void updateMetricsLocked();

  std::shared_ptr<kube::Client> client_;
  const OperatorOptions options_;
  kube::EventRecorder& events_;

  kube::Informer<api::Node> nodes_;
  kube::Informer<api::SriovNetworkNodePolicy> node_policies_;
  kube::Informer<api::SriovResourcePolicy> resource_policies_;
  kube::Informer<api::DeviceAttributes> device_attributes_;
  kube::Informer<api::SriovNodeState> states_;
  kube::Informer<api::DeviceClass> classes_;
  kube::Informer<api::ResourceClaim> claims_;
  kube::Informer<api::ResourceSlice> slices_;
  std::unique_ptr<kube::Informer<ObjectOnly>> daemonsets_;  // with agent_daemonset

  kube::Controller node_controller_;
  kube::Controller class_controller_;
  kube::Controller status_controller_;
  kube::Controller alignment_controller_;
  kube::Controller agent_controller_;

  // Disruptive changes are decided and written one at a time, and remembered until the cache
  // shows them, so concurrent workers never exceed --max-unavailable.
  std::mutex rollout_mu_;
  std::map<std::string, int64_t> disruptive_written_;  // node -> generation written
  std::mutex policies_mu_;
  std::shared_ptr<const PolicySnapshot> snapshot_;  // null = rebuild
  std::mutex facts_mu_;
  std::map<std::string, NodeFacts> facts_;
  std::map<std::string, int64_t> desired_total_, advertised_total_;  // by resource, for metrics
};

}  // namespace sriovdra::op
