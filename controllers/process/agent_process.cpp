#include "process/agent_process.h"

#include <atomic>
#include <condition_variable>

#include "agent/agent.h"
#include "api/names.h"
#include "attach/attacher.h"
#include "base/log.h"
#include "base/strings.h"
#include "host/simulated_kernel.h"
#include "http/server.h"
#include "nri/plugin.h"
#include "plugin/grpc_server.h"
#include "plugin/kubelet_plugin.h"

namespace sriovdra::process {
namespace {

int fail(const std::string& message) {
  SDRA_LOG_ERROR << message;
  return 1;
}

}  // namespace

// Long on purpose: the process in the order it starts its parts and stops them.
int runAgent(AgentProcessOptions o, ShutdownSignals& signals) {
  if (o.node.empty()) {
    if (const char* env = std::getenv("NODE_NAME")) o.node = env;
  }
  if (o.node.empty()) return fail("no node name: pass --node-name or set NODE_NAME");
  auto config = kube::loadConfig(o.kubeconfig);
  if (!config.ok()) return fail(config.status().message());
  std::string& ns = o.namespace_;
  if (ns.empty()) ns = config->default_namespace;
  if (const char* env = std::getenv("POD_NAMESPACE"); ns.empty() && env != nullptr) ns = env;
  if (ns.empty()) return fail("no namespace: pass --namespace (the operator's namespace)");
  auto client = kube::Client::create(*config);
  if (!client.ok()) return fail(client.status().message());
  std::shared_ptr<host::Sysfs> sysfs;
  std::shared_ptr<host::Netlink> netlink;
  if (o.simulate_kernel) {
    SDRA_LOG_WARN << "SIMULATION: --simulate-kernel makes writes under " << o.sysfs_root
                  << " and netlink behave like the kernel; no hardware is touched";
    auto kernel = std::make_shared<host::SimulatedKernel>(o.sysfs_root);
    sysfs = kernel;
    netlink = kernel;
  } else {
    sysfs = std::make_shared<host::RealSysfs>(o.sysfs_root);
    netlink = std::make_shared<host::KernelNetlink>();
  }

  kube::EventRecorder events(*client, "sriov-dra-agent", o.node);
  bool standalone = o.kubelet_plugin && o.configuration_mode == "standalone";
  plugin::AttachRecords attach_records(o.state_dir + "/attach");
  std::unique_ptr<agent::Agent> agent;
  auto plugin = std::make_shared<plugin::KubeletPlugin>(
      *client, sysfs,
      [&agent](const std::string& device) {
        return agent ? agent->advertised(device) : std::nullopt;
      },
      plugin::KubeletPluginOptions{.driver_name = std::string(api::kDriverName),
                            .node_name = o.node,
                            .state_dir = o.state_dir,
                            .cdi_root = o.cdi_root,
                            .device_info_dir = o.device_info_dir,
                            .allowed_drivers = o.allowed_vf_drivers,
                            .attach_records = standalone ? &attach_records : nullptr},
      [&agent](const std::string& pci) { return agent && agent->needsVhostNet(pci); });
  if (Status st = plugin->load(); !st.isOk()) {
    SDRA_LOG_ERROR << st.message();
    kube::ObjectMeta meta;
    meta.namespace_ = ns;
    meta.name = o.node;
    events.warning(kube::ObjectReference::of(api::resources::kSriovNodeStates, meta),
                   "CheckpointUnreadable", st.message());
  }
  agent = std::make_unique<agent::Agent>(*client, sysfs, netlink, plugin,
                                         agent::AgentOptions{.node_name = o.node,
                                                             .namespace_ = ns,
                                                             .state_dir = o.state_dir,
                                                             .resync_period = o.resync_period},
                                         events);
  std::unique_ptr<plugin::GrpcServer> grpc;
  std::atomic<plugin::GrpcServer*> serving{nullptr};  // read by /readyz
  auto probes = http::Server::start(
      {.bind_address = o.probe_address, .name = "probes"},
      {{"/healthz", [](const http::Request&) { return http::Response::text(200, "ok\n"); }},
       {"/readyz", [&](const http::Request&) {
          if (!agent->synced()) return http::Response::text(500, "informers not synced\n");
          if (!agent->reconciledOnce()) return http::Response::text(500, "first sync pending\n");
          plugin::GrpcServer* g = serving.load();
          if (o.kubelet_plugin && (g == nullptr || !g->registered())) {
            return http::Response::text(500, "kubelet has not registered the DRA plugin yet\n");
          }
          return http::Response::text(200, "ok\n");
        }}});
  if (!probes.ok()) return fail("health probes: " + probes.status().message());
  auto metrics_server = serving::startMetricsEndpoint(o.metrics, *client);
  if (!metrics_server.ok()) return fail("metrics: " + metrics_server.status().message());
  agent->start();
  SDRA_LOG_INFO << "sriov-dra-agent on node " << o.node << " (namespace " << ns << ", sysfs root "
                << o.sysfs_root << ")";
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  if (o.kubelet_plugin) {
    // Serve kubelet once the agent knows what it advertises, so the first prepare is answered.
    // Nothing notifies the condition variable about the informers, so poll them briefly.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!agent->synced() && std::chrono::steady_clock::now() < deadline &&
           !signals.token().stop_requested()) {
      cv.wait_for(lock, signals.token(), std::chrono::milliseconds(50), [] { return false; });
    }
    auto served = plugin::GrpcServer::start(*plugin, {.driver_name = std::string(api::kDriverName),
                                                      .registry_dir = o.registry_dir,
                                                      .plugins_dir = o.plugins_dir});
    if (!served.ok()) {
      agent->stop();
      return fail("kubelet plugin: " + served.status().message());
    }
    grpc = std::move(*served);
    serving = grpc.get();
  }
  std::unique_ptr<attach::Attacher> attacher;
  std::unique_ptr<nri::Plugin> nri_plugin;
  if (standalone) {
    o.attach.driver_name = std::string(api::kDriverName);
    attacher = std::make_unique<attach::Attacher>(
        *client, [&plugin] { return plugin->checkpoint(); }, attach_records, o.attach);
    nri_plugin = std::make_unique<nri::Plugin>(
        nri::PluginOptions{.socket_path = o.nri_socket, .index = o.nri_index}, *attacher);
    nri_plugin->start();
    SDRA_LOG_INFO << "standalone mode: attaching prepared VFs to pods through NRI (" << o.nri_socket
                  << ") and CNI (" << join(o.attach.cni_bin_dirs, ":") << "; plugins "
                  << join(o.attach.allowed.plugins, ",") << ")";
  }
  cv.wait(lock, signals.token(), [] { return false; });
  serving = nullptr;
  if (nri_plugin) nri_plugin->stop();
  if (grpc) grpc->stop();
  agent->stop();
  events.flush(std::chrono::seconds(5));
  if (*metrics_server) (*metrics_server)->stop();
  (*probes)->stop();
  return 0;
}

}  // namespace sriovdra::process
