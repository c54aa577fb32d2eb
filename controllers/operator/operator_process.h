#pragma once
// The sriov-dra-operator process: loads the kubeconfig, starts the operator's caches, the probes
// (/healthz: the leader lease is renewed; /readyz: the caches have synced), /metrics and the
// admission webhook (once its certificate exists), then runs the reconcilers on this replica or,
// with leader election, while it leads; on SIGTERM/SIGINT it stops them, flushes Events and
// returns 0. Losing the lease exits the process at once with 1 (no graceful shutdown: nothing
// more is written once another replica may lead), so the pod restarts and campaigns again.
#include <string>

#include <CLI/CLI.hpp>

#include "base/signals.h"
#include "kube/config.h"
#include "operator/options.h"
#include "serving/metrics_endpoint.h"

namespace sriovdra::process {

struct OperatorProcessOptions {
  kube::KubeconfigOptions kubeconfig;
  op::OperatorOptions operator_;     // namespace_ "" = the kubeconfig's or $POD_NAMESPACE
  std::string agent_node_selector;   // label selector text, parsed here
  std::string agent_daemonset_file;  // "" = the agent is not deployed by the operator
  bool leader_elect = false;
  std::string lease_name = "sriov-dra-operator";
  std::string lease_namespace;  // "" = the operator's namespace
  std::string probe_address = ":8081";
  serving::MetricsEndpointOptions metrics{.bind_address = "0"};
  int webhook_port = 9443;  // 0 = no webhook
  std::string webhook_cert_dir = "/tmp/k8s-webhook-server/serving-certs";
};

// Registers the operator's flags on `app`, each writing its field of `o` (whose values are the
// defaults). Defined in operator_flags.cpp.
void addOperatorFlags(CLI::App& app, OperatorProcessOptions& o);

// The process's exit code.
int runOperator(OperatorProcessOptions options, ShutdownSignals& signals);

}  // namespace sriovdra::process
