// sriov-dra-operator: renders policies into per-node SriovNodeStates, maintains DeviceClasses,
// reports policy status, serves the admission webhook. Thin: flags -> wiring.
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include <CLI/CLI.hpp>
#include <unistd.h>

#include "base/files.h"
#include "base/log.h"
#include "base/signals.h"
#include "http/server.h"
#include "kube/leader_election.h"
#include "metrics/registry.h"
#include "operator/operator.h"
#include "policy/selectors.h"
#include "serving/metrics_endpoint.h"

using namespace sriovdra;

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

}  // namespace

int main(int argc, char** argv) {
  ShutdownSignals signals;
  CLI::App app{
      "sriov-dra-operator: SR-IOV policies -> per-node device configuration and DRA "
      "DeviceClasses"};
  kube::KubeconfigOptions kubeconfig;
  std::string ns, probe_addr = ":8081", cert_dir, prefix, agent_selector;
  std::string agent_daemonset_file, agent_image;
  serving::MetricsEndpointOptions metrics{.bind_address = "0"};
  std::string lease_name = "sriov-dra-operator", lease_ns;
  bool leader_elect = false;
  int webhook_port = 9443, max_unavailable = 1, workers = 4, verbosity = 0;
  cert_dir = "/tmp/k8s-webhook-server/serving-certs";
  app.add_option("--kubeconfig", kubeconfig.path,
                 "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  app.add_option("--context", kubeconfig.context, "kubeconfig context");
  app.add_option("--namespace", ns,
                 "the only namespace whose policies count (default: the pod's namespace)");
  app.add_flag("--leader-elect", leader_elect, "run controllers only on the elected leader");
  app.add_option("--leader-election-id", lease_name, "name of the Lease")->capture_default_str();
  app.add_option("--leader-election-namespace", lease_ns,
                 "namespace of the Lease (default: --namespace)");
  serving::addMetricsFlags(app, metrics);
  app.add_option("--health-probe-bind-address", probe_addr, "address for /healthz and /readyz")
      ->capture_default_str();
  app.add_option("--webhook-port", webhook_port, "admission webhook HTTPS port, 0 disables")
      ->capture_default_str();
  app.add_option("--webhook-cert-dir", cert_dir, "directory with tls.crt and tls.key")
      ->capture_default_str();
  app.add_option("--resource-prefix", prefix,
                 "also publish k8s.cni.cncf.io/resourceName=<prefix>/<resourceName> (Multus) and "
                 "set extendedResourceName on per-resource DeviceClasses");
  app.add_option("--agent-daemonset", agent_daemonset_file,
                 "YAML file with the node agent's DaemonSet: the operator applies it in its "
                 "namespace and keeps it so (OLM installs; default: the agent is deployed by "
                 "install.yaml)");
  app.add_option("--agent-image", agent_image,
                 "image of the agent in --agent-daemonset (default: as in the file)");
  app.add_option("--agent-node-selector", agent_selector,
                 "label selector of the nodes that run the agent, e.g. "
                 "\"node-role.kubernetes.io/worker\" (default: every node)");
  app.add_option("--max-unavailable", max_unavailable,
                 "nodes that may recreate existing VFs at the same time")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--workers", workers, "concurrent node reconciles")->capture_default_str();
  app.add_option("-v,--v", verbosity, "log verbosity");
  CLI11_PARSE(app, argc, argv);
  log::setVerbosity(verbosity);

  auto config = kube::loadConfig(kubeconfig);
  if (!config.ok()) return fail(config.status().message());
  if (ns.empty()) ns = config->default_namespace;
  if (const char* env = std::getenv("POD_NAMESPACE"); ns.empty() && env != nullptr) ns = env;
  if (ns.empty()) return fail("no namespace: pass --namespace (or run in a pod)");
  if (lease_ns.empty()) lease_ns = ns;
  auto selector = policy::parseLabelSelector(agent_selector);
  if (!selector.ok()) return fail("--agent-node-selector: " + selector.status().message());
  std::shared_ptr<const json::Document> agent_daemonset;
  if (!agent_daemonset_file.empty()) {
    auto text = readFile(agent_daemonset_file);
    if (!text.ok()) return fail("--agent-daemonset: " + text.status().message());
    auto ds = op::loadAgentDaemonSet(*text, agent_daemonset_file);
    if (!ds.ok()) return fail("--agent-daemonset: " + ds.status().message());
    agent_daemonset = std::make_shared<const json::Document>(std::move(*ds));
  }
  auto client = kube::Client::create(*config);
  if (!client.ok()) return fail(client.status().message());

  kube::EventRecorder events(*client, "sriov-dra-operator");
  op::Operator operator_(*client,
                         {.namespace_ = ns,
                          .resource_prefix = prefix,
                          .agent_node_selector = *selector,
                          .max_unavailable = max_unavailable,
                          .workers = workers,
                          .agent_daemonset = agent_daemonset,
                          .agent_image = agent_image},
                         events);
  int code = 0;
  std::unique_ptr<kube::LeaderElector> elector;
  std::string id = identity();
  if (leader_elect) {
    elector = std::make_unique<kube::LeaderElector>(
        *client,
        kube::LeaderElectionConfig{
            .lease_namespace = lease_ns, .lease_name = lease_name, .identity = id},
        kube::LeaderCallbacks{.on_started_leading = [&] { operator_.startControllers(); },
                              .on_stopped_leading =
                                  [&] {
                                    if (!signals.token().stop_requested()) {
                                      SDRA_LOG_ERROR << "lost leadership; exiting so that a fresh "
                                                        "process campaigns again";
                                      code = 1;
                                    }
                                  }});
  }

  auto probes = http::Server::start(
      {.bind_address = probe_addr, .name = "probes"},
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
  auto metrics_server = serving::startMetricsEndpoint(metrics, *client);
  if (!metrics_server.ok()) return fail("metrics: " + metrics_server.status().message());
  // The webhook's certificate comes from a Secret that may appear after the pod starts
  // (cert-manager, or an administrator): until then the operator runs without the webhook
  // (failurePolicy Ignore) and checks again every 10 s.
  std::mutex webhook_mu;
  std::unique_ptr<http::Server> webhook;
  auto startWebhook = [&]() -> Status {
    auto w = http::Server::start(
        {.bind_address = ":" + std::to_string(webhook_port),
         .tls = http::TlsFiles{cert_dir + "/tls.crt", cert_dir + "/tls.key"},
         .name = "webhook"},
        {{"/mutating-custom-resource",
          [&](const http::Request& r) { return operator_.handleMutate(r); }},
         {"/validating-custom-resource",
          [&](const http::Request& r) { return operator_.handleValidate(r); }}});
    if (!w.ok()) return w.status();
    std::lock_guard lock(webhook_mu);
    webhook = std::move(*w);
    return Status::ok();
  };
  std::jthread webhook_waiter;
  if (webhook_port != 0) {
    if (Status st = startWebhook(); !st.isOk()) {
      SDRA_LOG_WARN << "admission webhook not started: " << st.message()
                    << " (waiting for tls.crt/tls.key in " << cert_dir
                    << "; --webhook-port=0 turns it off)";
      webhook_waiter = std::jthread([&](const std::stop_token& stop) {
        std::mutex m;
        std::condition_variable_any cv;
        std::unique_lock lock(m);
        while (!cv.wait_for(lock, stop, std::chrono::seconds(10), [] { return false; }) &&
               !stop.stop_requested()) {
          if (startWebhook().isOk()) {
            SDRA_LOG_INFO << "admission webhook started with the certificate in " << cert_dir;
            return;
          }
        }
      });
    }
  }

  operator_.startInformers();
  if (!operator_.waitForSync(std::chrono::minutes(2))) {
    return fail("informers did not sync within 2 minutes; check RBAC and API server access");
  }
  SDRA_LOG_INFO << "sriov-dra-operator " << id << " watching namespace " << ns;

  if (elector) {
    elector->run(signals.token());  // returns on shutdown or when leadership is lost
  } else {
    operator_.startControllers();
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait(lock, signals.token(), [] { return false; });
  }
  operator_.stop();
  events.flush(std::chrono::seconds(5));
  webhook_waiter = {};
  if (webhook) webhook->stop();
  if (*metrics_server) (*metrics_server)->stop();
  (*probes)->stop();
  return code;
}
