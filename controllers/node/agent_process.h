#pragma once
// The sriov-dra-agent process: the node agent (agent/agent.h) and, unless disabled, kubelet's
// DRA plugin (kubelet_plugin/kubelet_plugin.h) served over gRPC once the agent knows what it
// advertises, with, in standalone mode, the NRI plugin that attaches prepared VFs to pods
// (attach/attacher.h), all sharing the node's local state (state/local_state.h); the probes
// (/readyz: caches synced, the first host sync done and kubelet registered the plugin) and
// /metrics. A checkpoint that cannot be read is reported as a CheckpointUnreadable Event on the
// node's SriovNodeState. The log verbosity follows the logLevel of SriovOperatorConfig "default"
// (watched; --v without it). SIGTERM/SIGINT stop everything and return 0.
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/signals.h"
#include "host/firmware.h"
#include "host/netlink.h"
#include "host/rdma.h"
#include "host/reboot.h"
#include "host/sysfs.h"
#include "kube/config.h"
#include "node/attach/attacher.h"
#include "serving/metrics_endpoint.h"

namespace sriovdra::process {

// The kernel as the agent sees it: sysfs under --sysfs-root, netlink, Mellanox firmware, and a
// way to reboot the host (used only with a --reboot-command).
struct HostKernel {
  std::shared_ptr<host::Sysfs> sysfs;
  std::shared_ptr<host::Netlink> netlink;
  std::shared_ptr<host::Firmware> firmware;
  std::shared_ptr<host::Rebooter> rebooter;
  std::shared_ptr<host::Rdma> rdma;
};
// Gives the agent its kernel for a sysfs root. Production binaries use none (the real kernel:
// RealSysfs and KernelNetlink); the demo's and the tests' sriov-dra-agent-simulated gives the
// simulated one (host/simulated_kernel.h), which only that binary links; it reboots the
// simulated host instead of running the --reboot-command.
using KernelFactory = std::function<HostKernel(const std::string& sysfs_root)>;

struct AgentProcessOptions {
  kube::KubeconfigOptions kubeconfig;
  std::string namespace_;  // "" = the kubeconfig's or $POD_NAMESPACE
  std::string node;        // "" = $NODE_NAME
  std::string sysfs_root = "/";
  KernelFactory kernel;  // empty: the real kernel
  std::string state_dir = "/var/lib/sriov-dra";
  bool kubelet_plugin = true;
  std::string registry_dir = "/var/lib/kubelet/plugins_registry";
  std::string plugins_dir = "/var/lib/kubelet/plugins";
  // KEP-5304 device metadata files for the claims' containers (<plugins_dir>/<driver>/...).
  bool device_metadata = false;
  std::string cdi_root = "/var/run/cdi";
  std::string device_info_dir = "/var/run/k8s.cni.cncf.io/devinfo/dp";
  std::set<std::string> allowed_vf_drivers;  // beyond vfio-pci and the VF's own
  std::string ib_guid_pool = "/etc/sriov-operator/infiniband/guids";  // agent/agent.h
  // Run (no shell) to reboot the node once the operator grants a reboot for firmware changes;
  // empty: the agent never reboots (a person or a reboot tool does).
  std::vector<std::string> reboot_command;
  std::chrono::seconds resync_period{30};
  // standalone: an NRI plugin attaches prepared VFs with CNI (with the kubelet plugin only);
  // multus: Multus does, from the device-info files.
  std::string configuration_mode = "standalone";
  std::string nri_socket = "/var/run/nri/nri.sock";
  std::string nri_name = "sriov-dra";
  std::string nri_index = "42";    // the SR-IOV DRA driver's default
  attach::AttacherOptions attach;  // standalone: CNI bin dirs and what NADs may run
  std::string probe_address = ":8082";
  int verbosity = 0;  // --v; a SriovOperatorConfig's logLevel takes its place
  serving::MetricsEndpointOptions metrics{.bind_address = "0"};
  // The per-VF counters and pod devices of upstream's metrics exporter on /metrics
  // (agent/vf_exporter.h).
  bool vf_metrics = true;
};

// The process's exit code.
int runAgent(AgentProcessOptions options, ShutdownSignals& signals);

}  // namespace sriovdra::process
