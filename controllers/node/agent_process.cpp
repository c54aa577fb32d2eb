#include "node/agent_process.h"

#include <atomic>

#include "api/names.h"
#include "base/log.h"
#include "base/strings.h"
#include "metrics/registry.h"
#include "node/agent/agent.h"
#include "node/agent/vf_exporter.h"
#include "node/attach/attacher.h"
#include "node/kubelet_plugin/grpc_server.h"
#include "node/kubelet_plugin/kubelet_plugin.h"
#include "node/state/local_state.h"
#include "nri/plugin.h"
#include "policy/operator_config.h"
#include "serving/parts.h"

namespace sriovdra::process {
namespace {

// Fills in what the flags left to the environment.
Status resolve(AgentProcessOptions& o, const kube::RestConfig& config) {
  if (o.node.empty()) {
    return Status(Code::kInvalidArgument, "no node name: pass --node-name or set NODE_NAME");
  }
  o.namespace_ = serving::namespaceOf(o.namespace_, config);
  if (o.namespace_.empty()) {
    return Status(Code::kInvalidArgument,
                  "no namespace: pass --namespace (the operator's namespace)");
  }
  return Status::ok();
}

HostKernel kernel(const AgentProcessOptions& o) {
  HostKernel k =
      o.kernel ? o.kernel(o.sysfs_root)
               : HostKernel{std::make_shared<host::RealSysfs>(o.sysfs_root),
                            std::make_shared<host::KernelNetlink>(), host::mstconfigFirmware(),
                            host::commandRebooter(o.reboot_command),
                            std::make_shared<host::KernelRdma>()};
  if (o.reboot_command.empty()) k.rebooter = nullptr;
  return k;
}

// The node's SriovNodeState, which the agent's Events are about (the only object its admission
// policy lets it record Events for).
kube::ObjectReference nodeStateRef(const AgentProcessOptions& o) {
  kube::ObjectMeta meta;
  meta.namespace_ = o.namespace_;
  meta.name = o.node;
  return kube::ObjectReference::of(api::resources::kSriovNodeStates, meta);
}

// The checkpoint is read before anything serves; one that cannot be read is reported as an
// Event on the node's SriovNodeState, and the node starts without prepared claims.
Status loadCheckpoint(node::LocalState& local, kube::EventRecorder& events,
                      const AgentProcessOptions& o) {
  Status st = local.load();
  if (st.isOk()) return st;
  SDRA_LOG_ERROR << st.message();
  events.warning(nodeStateRef(o), "CheckpointUnreadable", st.message());
  return Status::ok();
}

// /readyz: the caches synced, the first host sync done and, with the kubelet plugin, kubelet
// registered it.
serving::ProbeCheck readiness(const node::LocalState& local, const agent::Agent& agent,
                              bool kubelet_plugin,
                              const std::atomic<kubelet_plugin::GrpcServer*>& serving) {
  return [&local, &agent, kubelet_plugin, &serving]() -> std::string {
    if (!local.synced()) return "informers not synced";
    if (!agent.reconciledOnce()) return "first sync pending";
    kubelet_plugin::GrpcServer* g = serving.load();
    if (kubelet_plugin && (g == nullptr || !g->registered())) {
      return "kubelet has not registered the DRA plugin yet";
    }
    return "";
  };
}

// kubelet is served once the node's caches know what it advertises, so the first prepare is
// answered.
void addKubeletPlugin(kube::Manager& manager, const AgentProcessOptions& o,
                      kubelet_plugin::Helper& helper, node::LocalState& local,
                      std::atomic<kubelet_plugin::GrpcServer*>& serving) {
  auto grpc = std::make_shared<std::unique_ptr<kubelet_plugin::GrpcServer>>();
  manager.add(
      "kubelet plugin",
      [&, grpc](const std::stop_token& stop) {
        local.waitForSync(std::chrono::seconds(60), stop);
        auto served =
            kubelet_plugin::GrpcServer::start(helper, {.driver_name = std::string(api::kDriverName),
                                                       .registry_dir = o.registry_dir,
                                                       .plugins_dir = o.plugins_dir});
        if (!served.ok()) return served.status();
        *grpc = std::move(*served);
        serving = grpc->get();
        return Status::ok();
      },
      [&serving, grpc] {
        serving = nullptr;
        (*grpc)->stop();
      });
}

// Standalone mode: the NRI plugin that attaches prepared VFs to pods with CNI.
void addAttacher(kube::Manager& manager, const AgentProcessOptions& o,
                 const std::shared_ptr<attach::Attacher>& attacher) {
  auto nri_plugin = std::make_shared<nri::Plugin>(
      nri::PluginOptions{.socket_path = o.nri_socket, .name = o.nri_name, .index = o.nri_index},
      *attacher);
  manager.add(
      "NRI plugin",
      [&o, attacher, nri_plugin](const std::stop_token&) {
        nri_plugin->start();
        SDRA_LOG_INFO << "standalone mode: attaching prepared VFs to pods through NRI ("
                      << o.nri_socket << ") and CNI (" << join(o.attach.cni_bin_dirs, ":")
                      << "; plugins " << join(o.attach.allowed.plugins, ",") << ")";
        return Status::ok();
      },
      [nri_plugin] { nri_plugin->stop(); });
}

// The log verbosity and whether Mellanox firmware is changed follow SriovOperatorConfig "default"
// (policy::validSettings). A cluster without its CRD only logs that the informer cannot list;
// nothing waits for it.
void addOperatorConfigWatch(kube::Manager& manager, const AgentProcessOptions& o,
                            const std::shared_ptr<kube::Client>& client, agent::Agent& agent) {
  kube::InformerOptions io;
  io.name = "sriovoperatorconfig";
  io.namespace_ = o.namespace_;
  io.field_selector = std::string("metadata.name=") + api::kDefaultOperatorConfigName;
  auto configs = std::make_shared<kube::Informer<api::SriovOperatorConfig>>(
      client, api::resources::kSriovOperatorConfigs, io);
  auto apply = [ns = o.namespace_, flag = o.verbosity, &agent](const api::SriovOperatorConfig* c) {
    agent.setFirmwareChanges(policy::validSettings(c, ns).firmware);
    int v = policy::logVerbosity(c, ns, flag);
    if (v == log::verbosity()) return;
    SDRA_LOG_INFO << "log verbosity " << v
                  << (v != flag ? " (SriovOperatorConfig logLevel)" : " (--v)");
    log::setVerbosity(v);
  };
  configs->addHandlers({.on_add = [apply](const auto& c) { apply(c.get()); },
                        .on_update = [apply](const auto&, const auto& c) { apply(c.get()); },
                        .on_delete = [apply](const auto&, bool) { apply(nullptr); }});
  manager.add(
      "operator config", [configs] { configs->start(); }, [configs] { configs->stop(); });
}

}  // namespace

int runAgent(AgentProcessOptions o, ShutdownSignals& signals) {
  auto client =
      serving::connect(o.kubeconfig, [&o](const kube::RestConfig& c) { return resolve(o, c); });
  if (!client.ok()) return serving::exitCode(client.status());
  auto [sysfs, netlink, firmware, rebooter, rdma] = kernel(o);
  kube::EventRecorder events(*client, "sriov-dra-agent", o.node);
  const std::string metadata_dir =
      o.device_metadata ? o.plugins_dir + "/" + std::string(api::kDriverName) : "";
  node::LocalState local(*client, {.driver_name = std::string(api::kDriverName),
                                   .node_name = o.node,
                                   .namespace_ = o.namespace_,
                                   .state_dir = o.state_dir,
                                   .cdi_root = o.cdi_root,
                                   .metadata_dir = metadata_dir});
  agent::Agent agent(*client, sysfs, netlink, firmware, rebooter, rdma, local,
                     {.node_name = o.node,
                      .namespace_ = o.namespace_,
                      .state_dir = o.state_dir,
                      .resync_period = o.resync_period,
                      .ib_guid_pool = o.ib_guid_pool},
                     events);
  std::shared_ptr<attach::Attacher> attacher;
  std::function<Status(const std::string&)> detach_claim;
  if (o.kubelet_plugin && o.configuration_mode == "standalone") {
    attacher =
        std::make_shared<attach::Attacher>(*client, local, o.attach, events, nodeStateRef(o));
    detach_claim = [attacher](const std::string& uid) { return attacher->detachClaim(uid); };
  }
  kubelet_plugin::KubeletPlugin kubelet_plugin(*client, sysfs, local,
                                               {.driver_name = std::string(api::kDriverName),
                                                .node_name = o.node,
                                                .cdi_root = o.cdi_root,
                                                .device_info_dir = o.device_info_dir,
                                                .allowed_drivers = o.allowed_vf_drivers,
                                                .attaches = o.configuration_mode == "standalone",
                                                .metadata_dir = metadata_dir,
                                                .detach_claim = detach_claim});
  kubelet_plugin::Helper helper(kubelet_plugin, *client);
  std::atomic<kubelet_plugin::GrpcServer*> serving{nullptr};  // read by /readyz

  kube::Manager manager;
  manager.addCleanup("events", [&] { events.flush(std::chrono::seconds(5)); });
  manager.add("checkpoint",
              [&](const std::stop_token&) { return loadCheckpoint(local, events, o); });
  serving::addServer(manager, "health probes", [&] {
    return serving::startProbes(
        o.probe_address, [] { return std::string(); },
        readiness(local, agent, o.kubelet_plugin, serving));
  });
  std::shared_ptr<agent::VfExporter> vf_exporter;  // registered weakly: lives while we run
  if (o.vf_metrics) {
    vf_exporter = std::make_shared<agent::VfExporter>(local, netlink);
    metrics::addCollectable(vf_exporter);
  }
  serving::addServer(manager, "metrics",
                     [&] { return serving::startMetricsEndpoint(o.metrics, *client); });
  manager.add(
      "node caches", [&] { local.start(); }, [&] { local.stop(); });
  manager.add(
      "agent", [&] { agent.start(); }, [&] { agent.stop(); });
  addOperatorConfigWatch(manager, o, *client, agent);
  if (o.kubelet_plugin) addKubeletPlugin(manager, o, helper, local, serving);
  if (attacher) addAttacher(manager, o, attacher);
  SDRA_LOG_INFO << "sriov-dra-agent on node " << o.node << " (namespace " << o.namespace_
                << ", sysfs root " << o.sysfs_root << ")";
  return serving::exitCode(manager.run(signals.token()));
}

}  // namespace sriovdra::process
