#include "sriov-dra-agent/agent_main.h"

#include <iostream>
#include <set>

#include <CLI/CLI.hpp>

#include "api/names.h"
#include "base/log.h"
#include "base/process.h"
#include "base/signals.h"
#include "dra/vf_config.h"
#include "node/attach/flags.h"
#include "node/cni/install.h"

namespace sriovdra {

namespace {

// Where kubelet and the runtime meet the agent. The SR-IOV DRA driver's names and environment
// variables (its Helm chart sets those) are accepted too.
void addKubeletFlags(CLI::App& app, process::AgentProcessOptions& o) {
  app.add_option("--kubelet-plugin", o.kubelet_plugin,
                 "serve kubelet's DRA plugin API (false: no pods get VFs on this node)")
      ->capture_default_str();
  app.add_option("--registry-dir,--kubelet-registrar-directory-path", o.registry_dir,
                 "kubelet's plugin registration directory")
      ->envname("KUBELET_REGISTRAR_DIRECTORY_PATH")
      ->capture_default_str();
  app.add_option("--plugins-dir,--kubelet-plugins-directory-path", o.plugins_dir,
                 "kubelet's plugin directory (the DRA socket is <dir>/<driver>/dra.sock)")
      ->envname("KUBELET_PLUGINS_DIRECTORY_PATH")
      ->capture_default_str();
  app.add_option("--cdi-root", o.cdi_root, "where CDI spec files for prepared claims are written")
      ->envname("CDI_ROOT")
      ->capture_default_str();
  app.add_option("--device-info-dir", o.device_info_dir,
                 "where Multus device-info files are written (\"\" = none)")
      ->capture_default_str();
  app.add_flag("--enable-device-metadata", o.device_metadata,
               "mount a KEP-5304 metadata file describing its VFs (attributes such as "
               "resource.kubernetes.io/pciBusID) into every container of a claim")
      ->envname("ENABLE_DEVICE_METADATA")
      ->capture_default_str();
  app.add_flag("--vf-metrics", o.vf_metrics,
               "serve per-VF counters (sriov_vf_*) and the VFs prepared for pods "
               "(sriov_kubepoddevice) on /metrics, as the SR-IOV network operator's metrics "
               "exporter names them")
      ->capture_default_str();
  app.add_option("--configuration-mode", o.configuration_mode,
                 "standalone: the agent attaches prepared VFs to pods itself (an NRI plugin "
                 "running CNI); multus: Multus does, from the device-info files (also "
                 "STANDALONE, MULTUS)")
      ->envname("CONFIGURATION_MODE")
      ->transform(CLI::IsMember({"standalone", "multus"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_option("--nri-socket", o.nri_socket, "the container runtime's NRI socket (standalone)")
      ->capture_default_str();
  app.add_option("--nri-plugin-name", o.nri_name, "this plugin's name at the runtime")
      ->envname("NRI_PLUGIN_NAME")
      ->capture_default_str();
  app.add_option("--nri-plugin-index", o.nri_index,
                 "two digits: where the runtime calls this plugin among others")
      ->envname("NRI_PLUGIN_IDX")
      ->check(attach::nriPluginIndex())
      ->capture_default_str();
  attach::addAttachFlags(app, o.attach);
}

}  // namespace

int agentMain(int argc, char** argv, process::KernelFactory kernel) {
  useOneHeapArena();  // before any thread: its threads mostly wait on the API server
  ShutdownSignals signals;
  CLI::App app{"sriov-dra-agent: SR-IOV VFs on this node as DRA devices"};
  process::AgentProcessOptions o;
  o.kernel = std::move(kernel);
  int resync_seconds = 30;
  app.add_option("--kubeconfig", o.kubeconfig.path,
                 "kubeconfig file (default: $KUBECONFIG, else in-cluster)");
  app.add_option("--namespace", o.namespace_, "namespace of the SriovNodeStates (the operator's)")
      ->envname("NAMESPACE");
  app.add_option("--node-name", o.node, "this node's name")->envname("NODE_NAME");
  app.add_option("--sysfs-root", o.sysfs_root, "root under which sys/ is read and written")
      ->capture_default_str();
  app.add_option("--state-dir", o.state_dir,
                 "where the agent remembers the PFs it configured and the prepared claims")
      ->capture_default_str();
  app.add_option("--allowed-vf-drivers", o.allowed_vf_drivers,
                 "kernel drivers a claim's VfConfig may bind VFs to, besides vfio-pci and the VF's "
                 "own (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](const std::string& d) {
            return api::isDriverName(d) ? std::string() : "\"" + d + "\" is not a driver name";
          },
          "DRIVER"));
  app.add_option("--ib-guid-pool", o.ib_guid_pool,
                 "InfiniBand VF GUIDs per PF (the SR-IOV network operator's JSON); without the "
                 "file, GUIDs derived from the node, PF and VF")
      ->capture_default_str();
  app.add_option("--reboot-command", o.reboot_command,
                 "reboot the node with this command (comma-separated argv, run without a shell) "
                 "once the operator grants a reboot for firmware changes; none: the node waits "
                 "for a person or a reboot tool")
      ->delimiter(',');
  addKubeletFlags(app, o);
  app.add_option("--resync-period", resync_seconds, "seconds between rediscoveries")
      ->capture_default_str();
  serving::addMetricsFlags(app, o.metrics);
  app.add_option("--health-probe-bind-address", o.probe_address, "address for /healthz and /readyz")
      ->capture_default_str();
  app.add_option("-v,--v", o.verbosity,
                 "log verbosity (a SriovOperatorConfig's logLevel takes its place)");
  std::string plugins_from = "/usr/lib/sriov-dra/cni", plugins_to;
  auto* install = app.add_subcommand(
      "install-cni-plugins",
      "install the sriov and ib-sriov CNI plugins this image carries into the node's CNI bin "
      "directory, then exit (the agent's init container)");
  install->add_option("--from", plugins_from, "where the image keeps the plugins")
      ->capture_default_str();
  install->add_option("--to", plugins_to, "the node's CNI bin directory, as mounted")->required();
  CLI11_PARSE(app, argc, argv);
  if (install->parsed()) {
    auto done = cni_plugin::installPlugins(plugins_from, plugins_to);
    if (!done.ok()) {
      std::cerr << "install-cni-plugins: " << done.status().message() << "\n";
      return 1;
    }
    for (const auto& line : *done) std::cout << line << "\n";
    return 0;
  }
  log::setVerbosity(o.verbosity);
  o.resync_period = std::chrono::seconds(resync_seconds);
  return process::runAgent(std::move(o), signals);
}

}  // namespace sriovdra
