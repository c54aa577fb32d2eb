#pragma once
// With --agent-daemonset (as OLM installs the operator, since bundles cannot carry DaemonSets):
// applies the node agent's DaemonSet from that manifest into the operator's namespace, with the
// image replaced by --agent-image (its init container's too), the init container that installs
// the CNI plugins left out with --agent-install-cni-plugins=false, the cni-bin volume's host path
// set by --agent-cni-bin-dir, and the configDaemonNodeSelector of SriovOperatorConfig "default"
// added to its nodeSelector, puts it back when it is changed or deleted, and re-applies
// it every 10 minutes in case a watch event was missed.
#include <string>

#include "kube/client.h"
#include "kube/controller.h"
#include "operator/caches.h"
#include "operator/options.h"

namespace sriovdra::op {

// The DaemonSet of a YAML file (its first DaemonSet document), checked enough to apply it.
Result<json::Document> loadAgentDaemonSet(const std::string& yaml, const std::string& where);

class AgentDaemonSetReconciler {
 public:
  AgentDaemonSetReconciler(kube::Client& client, const OperatorOptions& options,
                           const Caches& caches)
      : client_(client), options_(options), caches_(caches) {}
  Result<kube::ReconcileResult> reconcile(const std::string& key);

 private:
  kube::Client& client_;
  const OperatorOptions& options_;
  const Caches& caches_;
};

}  // namespace sriovdra::op
