#pragma once
// The product installed the way a user installs it, on a real node of this machine, for the
// `node` tests and the pod start benchmark: a control plane with controller-manager and
// scheduler, a RealNode (kubelet + containerd) with our images, `kubectl apply -k
// tests/node/overlay` (config/default, what manifests/install.yaml holds, with the agent's fixture
// mounts) or `helm install` of the chart with tests/node/helm-values.yaml (the same changes as
// values), the reference policies, and a workload namespace with the reference
// `gpu-nic-aligned` ResourceClaimTemplate and the network `cx6-vf` it names (a SriovIBNetwork
// the operator renders into that namespace as an ib-sriov NAD with host-local IPv4 and IPv6; on
// a RoCE server a SriovNetwork, rendered as a sriov NAD with a VLAN and the same addresses).
//
// Only the hardware is simulated: the agent's sysfs is a simulated A100 server's, an interface in
// the host's network namespace stands in for each VF's netdev (ifb for IPoIB, veth for
// Ethernet, which takes a MAC), character devices
// (/dev/null's numbers) for the VFs' RDMA device nodes, and the GPUs' ResourceSlices and kubelet
// plugin for the NVIDIA driver's. The CNI plugins are ours, installed by the agent's init
// container, with the simulated kernel for the PF's side (tools/cni_simulated.cpp).
// Every failure throws std::runtime_error with what kubectl said, the pods, the Events, our
// components' logs and the node's.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/netlink.h"
#include "support/control_plane.h"
#include "support/gpu_kubelet_plugin.h"
#include "support/real_node.h"

namespace sriovdra::testing {

class ProductOnNode {
 public:
  static constexpr const char* kWorkloads = "llm";  // the workload namespace
  // What host-local gives the first pod attached to the network cx6-vf.
  static constexpr const char* kNadAddress = "10.56.217.10/24";
  static constexpr const char* kNadAddress6 = "fd00:10:56::10/64";

  enum class Installer {
    kKubectl,  // kubectl apply -k tests/node/overlay
    kHelm,     // helm install with tests/node/helm-values.yaml (needs SRIOV_DRA_HELM)
  };

  // What the server's ConnectX-6 ports run, and so which of our CNI plugins attaches the VF.
  enum class Fabric {
    kInfiniBand,  // a100-reference: the reference policies, a SriovIBNetwork (ib-sriov)
    kRoCE,        // a100-roce: the same policies for Ethernet ports, a SriovNetwork (sriov) on
                  // VLAN kVlan with trust and spoof checking on
  };
  static constexpr int kVlan = 100;

  // Needs root, SRIOV_DRA_IMAGES (scripts/build-images.sh --test-images) and
  // SRIOV_DRA_CONTAINERD; waits until the operator and the agent are Ready and the node's VFs
  // are published. progress, when given, hears each step as it starts (the demo prints them).
  static std::unique_ptr<ProductOnNode> install(
      const std::function<void(const std::string&)>& progress = {},
      Installer installer = Installer::kKubectl, Fabric fabric = Fabric::kInfiniBand);
  ~ProductOnNode();
  // Removes the product as it was installed (kubectl delete -k, or helm uninstall and the
  // namespace), waiting until its objects are gone; the workload namespace goes first.
  void uninstall();

  ControlPlane& cp() { return *cp_; }
  RealNode& node() { return *node_; }
  // The fixture root of the agent's sysfs (sys/ below it).
  static std::string fixtureRoot();

  // Runs helm against the control plane (kHelm); throws with diagnostics() when it fails.
  std::string helm(const std::vector<std::string>& args) const;
  // Runs kubectl (200 s at most); throws with diagnostics() when it fails.
  std::string kubectl(const std::vector<std::string>& args) const;
  // `kubectl get -n NS WHAT... -o jsonpath=PATH`, "" when it fails.
  std::string jsonpath(const std::string& ns, std::vector<std::string> what,
                       const std::string& path) const;
  // `kubectl exec` in a workload pod: its output, or "exit N: <stderr>".
  std::string exec(const std::string& pod, const std::vector<std::string>& command) const;
  std::string diagnostics() const;

  // Whether a pod requires the agent's NRI plugin: containerd then creates its containers only
  // while the plugin is connected (the node's containerd validates NRI's required-plugins
  // annotation, docs/attach.md).
  enum class Plugin { kOptional, kRequired };
  // The agent's NRI plugin name (its --nri-plugin-name default).
  static constexpr const char* kNriPlugin = "sriov-dra";
  // A busybox pod in the workload namespace; with_vf: its claim "gpu-nic" from the template.
  std::string podYaml(const std::string& name, bool with_vf,
                      Plugin plugin = Plugin::kOptional) const;
  // A busybox pod as written for the SR-IOV network operator: resources.limits
  // openshift.io/cx6_vfs: 1 and the annotation k8s.v1.cni.cncf.io/networks: cx6-vf.
  std::string sriovOperatorPodYaml(const std::string& name) const;
  // Whether the VF netdev (its stand-in) is in the host's network namespace.
  static bool onHost(const std::string& netdev);
  // How often a stand-in went with a pod's network namespace and was put back on the host under
  // its VF's name (Linux gives a physical VF back under the name it had in the pod, which our
  // plugins' DEL, when it runs before, avoids; the harness cannot model the rename): a pod whose
  // DEL ran keeps this at 0, so tests assert it where no namespace may go first.
  int netnsRefunds() const;
  // The simulated server's VFs as their PFs report them (rtnetlink through the simulated kernel,
  // what `ip link show <pf>` prints on a real one): PF netdev and VF.
  using PfVf = std::pair<std::string, host::VfInfo>;
  static std::vector<PfVf> hostVfs();

  // The fault points of the agent and our CNI plugins on this node (base/fault_point.h,
  // host/simulated_faults.h): armed, waited for (throws with diagnostics() when no process
  // stopped there in time), released.
  void armFault(const std::string& point) const;
  void waitAtFault(const std::string& point,
                   std::chrono::seconds timeout = std::chrono::seconds(120)) const;
  void releaseFault(const std::string& point) const;

  // What the node holds that the pods of the cluster do not explain, each problem on a line; ""
  // when none. For the workload pods that run (phase Running), each VF of their claims is
  // attached once (one CNI cache and host-local lease per interface, both naming its sandbox, the
  // netdev out of the host's namespace) and no other is; every VF of `free_vfs` (the settings
  // before any pod) is there and advertised, and when free, on the host under its name with those
  // settings; CDI specs, checkpoint entries and attach records belong to claims and pods that
  // run; the node has one network namespace per running pod off the host network; no claim is
  // reserved for a pod that is gone.
  std::string leaks(const std::vector<PfVf>& free_vfs) const;

 private:
  ProductOnNode() = default;
  class StandIns;

  Installer installer_ = Installer::kKubectl;
  std::string helm_home_;  // helm's caches and configuration (kHelm)
  std::unique_ptr<ControlPlane> cp_;
  std::unique_ptr<RealNode> node_;
  std::unique_ptr<StandIns> standins_;
  std::unique_ptr<GpuKubeletPlugin> gpu_plugin_;
};

}  // namespace sriovdra::testing
