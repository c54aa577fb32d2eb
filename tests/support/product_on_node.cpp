#include "support/product_on_node.h"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "api/names.h"
#include "api/node_state.h"
#include "base/process.h"
#include "base/strings.h"
#include "host/fixtures.h"
#include "support/dra_objects.h"
#include "support/helm.h"
#include "support/poll.h"

namespace sriovdra::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kDriver(api::kDriverName);

std::vector<std::string> imageArchives() {
  const char* dir = std::getenv("SRIOV_DRA_IMAGES");
  std::string d = dir != nullptr ? dir : "";
  std::vector<std::string> out;
  for (const char* name :
       {"busybox", "sriov-dra-operator", "sriov-dra-agent-simulated", "sriov-dra"}) {
    std::string path = d + "/" + name + ".tar";
    if (d.empty() || !fs::exists(path)) {
      throw std::runtime_error("no image archive " + path +
                               " (SRIOV_DRA_IMAGES: run scripts/build-images.sh --test-images "
                               "and point it at the output; scripts/test.sh does)");
    }
    out.push_back(path);
  }
  return out;
}

ProcessOutput ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"ip"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto out = runProcess({.argv = argv}, 10s);
  if (!out.ok()) throw std::runtime_error("ip: " + out.status().toString());
  return *out;
}

// The simulated server's ConnectX-6 ports (lib/host/fixtures.h), as the policies select them.
std::vector<std::string> ports(ProductOnNode::Fabric fabric) {
  std::vector<std::string> out;
  for (const char* ib : {"ibp14s0", "ibp17s0", "ibp82s0", "ibp83s0", "ibp139s0", "ibp142s0",
                         "ibp199s0", "ibp202s0"}) {
    out.push_back(fabric == ProductOnNode::Fabric::kInfiniBand
                      ? std::string(ib)
                      : "enp" + std::string(ib).substr(3) + "np0");
  }
  return out;
}

// What both networks give the pods: host-local IPv4 and IPv6 (ProductOnNode::kNadAddress, 6).
const char* const kIpam =
    "'{\"type\":\"host-local\",\"ranges\":[[{\"subnet\":\"10.56.217.0/24\","
    "\"rangeStart\":\"10.56.217.10\",\"rangeEnd\":\"10.56.217.100\"}],"
    "[{\"subnet\":\"fd00:10:56::/64\",\"rangeStart\":\"fd00:10:56::10\","
    "\"rangeEnd\":\"fd00:10:56::100\"}]]}'";

// The reference policies (config/samples) as a RoCE server needs them: the same resource and
// pool, its Ethernet ports, linkType eth.
std::string rocePolicies() {
  auto pf_list = [](const std::string& indent) {
    std::string out;
    for (const auto& pf : ports(ProductOnNode::Fabric::kRoCE)) {
      out.append(indent).append("- ").append(pf).append("\n");
    }
    return out;
  };
  return "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodePolicy\n"
         "metadata: {name: cx6-vfs, namespace: sriov-dra}\n"
         "spec:\n  resourceName: cx6_vfs\n  priority: 10\n  numVfs: 1\n"
         "  deviceType: netdevice\n  linkType: eth\n  isRdma: true\n"
         "  nodeSelector: {dra-sriov-cx6: \"true\"}\n"
         "  nicSelector:\n    vendor: \"15b3\"\n    deviceID: \"101b\"\n    pfNames:\n" +
         pf_list("    ") +
         "---\napiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\n"
         "kind: SriovResourcePolicy\nmetadata: {name: cx6-advertise-vfs, namespace: sriov-dra}\n"
         "spec:\n  nodeSelector:\n    nodeSelectorTerms:\n    - matchExpressions:\n"
         "      - {key: dra-sriov-cx6, operator: In, values: [\"true\"]}\n"
         "  configs:\n  - deviceAttributesSelector: {matchLabels: {pool: cx6-vfs}}\n"
         "    resourceFilters:\n    - vendors: [\"15b3\"]\n      linkType: eth\n"
         "      pfNames:\n" +
         pf_list("      ");
}

// Polls until cond() or the deadline; then throws with describe().
void waitFor(const std::function<bool()>& cond, std::chrono::seconds timeout,
             const std::function<std::string()>& describe) {
  if (!pollUntil(cond, timeout, 100ms)) throw std::runtime_error(describe());
}

}  // namespace

// The hardware's stand-ins on the host: an interface per VF netdev of the simulated server
// (our sriov and ib-sriov plugins move, rename and address it),
// and character devices for the RDMA device nodes of its VFs (/dev/infiniband/uverbsN, umadN,
// issmN, rdma_cm), which our CDI specs name and containerd creates in the container from the
// host's node.
// A pod's network namespace that goes while a VF's netdev is in it gives the netdev back to the
// host (Linux moves physical devices to the initial namespace); a virtual stand-in is destroyed
// with it instead. A watcher (every 250 ms) puts such a stand-in back on the host under the VF's
// own name, as the VF would be once our plugins' DEL reset it. Each stand-in carries the alias
// sriov-dra-vf:<name>, which it keeps in a pod under any name. The watcher also adds the device
// nodes of RDMA devices the simulated kernel made since (VFs created again), as udev would.
class ProductOnNode::StandIns {
 public:
  int refunds() const { return refunds_.load(); }
  StandIns(Fabric fabric, std::string sysfs_root)
      : fabric_(fabric), sysfs_root_(std::move(sysfs_root)) {
    for (const auto& pf : ports(fabric)) {
      std::string name = pf + "v0";
      ip({"link", "del", name});  // a crashed run's
      add(name, netdevs_.size());
      netdevs_.push_back(name);
    }
    watcher_ = std::jthread([this](const std::stop_token& stop) {
      repeatUntilStopped(stop, 250ms, "stand-ins", [this] {
        refund();
        addRdmaNodes();
      });
    });
  }
  // Once the agent made the VFs (the simulated kernel names their RDMA devices then); again for
  // VFs made since.
  void addRdmaNodes() {
    std::lock_guard lock(nodes_mu_);
    made_dir_ = fs::create_directories("/dev/infiniband") || made_dir_;
    addNode("rdma_cm");
    for (const char* cls : {"infiniband_verbs", "infiniband_mad"}) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(sysfs_root_ + "/sys/class/" + cls, ec)) {
        addNode(e.path().filename());
      }
    }
  }
  ~StandIns() {
    watcher_ = {};
    for (const auto& n : netdevs_) (void)runProcess({.argv = {"ip", "link", "del", n}}, 10s);
    for (const auto& path : nodes_) ::unlink(path.c_str());
    if (made_dir_) ::rmdir("/dev/infiniband");
  }

 private:
  void addNode(const std::string& name) {
    std::string path = "/dev/infiniband/" + name;
    if (::mknod(path.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0) nodes_.push_back(path);
  }
  // IPoIB takes no MAC, nor does ifb; an Ethernet VF's netdev takes one, as one end of a veth
  // pair does (its peer stays on the host; this kernel has no dummy links).
  void add(const std::string& name, size_t index) const {
    std::vector<std::string> type = {"ifb"};
    if (fabric_ == Fabric::kRoCE) {
      type = {"veth", "peer", "name", "sdra-peer" + std::to_string(index)};
    }
    std::vector<std::string> add = {"link", "add", name, "type"};
    add.insert(add.end(), type.begin(), type.end());
    auto added = ip(add);
    if (added.exit_code != 0) throw std::runtime_error("ip link add " + name + ": " + added.err);
    ip({"link", "set", name, "alias", "sriov-dra-vf:" + name});
  }

  // The stand-ins neither on the host nor in a pod's namespace come back to the host.
  void refund() {
    std::vector<size_t> away;
    for (size_t i = 0; i < netdevs_.size(); ++i) {
      if (!onHost(netdevs_[i])) away.push_back(i);
    }
    if (away.empty()) return;
    std::string in_pods;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/run/netns", ec)) {
      in_pods += ip({"-n", e.path().filename(), "-o", "link", "show"}).out;
    }
    for (size_t i : away) {
      const std::string& name = netdevs_[i];
      if (in_pods.find("alias sriov-dra-vf:" + name + "\n") != std::string::npos ||
          in_pods.find("alias sriov-dra-vf:" + name + " ") != std::string::npos) {
        continue;
      }
      // Moved back by a DEL meanwhile: then the name is taken and nothing is added.
      if (onHost(name)) continue;
      try {
        add(name, i);
        ++refunds_;
        std::fprintf(stderr, "stand-in %s went with its pod's namespace: back on the host\n",
                     name.c_str());
      } catch (const std::exception& e) {
        // Back on the host meanwhile (a DEL): nothing to do.
        std::fprintf(stderr, "stand-in %s not put back: %s\n", name.c_str(), e.what());
      }
    }
  }

  std::atomic<int> refunds_{0};
  Fabric fabric_;
  std::string sysfs_root_;
  std::vector<std::string> netdevs_;
  std::mutex nodes_mu_;
  std::vector<std::string> nodes_;  // guarded by nodes_mu_
  bool made_dir_ = false;           // ditto
  std::jthread watcher_;
};

std::string ProductOnNode::fixtureRoot() { return std::string(RealNode::kRoot) + "/fixture"; }

std::unique_ptr<ProductOnNode> ProductOnNode::install(
    const std::function<void(const std::string&)>& progress, Installer installer, Fabric fabric) {
  if (::geteuid() != 0) throw std::runtime_error("a real node needs root");
  auto step = [&](const std::string& what) {
    if (progress) progress(what);
  };
  std::unique_ptr<ProductOnNode> p(new ProductOnNode());
  p->installer_ = installer;
  if (installer == Installer::kHelm && helmBinary().empty()) {
    throw std::runtime_error("SRIOV_DRA_HELM is not set: run scripts/build-helm.sh and set it");
  }
  step("control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler");
  p->cp_ = ControlPlane::start({.install_product_crds = false,
                                .controller_manager = true,
                                .scheduler = true,
                                .kubelets = true});
  step("node: containerd and the kubelet join as system:node; our images imported");
  p->node_ = RealNode::start(*p->cp_, imageArchives());
  const bool infiniband = fabric == Fabric::kInfiniBand;
  Status written = host::writeFixture(infiniband ? "a100-reference" : "a100-roce", fixtureRoot());
  if (!written.isOk()) throw std::runtime_error(written.toString());
  p->standins_ = std::make_unique<StandIns>(fabric, fixtureRoot());
  const std::string source = sourceDir();
  p->kubectl({"label", "node", p->node_->name(), "dra-sriov-cx6=true"});

  // The user's first step, then the reference policies. The agent is Ready once the kubelet
  // registered its DRA plugin (its /readyz says so).
  if (installer == Installer::kKubectl) {
    step("kubectl apply -k tests/node/overlay (manifests/install.yaml with the fixture mounts)");
    p->kubectl({"apply", "-k", source + "/tests/node/overlay"});
  } else {
    step("helm install deployment/sriov-dra-operator -f tests/node/helm-values.yaml");
    p->helm_home_ = std::string(RealNode::kRoot) + "/helm";
    p->helm({"install", "sriov-dra", source + "/deployment/sriov-dra-operator", "-n", "sriov-dra",
             "--create-namespace", "-f", source + "/tests/node/helm-values.yaml"});
  }
  p->kubectl(
      {"-n", "sriov-dra", "rollout", "status", "deployment/sriov-dra-operator", "--timeout=180s"});
  p->kubectl(
      {"-n", "sriov-dra", "rollout", "status", "daemonset/sriov-dra-agent", "--timeout=180s"});
  step(infiniband ? "the reference policies (config/samples); the agent makes and publishes the VFs"
                  : "the reference policies for Ethernet ports; the agent makes and publishes "
                    "the VFs");
  p->kubectl({"apply", "-n", "sriov-dra", "-f",
              source + "/config/samples/deviceattributes-cx6-vfs-attrs.yaml"});
  if (infiniband) {
    for (const char* sample :
         {"sriovnetworknodepolicy-cx6-vfs.yaml", "sriovresourcepolicy-cx6-advertise-vfs.yaml"}) {
      p->kubectl({"apply", "-n", "sriov-dra", "-f", source + "/config/samples/" + sample});
    }
  } else {
    p->cp_->applyYaml(rocePolicies());
  }
  auto slices = [&] {
    return p->jsonpath(
        "", {"resourceslices"},
        "{range .items[?(@.spec.driver==\"" + kDriver + "\")]}{.spec.devices[*].name}{\" \"}{end}");
  };
  waitFor([&] { return slices().find("0000-ca-00-1") != std::string::npos; }, 120s,
          [&] { return "the node's VFs were not published: " + slices() + p->diagnostics(); });
  p->standins_->addRdmaNodes();

  step("GPUs: slices and a kubelet plugin as the NVIDIA driver's, from what the agent found");
  // The GPUs, as the NVIDIA driver publishes and prepares them, from what the agent discovered.
  auto admin = p->cp_->client();
  createGpuDeviceClass(*admin);
  std::vector<api::Gpu> gpus;
  waitFor(
      [&] {
        auto got = admin->get(api::resources::kSriovNodeStates, "sriov-dra", p->node_->name());
        if (!got.ok()) return false;
        auto state = api::SriovNodeState::decode(*got);
        if (state.ok()) gpus = state->status.gpus;
        return !gpus.empty();
      },
      60s, [&] { return "no GPUs in the SriovNodeState\n" + p->diagnostics(); });
  publishGpuSlice(*admin, p->node_->name(), gpus);
  p->gpu_plugin_ = std::make_unique<GpuKubeletPlugin>(admin, p->node_->pluginsRegistryDir(),
                                                      p->node_->kubeletDir() + "/plugins");
  p->gpu_plugin_->keepPublished(p->node_->name(), gpus);

  step(std::string("namespace ") + kWorkloads +
       ": the template gpu-nic-aligned; the network cx6-vf, which the operator renders");
  // The workloads' namespace: the reference template, and the reference's InfiniBand network as
  // a SriovIBNetwork (link state enable, as the reference NAD), or on RoCE a SriovNetwork (VLAN,
  // trust on, spoof checking on), with IPv4 and IPv6 from host-local, which the operator renders
  // into the NAD cx6-vf there (Multus's CRD, as a cluster with Multus has it). The pods get their
  // VF through our ib-sriov or sriov plugin.
  p->kubectl({"apply", "-f", source + "/tests/fixtures/crds/network-attachment-definitions.yaml"});
  p->kubectl({"wait", "--for=condition=established", "--timeout=60s",
              "crd/network-attachment-definitions.k8s.cni.cncf.io"});
  p->kubectl({"create", "namespace", kWorkloads});
  p->kubectl({"apply", "-n", kWorkloads, "-f",
              source + "/config/samples/aligned-resourceclaimtemplate.yaml"});
  std::string network =
      infiniband ? "kind: SriovIBNetwork\nmetadata: {name: cx6-vf, namespace: sriov-dra}\n"
                   "spec:\n  linkState: enable\n"
                 : "kind: SriovNetwork\nmetadata: {name: cx6-vf, namespace: sriov-dra}\n"
                   "spec:\n  vlan: " +
                       std::to_string(kVlan) + "\n  trust: \"on\"\n  spoofChk: \"on\"\n";
  p->cp_->applyYaml("apiVersion: sriovnetwork.openshift.io/v1\n" + network +
                    "  resourceName: cx6_vfs\n  networkNamespace: " + std::string(kWorkloads) +
                    "\n  ipam: " + kIpam + "\n");
  waitFor(
      [&] {
        return !p->jsonpath(kWorkloads, {"network-attachment-definitions", "cx6-vf"},
                            "{.spec.config}")
                    .empty();
      },
      60s, [&] { return "the operator rendered no NAD cx6-vf\n" + p->diagnostics(); });
  return p;
}

void ProductOnNode::uninstall() {
  kubectl({"delete", "namespace", kWorkloads, "--wait=true", "--timeout=120s"});
  // The networks first, while the operator runs to remove their NADs and finalizers (install.md,
  // "Uninstall"): a Helm uninstall keeps the CRDs, and a network left with its finalizer would
  // hold the namespace.
  for (const char* networks : {"sriovibnetworks", "sriovnetworks"}) {
    kubectl({"delete", networks, "--all", "-n", "sriov-dra", "--wait=true", "--timeout=60s"});
  }
  if (installer_ == Installer::kKubectl) {
    kubectl({"delete", "-k", sourceDir() + "/tests/node/overlay", "--wait=true", "--timeout=180s"});
    return;
  }
  helm({"uninstall", "sriov-dra", "-n", "sriov-dra", "--wait", "--timeout=180s"});
  kubectl({"delete", "namespace", "sriov-dra", "--wait=true", "--timeout=120s"});
}

std::string ProductOnNode::helm(const std::vector<std::string>& args) const {
  auto out = runHelm(helm_home_, args, cp_->kubeconfig());
  if (!out.ok() || out->exit_code != 0) {
    throw std::runtime_error("helm " + join(args, " ") + ":\n" +
                             (out.ok() ? out->out + out->err : out.status().toString()) + "\n" +
                             diagnostics());
  }
  return out->out;
}

ProductOnNode::~ProductOnNode() {
  gpu_plugin_.reset();
  node_.reset();  // before the stand-ins: the pods hold them
  standins_.reset();
}

std::string ProductOnNode::kubectl(const std::vector<std::string>& args) const {
  auto out = cp_->kubectl(args, "admin", 200s);
  if (out.exit_code != 0) {
    std::string command;
    for (const auto& a : args) command += " " + a;
    throw std::runtime_error("kubectl" + command + ":\n" + out.out + out.err + "\n" +
                             diagnostics());
  }
  return out.out;
}

std::string ProductOnNode::jsonpath(const std::string& ns, std::vector<std::string> what,
                                    const std::string& path) const {
  std::vector<std::string> args = {"get", "-n", ns.empty() ? "default" : ns};
  args.insert(args.end(), what.begin(), what.end());
  args.push_back("-o");
  args.push_back("jsonpath=" + path);
  auto out = cp_->kubectl(args);
  return out.exit_code == 0 ? out.out : "";
}

std::string ProductOnNode::exec(const std::string& pod,
                                const std::vector<std::string>& command) const {
  std::vector<std::string> args = {"exec", "-n", kWorkloads, pod, "--"};
  args.insert(args.end(), command.begin(), command.end());
  auto out = cp_->kubectl(args);
  return out.exit_code == 0 ? out.out : "exit " + std::to_string(out.exit_code) + ": " + out.err;
}

std::string ProductOnNode::diagnostics() const {
  return cp_->kubectl({"get", "pods", "-A", "-o", "wide"}).out +
         cp_->kubectl({"get", "events", "-A", "--sort-by=.lastTimestamp"}).out +
         cp_->kubectl({"logs", "-n", "sriov-dra", "-l", "app.kubernetes.io/part-of=sriov-dra",
                       "--prefix", "--tail=40"})
             .out +
         node_->logs();
}

std::string ProductOnNode::podYaml(const std::string& name, bool with_vf, Plugin plugin) const {
  std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + kWorkloads +
      (plugin == Plugin::kRequired ? ", annotations: {required-plugins.noderesource.dev/pod: '[\"" +
                                         std::string(kNriPlugin) + "\"]'}"
                                   : "") +
      "}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n"
      "  - name: main\n    image: " +
      std::string(RealNode::kSandboxImage) + "\n    command: [/bin/busybox, sleep, inf]\n";
  if (!with_vf) return yaml;
  return yaml +
         "    resources:\n      claims: [{name: gpu-nic}]\n  resourceClaims:\n"
         "  - {name: gpu-nic, resourceClaimTemplateName: gpu-nic-aligned}\n";
}

std::string ProductOnNode::sriovOperatorPodYaml(const std::string& name) const {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + kWorkloads +
         "\n  annotations: {k8s.v1.cni.cncf.io/networks: cx6-vf}\n"
         "spec:\n  terminationGracePeriodSeconds: 1\n  containers:\n"
         "  - name: main\n    image: " +
         std::string(RealNode::kSandboxImage) +
         "\n    command: [/bin/busybox, sleep, inf]\n"
         "    resources:\n      limits: {openshift.io/cx6_vfs: \"1\"}\n";
}

int ProductOnNode::netnsRefunds() const { return standins_->refunds(); }

bool ProductOnNode::onHost(const std::string& netdev) {
  return ip({"link", "show", netdev}).exit_code == 0;
}

}  // namespace sriovdra::testing
