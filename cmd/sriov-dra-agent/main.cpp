// sriov-dra-agent: configures SR-IOV VFs on its node, reports the PCIe topology, publishes the
// node's ResourceSlices. Thin: flags -> wiring.
#include <condition_variable>

#include <CLI/CLI.hpp>

#include "agent/agent.h"
#include "base/log.h"
#include "base/signals.h"
#include "host/simulated_kernel.h"
#include "http/server.h"
#include "metrics/registry.h"

using namespace sriovdra;

int main(int argc, char** argv) {
  ShutdownSignals signals;
  CLI::App app{"sriov-dra-agent: SR-IOV VFs on this node as DRA devices"};
  kube::KubeconfigOptions kubeconfig;
  std::string ns, node, sysfs_root = "/", state_dir = "/var/lib/sriov-dra";
  std::string metrics_addr = "0", probe_addr = ":8082";
  bool simulate = false;
  int resync_seconds = 30, verbosity = 0;
  app.add_option("--kubeconfig", kubeconfig.path, "kubeconfig file (default: in-cluster)");
  app.add_option("--namespace", ns, "namespace of the SriovNodeStates (the operator's)");
  app.add_option("--node-name", node, "this node's name (default: $NODE_NAME)");
  app.add_option("--sysfs-root", sysfs_root, "root under which sys/ is read and written")
      ->capture_default_str();
  app.add_flag("--simulate-kernel", simulate,
               "SIMULATION: make writes under --sysfs-root behave like the kernel (demo, tests)");
  app.add_option("--state-dir", state_dir, "where the agent remembers the PFs it configured")
      ->capture_default_str();
  app.add_option("--resync-period", resync_seconds, "seconds between rediscoveries")
      ->capture_default_str();
  app.add_option("--metrics-bind-address", metrics_addr, "address for /metrics, \"0\" disables")
      ->capture_default_str();
  app.add_option("--health-probe-bind-address", probe_addr, "address for /healthz and /readyz")
      ->capture_default_str();
  app.add_option("-v,--v", verbosity, "log verbosity");
  CLI11_PARSE(app, argc, argv);
  log::setVerbosity(verbosity);

  if (node.empty()) {
    if (const char* env = std::getenv("NODE_NAME")) node = env;
  }
  if (node.empty()) {
    SDRA_LOG_ERROR << "no node name: pass --node-name or set NODE_NAME";
    return 1;
  }
  auto config = kube::loadConfig(kubeconfig);
  if (!config.ok()) {
    SDRA_LOG_ERROR << config.status().message();
    return 1;
  }
  if (ns.empty()) ns = config->default_namespace;
  if (const char* env = std::getenv("POD_NAMESPACE"); ns.empty() && env != nullptr) ns = env;
  if (ns.empty()) {
    SDRA_LOG_ERROR << "no namespace: pass --namespace (the operator's namespace)";
    return 1;
  }
  auto client = kube::Client::create(*config);
  if (!client.ok()) {
    SDRA_LOG_ERROR << client.status().message();
    return 1;
  }
  std::shared_ptr<host::Sysfs> sysfs;
  if (simulate) {
    SDRA_LOG_WARN << "SIMULATION: --simulate-kernel makes writes under " << sysfs_root
                  << " behave like the kernel; no hardware is touched";
    sysfs = std::make_shared<host::SimulatedKernel>(sysfs_root);
  } else {
    sysfs = std::make_shared<host::RealSysfs>(sysfs_root);
  }

  kube::EventRecorder events(*client, "sriov-dra-agent", node);
  agent::Agent agent(*client, sysfs,
                     std::make_shared<agent::PreparedFile>(state_dir + "/prepared-vfs.json"),
                     {.node_name = node,
                      .namespace_ = ns,
                      .state_dir = state_dir,
                      .resync_period = std::chrono::seconds(resync_seconds)},
                     events);
  auto probes = http::Server::start(
      {.bind_address = probe_addr, .name = "probes"},
      {{"/healthz", [](const http::Request&) { return http::Response::text(200, "ok\n"); }},
       {"/readyz", [&](const http::Request&) {
          if (!agent.synced()) return http::Response::text(500, "informers not synced\n");
          if (!agent.reconciledOnce()) return http::Response::text(500, "first sync pending\n");
          return http::Response::text(200, "ok\n");
        }}});
  if (!probes.ok()) {
    SDRA_LOG_ERROR << "health probes: " << probes.status().message();
    return 1;
  }
  std::unique_ptr<http::Server> metrics_server;
  if (metrics_addr != "0") {
    auto m = http::Server::start(
        {.bind_address = metrics_addr, .name = "metrics"},
        {{"/metrics", [](const http::Request&) {
            return http::Response{
                200, "text/plain; version=0.0.4; charset=utf-8", metrics::renderText(), {}};
          }}});
    if (!m.ok()) {
      SDRA_LOG_ERROR << "metrics: " << m.status().message();
      return 1;
    }
    metrics_server = std::move(*m);
  }
  agent.start();
  SDRA_LOG_INFO << "sriov-dra-agent on node " << node << " (namespace " << ns << ", sysfs root "
                << sysfs_root << ")";
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait(lock, signals.token(), [] { return false; });
  agent.stop();
  events.flush(std::chrono::seconds(5));
  (*probes)->stop();
  return 0;
}
