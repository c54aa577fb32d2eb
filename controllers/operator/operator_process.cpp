#include "operator/operator_process.h"

#include <cstdlib>
#include <random>

#include <unistd.h>

#include "api/selectors.h"
#include "base/files.h"
#include "base/log.h"
#include "kube/leader_election.h"
#include "operator/operator.h"
#include "serving/certificate_gated_server.h"
#include "serving/parts.h"

namespace sriovdra::process {
namespace {

std::string identity() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::mt19937 rng(std::random_device{}());
  return std::string(host) + "_" + std::to_string(rng() % 1000000);
}

// Fills in what the flags left to the environment and parses what they carry as text.
Status resolve(OperatorProcessOptions& o, const kube::RestConfig& config) {
  std::string& ns = o.operator_.namespace_;
  ns = serving::namespaceOf(ns, config);
  if (ns.empty()) {
    return Status(Code::kInvalidArgument, "no namespace: pass --namespace (or run in a pod)");
  }
  if (o.lease_namespace.empty()) o.lease_namespace = ns;
  auto selector = api::parseLabelSelector(o.agent_node_selector);
  if (!selector.ok()) return Status(selector.status()).prepend("--agent-node-selector");
  o.operator_.agent_node_selector = *selector;
  if (o.agent_daemonset_file.empty()) return Status::ok();
  auto text = readFile(o.agent_daemonset_file);
  if (!text.ok()) return Status(text.status()).prepend("--agent-daemonset");
  auto ds = op::loadAgentDaemonSet(*text, o.agent_daemonset_file);
  if (!ds.ok()) return Status(ds.status()).prepend("--agent-daemonset");
  o.operator_.agent_daemonset = std::make_shared<const json::Document>(std::move(*ds));
  return Status::ok();
}

// Runs the reconcilers while this replica leads. Losing the lease exits at once, as
// controller-runtime does: no graceful shutdown, so no reconcile writes anything once another
// replica may lead.
std::unique_ptr<kube::LeaderElector> elector(const std::shared_ptr<kube::Client>& client,
                                             const OperatorProcessOptions& o, const std::string& id,
                                             op::Operator& operator_,
                                             const std::stop_token& shutdown) {
  return std::make_unique<kube::LeaderElector>(
      client,
      kube::LeaderElectionConfig{
          .lease_namespace = o.lease_namespace, .lease_name = o.lease_name, .identity = id},
      kube::LeaderCallbacks{.on_started_leading = [&operator_] { operator_.startControllers(); },
                            .on_stopped_leading =
                                [shutdown] {
                                  if (shutdown.stop_requested()) return;
                                  SDRA_LOG_ERROR << "lost leadership; exiting at once so that a "
                                                    "fresh process campaigns again";
                                  std::_Exit(1);
                                }});
}

// The certificate comes from a Secret that may appear after the pod starts (cert-manager, or an
// administrator): until then the operator runs without the webhook (failurePolicy Ignore).
void addWebhook(kube::Manager& manager, const OperatorProcessOptions& o, op::Operator& operator_) {
  auto webhook = std::make_shared<serving::CertificateGatedServer>(
      http::ServerOptions{
          .bind_address = ":" + std::to_string(o.webhook_port),
          .tls = http::TlsFiles{o.webhook_cert_dir + "/tls.crt", o.webhook_cert_dir + "/tls.key"},
          .name = "admission webhook"},
      std::map<std::string, http::Handler>{
          {"/mutating-custom-resource",
           [&operator_](const http::Request& r) { return operator_.handleMutate(r); }},
          {"/validating-custom-resource",
           [&operator_](const http::Request& r) { return operator_.handleValidate(r); }}});
  manager.add(
      "admission webhook",
      [webhook, dir = o.webhook_cert_dir](const std::stop_token&) {
        if (Status st = webhook->start(); !st.isOk()) {
          SDRA_LOG_WARN << "admission webhook not started: " << st.message()
                        << " (waiting for tls.crt/tls.key in " << dir
                        << "; --webhook-port=0 turns it off)";
        }
        return Status::ok();
      },
      [webhook] { webhook->stop(); });
}

Status startCaches(op::Operator& operator_, const std::stop_token& stop) {
  operator_.startInformers();
  if (operator_.waitForSync(std::chrono::minutes(2), stop)) return Status::ok();
  operator_.stop();
  if (stop.stop_requested()) return Status(Code::kCancelled, "stopping");
  return Status(Code::kTimeout,
                "informers did not sync within 2 minutes; check RBAC and API server access");
}

}  // namespace

int runOperator(OperatorProcessOptions o, ShutdownSignals& signals) {
  auto client =
      serving::connect(o.kubeconfig, [&o](const kube::RestConfig& c) { return resolve(o, c); });
  if (!client.ok()) return serving::exitCode(client.status());
  kube::EventRecorder events(*client, "sriov-dra-operator");
  op::Operator operator_(*client, o.operator_, events);
  std::string id = identity();
  auto leader = o.leader_elect ? elector(*client, o, id, operator_, signals.token()) : nullptr;

  kube::Manager manager;
  manager.addCleanup("events", [&] { events.flush(std::chrono::seconds(5)); });
  serving::addServer(manager, "health probes", [&] {
    return serving::startProbes(
        o.probe_address, [&] { return leader ? leader->check().message() : std::string(); },
        [&] { return operator_.synced() ? "" : "informers not synced"; });
  });
  serving::addServer(manager, "metrics",
                     [&] { return serving::startMetricsEndpoint(o.metrics, *client); });
  if (o.webhook_port != 0) addWebhook(manager, o, operator_);
  manager.add(
      "caches",
      [&](const std::stop_token& stop) {
        Status synced = startCaches(operator_, stop);
        if (synced.isOk()) {
          SDRA_LOG_INFO << "sriov-dra-operator " << id << " watching namespace "
                        << o.operator_.namespace_;
        }
        return synced;
      },
      [&] { operator_.stop(); });
  if (leader) {
    manager.addBackground("leader election",
                          [&](const std::stop_token& stop) { leader->run(stop); });
  } else {
    manager.add("controllers", [&] { operator_.startControllers(); });
  }
  return serving::exitCode(manager.run(signals.token()));
}

}  // namespace sriovdra::process
