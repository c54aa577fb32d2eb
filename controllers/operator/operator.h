#pragma once
// The operator: one set of caches (caches.h) and one reconciler per concern, wired in one place.
//   NodeStateReconciler       one SriovNodeState per selected node: the render of the policies
//   DeviceClassReconciler     the DeviceClasses of the driver and of every resourceName
//   PolicyStatusReconciler    status, conditions and Events on every policy
//   AlignmentReconciler       sriov_dra_allocated_pairs{alignment}, sriov_dra_claims_sharing_pf
//   AgentDaemonSetReconciler  with --agent-daemonset: the node agent's DaemonSet
//   NetworkReconciler         the NetworkAttachmentDefinition of every SriovNetwork/SriovIBNetwork
//   OperatorConfigReconciler  SriovOperatorConfig "default": log level, Ready and
//                             AgentAdmissionPolicy conditions
//   DrainReconciler           cordon, evict and uncordon nodes whose VFs are recreated
//   MetricsCertificateReconciler  the metrics CA and serving certificate
// and the admission webhook (webhook.h). Informers run on every replica (for the webhook and fast
// fail-over); reconcilers only on the leader (startControllers()). The network reconciler starts
// once its own caches (NetworkCaches) have synced, so a cluster without Multus's CRD still gets
// the rest. Which cache change enqueues which reconciler is the table in operator.cpp.
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "http/server.h"
#include "kube/controller.h"
#include "kube/events.h"
#include "operator/agent_daemonset_reconciler.h"
#include "operator/alignment_reconciler.h"
#include "operator/caches.h"
#include "operator/device_class_reconciler.h"
#include "operator/drain_reconciler.h"
#include "operator/metrics_certificate_reconciler.h"
#include "operator/network_reconciler.h"
#include "operator/node_facts.h"
#include "operator/node_state_reconciler.h"
#include "operator/operator_config_reconciler.h"
#include "operator/options.h"
#include "operator/policy_snapshot.h"
#include "operator/policy_status_reconciler.h"
#include "operator/settle.h"
#include "operator/webhook.h"

namespace sriovdra::op {

class Operator {
 public:
  Operator(std::shared_ptr<kube::Client> client, OperatorOptions options,
           kube::EventRecorder& events);
  ~Operator();
  Operator(const Operator&) = delete;
  Operator& operator=(const Operator&) = delete;

  void startInformers() {
    caches_.start();
    network_caches_.start();
  }
  bool waitForSync(std::chrono::milliseconds timeout, const std::stop_token& stop) {
    return caches_.waitForSync(timeout, stop);
  }
  bool synced() const { return caches_.synced(); }
  void startControllers();
  void stop();

  http::Response handleMutate(const http::Request& req) { return webhook_.handleMutate(req); }
  http::Response handleValidate(const http::Request& req) { return webhook_.handleValidate(req); }

 private:
  void wire();
  void policiesChanged(const std::string& kind, const std::string& name);
  // The policies' burst of changes is over (settle_): every node and the device classes are
  // rendered; otherwise looks again when it may be.
  Result<kube::ReconcileResult> settled();
  void enqueueAllNodes(std::chrono::milliseconds delay);
  // The policy status keys whose facts a render changed: kept until the render queue drains
  // (its on_drained event calls flushStatusKeys) or busy_status_interval passes.
  void factsChanged(const std::set<std::string>& keys);
  void deferStatus(const std::set<std::string>& keys);
  void flushStatusKeys();
  void wireNetworks();
  void startNetworkController(const std::stop_token& stop);

  std::shared_ptr<kube::Client> client_;
  const OperatorOptions options_;
  Caches caches_;
  NetworkCaches network_caches_;
  PolicySnapshots policies_;
  NodeFactsStore facts_;
  Webhook webhook_;

  NodeStateReconciler node_states_;
  DeviceClassReconciler device_classes_;
  PolicyStatusReconciler policy_status_;
  AlignmentReconciler alignment_;
  AgentDaemonSetReconciler agent_daemonset_;
  NetworkReconciler networks_;
  AgentPolicyCheck agent_policy_;  // shared by the two below
  OperatorConfigReconciler operator_config_;
  DrainReconciler drain_;
  MetricsCertificateReconciler metrics_certificates_;

  kube::Controller node_controller_;
  kube::Controller class_controller_;
  kube::Controller status_controller_;
  kube::Controller alignment_controller_;
  kube::Controller agent_controller_;
  kube::Controller network_controller_;
  kube::Controller config_controller_;
  kube::Controller drain_controller_;
  kube::Controller metrics_certificate_controller_;  // the one key kKey
  // A burst of policy changes renders the nodes once: at most this many times policy_settle
  // after its first change.
  static constexpr int kSettleMaxFactor = 10;
  static constexpr const char* kSettleKey = "policies";
  Settle settle_;
  kube::Controller settle_controller_;  // the one key kSettleKey
  std::jthread network_starter_;
  std::mutex status_mu_;
  std::set<std::string> pending_status_;  // guarded by status_mu_
};

}  // namespace sriovdra::op
