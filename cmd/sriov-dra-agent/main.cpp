// sriov-dra-agent: configures SR-IOV VFs on its node, reports the PCIe topology, publishes the
// node's ResourceSlices and is the kubelet DRA plugin of the driver. Thin: flags -> wiring.
#include <atomic>
#include <condition_variable>

#include <CLI/CLI.hpp>

#include "agent/agent.h"
#include "api/names.h"
#include "base/log.h"
#include "base/signals.h"
#include "host/simulated_kernel.h"
#include "http/server.h"
#include "metrics/registry.h"
#include "plugin/grpc_server.h"
#include "plugin/plugin.h"
#include "serving/metrics_endpoint.h"

using namespace sriovdra;

int main(int argc, char** argv) {
  ShutdownSignals signals;
  CLI::App app{"sriov-dra-agent: SR-IOV VFs on this node as DRA devices"};
  kube::KubeconfigOptions kubeconfig;
  std::string ns, node, sysfs_root = "/", state_dir = "/var/lib/sriov-dra";
  std::string probe_addr = ":8082";
  serving::MetricsEndpointOptions metrics{.bind_address = "0"};
  std::string registry_dir = "/var/lib/kubelet/plugins_registry";
  std::string plugins_dir = "/var/lib/kubelet/plugins", cdi_root = "/var/run/cdi";
  std::string device_info_dir = "/var/run/k8s.cni.cncf.io/devinfo/dp";
  bool simulate = false, kubelet_plugin = true;
  int resync_seconds = 30, verbosity = 0;
  app.add_option("--kubeconfig", kubeconfig.path, "kubeconfig file (default: in-cluster)");
  app.add_option("--namespace", ns, "namespace of the SriovNodeStates (the operator's)");
  app.add_option("--node-name", node, "this node's name (default: $NODE_NAME)");
  app.add_option("--sysfs-root", sysfs_root, "root under which sys/ is read and written")
      ->capture_default_str();
  app.add_flag("--simulate-kernel", simulate,
               "SIMULATION: make writes under --sysfs-root behave like the kernel (demo, tests)");
  app.add_option("--state-dir", state_dir,
                 "where the agent remembers the PFs it configured and the prepared claims")
      ->capture_default_str();
  app.add_option("--kubelet-plugin", kubelet_plugin,
                 "serve kubelet's DRA plugin API (false: no pods get VFs on this node)")
      ->capture_default_str();
  app.add_option("--registry-dir", registry_dir, "kubelet's plugin registration directory")
      ->capture_default_str();
  app.add_option("--plugins-dir", plugins_dir,
                 "kubelet's plugin directory (the DRA socket is <dir>/<driver>/dra.sock)")
      ->capture_default_str();
  app.add_option("--cdi-root", cdi_root, "where CDI spec files for prepared claims are written")
      ->capture_default_str();
  app.add_option("--device-info-dir", device_info_dir,
                 "where Multus device-info files are written (\"\" = none)")
      ->capture_default_str();
  app.add_option("--resync-period", resync_seconds, "seconds between rediscoveries")
      ->capture_default_str();
  serving::addMetricsFlags(app, metrics);
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
  std::unique_ptr<agent::Agent> agent;
  auto plugin = std::make_shared<plugin::Plugin>(
      *client, sysfs,
      [&agent](const std::string& device) {
        return agent ? agent->advertised(device) : std::nullopt;
      },
      plugin::PluginOptions{.driver_name = std::string(api::kDriverName),
                            .node_name = node,
                            .state_dir = state_dir,
                            .cdi_root = cdi_root,
                            .device_info_dir = device_info_dir});
  if (Status st = plugin->load(); !st.isOk()) {
    SDRA_LOG_ERROR << st.message();
    kube::ObjectMeta meta;
    meta.namespace_ = ns;
    meta.name = node;
    events.warning(kube::ObjectReference::of(api::resources::kSriovNodeStates, meta),
                   "CheckpointUnreadable", st.message());
  }
  agent = std::make_unique<agent::Agent>(
      *client, sysfs, plugin,
      agent::AgentOptions{.node_name = node,
                          .namespace_ = ns,
                          .state_dir = state_dir,
                          .resync_period = std::chrono::seconds(resync_seconds)},
      events);
  std::unique_ptr<plugin::GrpcServer> grpc;
  std::atomic<plugin::GrpcServer*> serving{nullptr};  // read by /readyz
  auto probes = http::Server::start(
      {.bind_address = probe_addr, .name = "probes"},
      {{"/healthz", [](const http::Request&) { return http::Response::text(200, "ok\n"); }},
       {"/readyz", [&](const http::Request&) {
          if (!agent->synced()) return http::Response::text(500, "informers not synced\n");
          if (!agent->reconciledOnce()) return http::Response::text(500, "first sync pending\n");
          plugin::GrpcServer* g = serving.load();
          if (kubelet_plugin && (g == nullptr || !g->registered())) {
            return http::Response::text(500, "kubelet has not registered the DRA plugin yet\n");
          }
          return http::Response::text(200, "ok\n");
        }}});
  if (!probes.ok()) {
    SDRA_LOG_ERROR << "health probes: " << probes.status().message();
    return 1;
  }
  auto metrics_server = serving::startMetricsEndpoint(metrics, *client);
  if (!metrics_server.ok()) {
    SDRA_LOG_ERROR << "metrics: " << metrics_server.status().message();
    return 1;
  }
  agent->start();
  SDRA_LOG_INFO << "sriov-dra-agent on node " << node << " (namespace " << ns << ", sysfs root "
                << sysfs_root << ")";
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  if (kubelet_plugin) {
    // Serve kubelet once the agent knows what it advertises, so the first prepare is answered.
    // Nothing notifies the condition variable about the informers, so poll them briefly.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!agent->synced() && std::chrono::steady_clock::now() < deadline &&
           !signals.token().stop_requested()) {
      cv.wait_for(lock, signals.token(), std::chrono::milliseconds(50), [] { return false; });
    }
    auto served = plugin::GrpcServer::start(*plugin, {.driver_name = std::string(api::kDriverName),
                                                      .registry_dir = registry_dir,
                                                      .plugins_dir = plugins_dir});
    if (!served.ok()) {
      SDRA_LOG_ERROR << "kubelet plugin: " << served.status().message();
      agent->stop();
      return 1;
    }
    grpc = std::move(*served);
    serving = grpc.get();
  }
  cv.wait(lock, signals.token(), [] { return false; });
  serving = nullptr;
  if (grpc) grpc->stop();
  agent->stop();
  events.flush(std::chrono::seconds(5));
  if (*metrics_server) (*metrics_server)->stop();
  (*probes)->stop();
  return 0;
}
