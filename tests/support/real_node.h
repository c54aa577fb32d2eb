#pragma once
// A real worker node on this machine for the `node` tests: containerd (CRI, NRI and CDI on) with
// Debian's runc and CNI plugins, and the kubelet of the pinned Kubernetes release, joined to a
// ControlPlane started with `kubelets = true` as system:node:<name>.
//
// The node is this machine's host name (it resolves to 127.0.0.1, where the kubelet serves, so
// `kubectl logs` and `exec` work). Its state lives under fixed paths (kRoot, kRunRoot: the
// manifests' test overlay names them), so one RealNode runs per machine at a time; ctest keeps the
// `node` tests apart with a resource lock. What a kubelet changes on a host is undone when the
// RealNode goes: the containers and sandboxes it started are killed, their network namespaces,
// mounts, cgroups and the pod bridge removed, the kernel sysctls the kubelet sets restored, and
// the one NAT rule this harness adds (pods reach the API server as the kubernetes Service,
// 10.0.0.1:443, without kube-proxy) deleted. A previous run that crashed is cleaned up the same
// way at start. The kubelet runs without iptables on its PATH, so it adds no chains.
//
// Binaries: kubelet from SRIOV_DRA_KUBERNETES (scripts/build-kubernetes.sh), containerd, ctr and
// the runc shim from SRIOV_DRA_CONTAINERD (scripts/build-containerd.sh), runc and the CNI plugins
// (/usr/lib/cni) from Debian. Needs root.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/process.h"
#include "support/control_plane.h"

namespace sriovdra::testing {

class RealNode {
 public:
  static constexpr const char* kRoot = "/var/lib/sriov-dra-node-test";
  static constexpr const char* kRunRoot = "/run/sriov-dra-node-test";
  // The sandbox ("pause") image containerd is pinned to: scripts/build-images.sh --test-images.
  static constexpr const char* kSandboxImage = "sriov-dra.local/busybox:test";

  // Starts containerd and the kubelet, imports the OCI archives into containerd's k8s.io
  // namespace, and waits until the Node is Ready. Throws std::runtime_error with the logs' tails.
  static std::unique_ptr<RealNode> start(ControlPlane& cp,
                                         const std::vector<std::string>& image_archives);
  ~RealNode();
  RealNode(const RealNode&) = delete;
  RealNode& operator=(const RealNode&) = delete;

  const std::string& name() const { return name_; }
  // The kubelet's directories on the host.
  std::string kubeletDir() const;
  std::string pluginsRegistryDir() const { return kubeletDir() + "/plugins_registry"; }
  // CDI specs containerd reads.
  static std::string cdiDir();
  // `ctr --address <containerd> --namespace k8s.io ARGS`, 60 s at most.
  ProcessOutput ctr(const std::vector<std::string>& args) const;
  // Imports an OCI archive (ctr images import); throws on failure.
  void importImage(const std::string& archive) const;
  // A node daemon killed (SIGKILL, as a crash or the OOM killer does) and started again with its
  // state, as systemd restarts it: the shims and containers keep running. containerd: returns
  // once it serves again. The kubelet: once its /healthz answers (it then syncs the pods, calls
  // the DRA plugins again and re-runs what was in flight, on its own time).
  void restartContainerd();
  void restartKubelet();
  // The node's power cut and back: every node process killed (kubelet, containerd, shims,
  // containers), mounts, pod network namespaces, kubepods cgroups and the pods' bridge gone,
  // what a real node keeps in tmpfs emptied (the runtime's state under kRunRoot, the CDI specs
  // and Multus device-info files), then containerd and the kubelet started again. `while_off`
  // runs in between: the hardware's reboot (the simulated kernel's VFs and boot id).
  void reboot(const std::function<void()>& while_off);
  // SIGKILL to every process of the node's containers whose executable is named `executable` (a
  // container's main process: with PID 1 of its namespace go all the container's processes); how
  // many there were.
  static int killContainerProcesses(const std::string& executable);
  // The processes of the node's containers whose executable is named `executable`.
  static std::vector<pid_t> containerProcesses(const std::string& executable);

  // The last lines of the kubelet's and containerd's logs, for failure messages. The logs are
  // kept in the control plane's directory (SRIOV_DRA_KEEP_TEST_DIRS=1 keeps them).
  std::string logs() const;
  std::string logPath(const std::string& name) const;

 private:
  explicit RealNode(ControlPlane& cp);
  void startContainerd();
  void startKubelet();
  void waitReady();
  // Until the kubelet's /healthz answers; throws with the logs when it does not start.
  void waitHealthy();
  // Kills what runs and removes what the node's processes left (not the NAT rule or the state).
  void powerOff();
  void addServiceNat();
  // Every trace of a node on this host (also of an earlier run that crashed).
  void cleanUp();

  ControlPlane& cp_;
  std::string name_;
  std::string address_;
  std::string containerd_bin_;
  std::vector<std::pair<std::string, std::string>> sysctls_;  // path, value before the kubelet
  ChildProcess containerd_;
  ChildProcess kubelet_;
  int kubelet_healthz_port_ = 0;
};

}  // namespace sriovdra::testing
