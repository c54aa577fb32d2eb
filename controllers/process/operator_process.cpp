#include "process/operator_process.h"

#include <condition_variable>
#include <cstdlib>
#include <random>

#include <unistd.h>

#include "base/files.h"
#include "base/log.h"
#include "http/server.h"
#include "kube/leader_election.h"
#include "operator/operator.h"
#include "policy/selectors.h"
#include "serving/certificate_gated_server.h"

namespace sriovdra::process {
namespace {

std::string identity() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::mt19937 rng(std::random_device{}());
  return std::string(host) + "_" + std::to_string(rng() % 1000000);
}

int fail(const std::string& message) {
  SDRA_LOG_ERROR << message;
  return 1;
}

void waitForShutdown(ShutdownSignals& signals) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait(lock, signals.token(), [] { return false; });
}

}  // namespace

// Long on purpose: the process in the order it starts its parts and stops them.
int runOperator(OperatorProcessOptions o, ShutdownSignals& signals) {
  auto config = kube::loadConfig(o.kubeconfig);
  if (!config.ok()) return fail(config.status().message());
  std::string& ns = o.operator_.namespace_;
  if (ns.empty()) ns = config->default_namespace;
  if (const char* env = std::getenv("POD_NAMESPACE"); ns.empty() && env != nullptr) ns = env;
  if (ns.empty()) return fail("no namespace: pass --namespace (or run in a pod)");
  if (o.lease_namespace.empty()) o.lease_namespace = ns;
  auto selector = policy::parseLabelSelector(o.agent_node_selector);
  if (!selector.ok()) return fail("--agent-node-selector: " + selector.status().message());
  o.operator_.agent_node_selector = *selector;
  if (!o.agent_daemonset_file.empty()) {
    auto text = readFile(o.agent_daemonset_file);
    if (!text.ok()) return fail("--agent-daemonset: " + text.status().message());
    auto ds = op::loadAgentDaemonSet(*text, o.agent_daemonset_file);
    if (!ds.ok()) return fail("--agent-daemonset: " + ds.status().message());
    o.operator_.agent_daemonset = std::make_shared<const json::Document>(std::move(*ds));
  }
  auto client = kube::Client::create(*config);
  if (!client.ok()) return fail(client.status().message());

  kube::EventRecorder events(*client, "sriov-dra-operator");
  op::Operator operator_(*client, o.operator_, events);
  std::unique_ptr<kube::LeaderElector> elector;
  std::string id = identity();
  if (o.leader_elect) {
    elector = std::make_unique<kube::LeaderElector>(
        *client,
        kube::LeaderElectionConfig{
            .lease_namespace = o.lease_namespace, .lease_name = o.lease_name, .identity = id},
        kube::LeaderCallbacks{.on_started_leading = [&] { operator_.startControllers(); },
                              .on_stopped_leading =
                                  [&] {
                                    if (signals.token().stop_requested()) return;
                                    // As controller-runtime: no graceful shutdown, so that no
                                    // reconcile writes anything once another replica may lead.
                                    SDRA_LOG_ERROR << "lost leadership; exiting at once so that "
                                                      "a fresh process campaigns again";
                                    std::_Exit(1);
                                  }});
  }

  auto probes = http::Server::start(
      {.bind_address = o.probe_address, .name = "probes"},
      {{"/healthz",
        [&](const http::Request&) {
          Status st = elector ? elector->check() : Status::ok();
          return st.isOk() ? http::Response::text(200, "ok\n")
                           : http::Response::text(500, st.message() + "\n");
        }},
       {"/readyz", [&](const http::Request&) {
          return operator_.synced() ? http::Response::text(200, "ok\n")
                                    : http::Response::text(500, "informers not synced\n");
        }}});
  if (!probes.ok()) return fail("health probes: " + probes.status().message());
  auto metrics_server = serving::startMetricsEndpoint(o.metrics, *client);
  if (!metrics_server.ok()) return fail("metrics: " + metrics_server.status().message());
  // The certificate comes from a Secret that may appear after the pod starts (cert-manager, or an
  // administrator): until then the operator runs without the webhook (failurePolicy Ignore).
  std::unique_ptr<serving::CertificateGatedServer> webhook;
  if (o.webhook_port != 0) {
    webhook = std::make_unique<serving::CertificateGatedServer>(
        http::ServerOptions{
            .bind_address = ":" + std::to_string(o.webhook_port),
            .tls = http::TlsFiles{o.webhook_cert_dir + "/tls.crt", o.webhook_cert_dir + "/tls.key"},
            .name = "admission webhook"},
        std::map<std::string, http::Handler>{
            {"/mutating-custom-resource",
             [&](const http::Request& r) { return operator_.handleMutate(r); }},
            {"/validating-custom-resource",
             [&](const http::Request& r) { return operator_.handleValidate(r); }}});
    if (Status st = webhook->start(); !st.isOk()) {
      SDRA_LOG_WARN << "admission webhook not started: " << st.message()
                    << " (waiting for tls.crt/tls.key in " << o.webhook_cert_dir
                    << "; --webhook-port=0 turns it off)";
    }
  }

  operator_.startInformers();
  if (!operator_.waitForSync(std::chrono::minutes(2), signals.token())) {
    if (signals.token().stop_requested()) {
      operator_.stop();
      return 0;
    }
    return fail("informers did not sync within 2 minutes; check RBAC and API server access");
  }
  SDRA_LOG_INFO << "sriov-dra-operator " << id << " watching namespace " << ns;

  if (elector) {
    elector->run(signals.token());  // returns on shutdown or when leadership is lost
  } else {
    operator_.startControllers();
    waitForShutdown(signals);
  }
  operator_.stop();
  events.flush(std::chrono::seconds(5));
  if (webhook) webhook->stop();
  if (*metrics_server) (*metrics_server)->stop();
  (*probes)->stop();
  return 0;
}

}  // namespace sriovdra::process
