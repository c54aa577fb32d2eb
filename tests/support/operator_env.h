#pragma once
// An operator test environment: a namespace of its own, the operator's RBAC bound to test users,
// nodes labelled for this test only, and helpers that play the agent's part (writing
// SriovNodeState status) and read what the operator wrote.
#include <memory>
#include <optional>
#include <string>

#include "api/node_state.h"
#include "api/policies.h"
#include "api/resource.h"
#include "support/control_plane.h"
#include "support/operator_process.h"

namespace sriovdra::testing {

// A control plane with an audit log and the users "operator" and "operator-b".
ControlPlane& operatorControlPlane();

class OperatorEnv {
 public:
  explicit OperatorEnv(const std::string& prefix);
  // On a control plane of the test's own (same users as the shared one).
  OperatorEnv(const std::string& prefix, ControlPlane& cp);
  static ControlPlaneOptions controlPlaneOptions();
  ControlPlane& cp() const { return cp_; }
  const std::string& ns() const { return ns_; }
  kube::Client& admin() const { return *admin_; }
  // The agents' identity: system:serviceaccount:<ns>:sriov-dra-agent.
  const std::string& agentUser() const { return agent_user_; }

  // Starts the operator process for this namespace, selecting only this test's nodes.
  std::unique_ptr<OperatorProcess> startOperator(OperatorProcessOptions o = {});
  // Writes a fixture tree for the node and starts an agent on it (simulated kernel).
  // With kubelet_dir, the agent also serves the kubelet plugin there (see AgentProcessOptions).
  // With metrics_cert_dir, /metrics is served over HTTPS with that certificate and checks callers.
  // With kubelet_dir the NRI socket is <kubelet_dir>/nri.sock. extra_args go to the agent.
  std::unique_ptr<OperatorProcess> startAgent(
      const std::string& node, const std::string& topology, const std::string& kubelet_dir = "",
      const std::string& metrics_cert_dir = "", std::vector<std::string> extra_args = {},
      std::vector<std::pair<std::string, std::string>> env = {});
  // The fixture root and state directory of a node's agent.
  std::string sysfsRoot(const std::string& node) const;
  std::string stateDir(const std::string& node) const;
  // The writes the simulated kernel saw, one "path value -> result" per line.
  std::string kernelJournal(const std::string& node) const;

  // A Node named <ns>-<suffix> carrying this test's label plus `labels`.
  std::string createNode(const std::string& suffix, std::map<std::string, std::string> labels);
  void setNodeLabel(const std::string& node, const std::string& key,
                    const std::optional<std::string>& value);
  // Applies policy objects from a fixture file into this namespace.
  void applyFixture(const std::string& relative);
  // The reference cluster's three policies: SriovNetworkNodePolicy cx6-vfs (one VF on each
  // ConnectX-6 PF of nodes labelled dra-sriov-cx6=true), SriovResourcePolicy cx6-advertise-vfs
  // and DeviceAttributes cx6-vfs-attrs (resourceName cx6_vfs).
  void applyReferencePolicies();
  void applyObject(json::Document obj);

  std::optional<api::SriovNodeState> nodeState(const std::string& node) const;
  // The node's ResourceSlices (by name) and the devices in them.
  std::vector<api::ResourceSlice> slicesOf(const std::string& node) const;
  size_t deviceCount(const std::string& node) const;
  // The message of an Event of this namespace with the reason, type and involved object name,
  // or nullopt.
  std::optional<std::string> findEvent(const std::string& reason, const std::string& type,
                                       const std::string& involved_name) const;
  // Waits for the operator to create the node's SriovNodeState, then writes `status` as the
  // agent would (its own field manager, observedGeneration = the state's generation).
  void reportStatus(const std::string& node, api::SriovNodeStateStatus status);
  std::optional<api::PolicyStatus> policyStatus(const kube::ResourceType& rt,
                                                const std::string& name) const;
  bool deviceClassExists(const std::string& name) const;

 private:
  ControlPlane& cp_;
  std::string ns_;
  std::shared_ptr<kube::Client> admin_;
  std::string agent_user_;
};

std::string conditionSummary(const api::PolicyStatus& s);

}  // namespace sriovdra::testing
