// The product on a real node, installed as a user installs it (support/product_on_node.h): our
// images as pods under a real kubelet and containerd, the reference policies, a pod from the
// reference gpu-nic-aligned template. Checked through the API and inside the pod (`kubectl exec`):
// the kubelet called our DRA plugin, containerd applied our CDI edits and called our NRI plugin,
// the pod has its VF; restarts and upgrades of the agent leave it so; the pod's end and the
// product's uninstall leave nothing behind. The same with the Helm chart on the same server with
// its ports in Ethernet (RoCE): install, a pod's VF through our sriov plugin, helm upgrade, the
// pod's end (the VF put back), helm uninstall.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/resource.h"
#include "base/files.h"
#include "base/strings.h"
#include "support/eventually.h"
#include "support/helm.h"
#include "support/product_on_node.h"
#include "support/skip.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::ProductOnNode;
using sriovdra::testing::RealNode;

namespace {

namespace fs = std::filesystem;

const std::string kDriver(api::kDriverName);
// The agent's image in tests/node/overlay: the agent on the simulated kernel.
const std::string kAgentImage = "sriov-dra.local/sriov-dra-agent-simulated";
const std::string kWorkloads = ProductOnNode::kWorkloads;
const std::vector<std::string> kAgentPods = {"pods", "-l",
                                             "app.kubernetes.io/name=sriov-dra-agent"};

std::vector<ProductOnNode::PfVf> vfsOnVlan(int vlan) {
  auto out = ProductOnNode::hostVfs();
  std::erase_if(out, [&](const auto& v) { return v.second.vlan != vlan; });
  return out;
}

std::optional<host::VfInfo> vfOf(const std::vector<ProductOnNode::PfVf>& vfs, const std::string& pf,
                                 int32_t index) {
  for (const auto& [name, vf] : vfs) {
    if (name == pf && vf.vf == index) return vf;
  }
  return std::nullopt;
}

// What a CNI plugin of ours keeps per attachment on the simulated node, as upstream's: its
// cache (<container ID>-<ifname>) and the VF's allocation (pci/<VF's PCI address>). The VFs'
// empty lock files (pci/vf_lock/<address>.lock) stay, as upstream's do.
std::vector<std::string> cniFiles(const std::string& plugin) {
  std::vector<std::string> out;
  std::error_code ec;
  const std::string dir = ProductOnNode::fixtureRoot() + "/var/lib/cni/" + plugin;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    std::string path = fs::relative(e.path(), dir);
    if (e.is_regular_file() && !path.starts_with("pci/vf_lock/")) out.push_back(path);
  }
  return out;
}

// The ResourceClaim the pod's claim "gpu-nic" got (made from the template).
api::ResourceClaim claimOf(ProductOnNode& p, const std::string& pod) {
  std::string name = p.jsonpath(kWorkloads, {"pod/" + pod},
                                "{.status.resourceClaimStatuses[0].resourceClaimName}");
  REQUIRE_FALSE(name.empty());
  auto got = p.cp().client()->get(api::resources::kResourceClaims, kWorkloads, name);
  REQUIRE(got.ok());
  auto rc = api::ResourceClaim::decode(*got);
  REQUIRE(rc.ok());
  REQUIRE(rc->status.allocation);
  return *rc;
}

// The PCI address of the VF allocated in the claim (device 0000-11-00-1 is 0000:11:00.1).
std::string allocatedVf(const api::ResourceClaim& rc) {
  std::string vf_pci;
  for (const auto& r : rc.status.allocation->results) {
    if (r.driver == kDriver) vf_pci = r.device;
  }
  REQUIRE(vf_pci.size() == 12);
  vf_pci[4] = vf_pci[7] = ':';
  vf_pci[10] = '.';
  return vf_pci;
}

}  // namespace

TEST_CASE("installed with kubectl, the product runs as pods and a pod gets an aligned VF",
          "[node]") {
  if (!sriovdra::testing::rootOr("the real node")) return;
  auto product = ProductOnNode::install();
  auto& p = *product;
  CHECK(fs::exists(p.node().pluginsRegistryDir() + "/" + kDriver + "-reg.sock"));

  p.cp().applyYaml(p.podYaml("inference-0", true));
  p.kubectl(
      {"wait", "-n", kWorkloads, "--for=condition=Ready", "pod/inference-0", "--timeout=120s"});

  // The VF the scheduler allocated next to the GPU, as the claim says.
  auto rc = claimOf(p, "inference-0");
  std::string claim = rc.metadata.name;
  std::string vf_pci = allocatedVf(rc);
  std::string netdev;
  for (const auto& e : fs::directory_iterator(ProductOnNode::fixtureRoot() +
                                              "/sys/bus/pci/devices/" + vf_pci + "/net")) {
    netdev = e.path().filename();
  }
  INFO("VF " << vf_pci << " (" << netdev << ") in ResourceClaim " << claim);
  auto net1 = [&] { return p.exec("inference-0", {"ip", "addr", "show", "dev", "net1"}); };

  // The agent's init container installed our CNI plugins into the node's CNI bin directory.
  for (const char* plugin : {"sriov", "ib-sriov"}) {
    auto installed = fs::status(std::string(RealNode::kRoot) + "/cni-bin/" + plugin);
    CHECK((installed.permissions() & fs::perms::owner_exec) != fs::perms::none);
  }
  // Inside the pod: the VF's interface with the network's IPv4 and IPv6 addresses (our NRI
  // plugin ran our ib-sriov plugin in RunPodSandbox, which ran host-local) and the CDI
  // environment of our prepare (containerd applied the CDI edits).
  CHECK_THAT(net1(), Catch::Contains(ProductOnNode::kNadAddress) &&
                         Catch::Contains(ProductOnNode::kNadAddress6));
  CHECK_FALSE(ProductOnNode::onHost(netdev));
  CHECK_THAT(p.exec("inference-0", {"/bin/busybox", "env"}),
             Catch::Contains("SRIOVNETWORK_PCI_ADDRESSES=" + vf_pci));
  CHECK(p.jsonpath(kWorkloads, {"resourceclaim/" + claim},
                   "{.status.devices[?(@.driver==\"" + kDriver + "\")].networkData.ips[*]}") ==
        std::string(ProductOnNode::kNadAddress) + " " + ProductOnNode::kNadAddress6);
  // KEP-5304 (--enable-device-metadata): the claim's "vf" request described where the pod
  // looks for it, under the pod's own name for the claim (made from a template).
  auto metadata = p.exec("inference-0", {"/bin/busybox", "cat",
                                         "/var/run/kubernetes.io/dra-device-attributes/"
                                         "resourceclaimtemplates/gpu-nic/vf/" +
                                             kDriver + "-metadata.json"});
  CHECK_THAT(
      metadata,
      Catch::Contains("\"apiVersion\":\"metadata.resource.k8s.io/v1beta1\"") &&
          Catch::Contains("\"apiVersion\":\"metadata.resource.k8s.io/v1alpha1\"") &&
          Catch::Contains("\"podClaimName\":\"gpu-nic\"") &&
          Catch::Contains("\"resource.kubernetes.io/pciBusID\":{\"string\":\"" + vf_pci + "\"}") &&
          // Attached before the container started: its interface is in the file.
          Catch::Contains("\"networkData\":{\"interfaceName\":\"net1\",\"ips\":[\"" +
                          std::string(ProductOnNode::kNadAddress) + "\",\"" +
                          ProductOnNode::kNadAddress6 + "\"]"));

  // A pod written for the SR-IOV network operator, unchanged: a resource limit, which
  // kube-scheduler turns into a claim of its own (the per-resource DeviceClass's
  // extendedResourceName), and the network in Multus's annotation, which our agent reads as
  // Multus does: the VF through our ib-sriov plugin as net1, with the network's addresses.
  p.cp().applyYaml(p.sriovOperatorPodYaml("legacy-0"));
  p.kubectl({"wait", "-n", kWorkloads, "--for=condition=Ready", "pod/legacy-0", "--timeout=120s"});
  std::string legacy_claim = p.jsonpath(kWorkloads, {"pod/legacy-0"},
                                        "{.status.extendedResourceClaimStatus.resourceClaimName}");
  REQUIRE_FALSE(legacy_claim.empty());
  CHECK(p.jsonpath(kWorkloads, {"resourceclaim/" + legacy_claim},
                   "{.metadata.annotations.resource\\.kubernetes\\.io/"
                   "extended-resource-claim}") == "true");
  auto legacy_net1 = p.exec("legacy-0", {"ip", "addr", "show", "dev", "net1"});
  CHECK_THAT(legacy_net1, Catch::Contains("10.56.217.") && Catch::Contains("fd00:10:56::"));
  CHECK_THAT(legacy_net1, !Catch::Contains(ProductOnNode::kNadAddress));
  // The device plugin's variables, which DPDK entrypoints of such pods read.
  auto legacy_env = p.exec("legacy-0", {"/bin/busybox", "env"});
  CHECK_THAT(legacy_env, Catch::Contains("SRIOVNETWORK_PCI_ADDRESSES=0000:") &&
                             Catch::Contains("PCIDEVICE_OPENSHIFT_IO_CX6_VFS=0000:") &&
                             Catch::Contains("PCIDEVICE_OPENSHIFT_IO_CX6_VFS_INFO={\"0000:"));
  CHECK(p.jsonpath(kWorkloads, {"resourceclaim/" + legacy_claim},
                   "{.status.devices[0].networkData.interfaceName}") == "net1");
  // Multus's network-status annotation, as tools and the pod's downward API read it.
  CHECK_THAT(p.jsonpath(kWorkloads, {"pod/legacy-0"},
                        "{.metadata.annotations.k8s\\.v1\\.cni\\.cncf\\.io/network-status}"),
             Catch::Contains("\"interface\":\"net1\"") &&
                 Catch::Contains("\"ips\":[\"10.56.217.") &&
                 Catch::Contains("\"device-info\":{\"type\":\"pci\""));
  p.kubectl({"delete", "pod", "-n", kWorkloads, "legacy-0", "--wait=true", "--timeout=120s"});

  // The agent pod deleted while the workload runs: the DaemonSet starts another, which finds the
  // pod attached and attaches nothing again; then an image upgrade rolls the DaemonSet.
  std::string first_agent = p.jsonpath("sriov-dra", kAgentPods, "{.items[0].metadata.name}");
  p.kubectl({"delete", "-n", "sriov-dra", "pod", first_agent, "--wait=true"});
  p.kubectl(
      {"-n", "sriov-dra", "rollout", "status", "daemonset/sriov-dra-agent", "--timeout=180s"});
  CHECK_THAT(net1(), Catch::Contains(ProductOnNode::kNadAddress));
  auto agentLogs = [&] {
    return p.cp().kubectl({"logs", "-n", "sriov-dra", "daemonset/sriov-dra-agent"}).out;
  };
  eventually([&] { return agentLogs().find("are attached as recorded") != std::string::npos; }, 60s,
             agentLogs);
  CHECK(agentLogs().find("attached VF") == std::string::npos);

  auto tagged =
      p.node().ctr({"images", "tag", kAgentImage + ":test", kAgentImage + ":test-upgrade"});
  REQUIRE(tagged.exit_code == 0);
  p.kubectl({"set", "image", "-n", "sriov-dra", "daemonset/sriov-dra-agent",
             "agent=" + kAgentImage + ":test-upgrade"});
  p.kubectl(
      {"-n", "sriov-dra", "rollout", "status", "daemonset/sriov-dra-agent", "--timeout=180s"});
  CHECK(p.jsonpath("sriov-dra", kAgentPods, "{.items[0].spec.containers[0].image}") ==
        kAgentImage + ":test-upgrade");
  CHECK_THAT(net1(), Catch::Contains(ProductOnNode::kNadAddress));

  // A change that recreates the node's VFs while the pod holds one, with drains on (a
  // SriovOperatorConfig as upstream's default): the operator cordons the node and evicts the pod
  // through the Eviction API; the kubelet stops it (StopPodSandbox gives the VF back, unprepare
  // removes its CDI specs); the agent recreates the VFs; the node is uncordoned.
  p.cp().applyYaml(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovOperatorConfig\n"
      "metadata: {name: default, namespace: sriov-dra}\nspec: {disableDrain: false}\n");
  p.kubectl({"patch", "-n", "sriov-dra", "sriovnetworknodepolicy", "cx6-vfs", "--type=merge", "-p",
             R"({"spec":{"numVfs":2}})"});
  p.kubectl({"wait", "-n", kWorkloads, "--for=delete", "pod/inference-0", "--timeout=180s"});
  auto drainEvents = [&] {
    return p.jsonpath("sriov-dra",
                      {"events", "--field-selector=involvedObject.name=" + p.node().name()},
                      "{range .items[*]}{.reason}: {.message}{\"\\n\"}{end}");
  };
  eventually([&] { return drainEvents().find("DrainComplete") != std::string::npos; }, 120s,
             drainEvents);
  CHECK_THAT(drainEvents(), Catch::Contains("Draining: cordoning the node") &&
                                Catch::Contains("DrainComplete: the node is reconfigured and "
                                                "uncordoned"));
  CHECK(p.jsonpath("", {"node", p.node().name()}, "{.spec.unschedulable}").empty());
  std::string numvfs;
  eventually(
      [&] {
        numvfs = readFile(ProductOnNode::fixtureRoot() +
                          "/sys/bus/pci/devices/0000:0e:00.0/sriov_numvfs")
                     .valueOr("");
        return numvfs.starts_with("2");
      },
      60s, [&] { return "sriov_numvfs of ibp14s0: " + numvfs; });
  eventually([&] { return ProductOnNode::onHost(netdev); }, 60s,
             [&] { return "the VF's netdev " + netdev + " is not back on the host"; });
  eventually(
      [&] {
        for (const auto& e : fs::directory_iterator(RealNode::cdiDir())) {
          if (e.path().filename().string().find(rc.metadata.uid) != std::string::npos) {
            return false;
          }
        }
        return true;
      },
      60s, [&] { return "CDI specs of claim " + rc.metadata.uid + " are still there"; });

  // Every pod's DEL ran before its namespace went (no VF went with a namespace).
  CHECK(p.netnsRefunds() == 0);
  // Uninstall removes everything the install created.
  p.uninstall();
  CHECK(p.cp().kubectl({"get", "namespace", "sriov-dra"}).exit_code != 0);
  CHECK(p.cp()
            .kubectl({"get", "crd", "sriovnetworknodepolicies.sriovnetwork.openshift.io"})
            .exit_code != 0);
  CHECK(p.cp().kubectl({"get", "clusterrole", "sriov-dra-agent"}).exit_code != 0);
}

TEST_CASE(
    "installed with helm on a RoCE server, a pod gets an aligned VF through our sriov plugin and "
    "keeps it through an upgrade",
    "[node][helm]") {
  if (!sriovdra::testing::rootOr("the real node")) return;
  if (sriovdra::testing::helmBinary().empty()) {
    sriovdra::testing::skip("SRIOV_DRA_HELM is not set: run scripts/build-helm.sh and set it");
    return;
  }
  auto product =
      ProductOnNode::install({}, ProductOnNode::Installer::kHelm, ProductOnNode::Fabric::kRoCE);
  auto& p = *product;
  CHECK(p.helm({"status", "sriov-dra", "-n", "sriov-dra"}).find("STATUS: deployed") !=
        std::string::npos);
  // The values reached the agent: the kubelet found its plugin at the node's own directories.
  CHECK(fs::exists(p.node().pluginsRegistryDir() + "/" + kDriver + "-reg.sock"));
  CHECK(p.jsonpath("sriov-dra", kAgentPods, "{.items[0].spec.containers[0].image}")
            .starts_with(kAgentImage + ":test"));

  // The VFs as the agent left them, to compare with after the pod's end.
  const auto vfs_before = ProductOnNode::hostVfs();
  p.cp().applyYaml(p.podYaml("inference-0", true));
  p.kubectl(
      {"wait", "-n", kWorkloads, "--for=condition=Ready", "pod/inference-0", "--timeout=120s"});
  std::string devices = p.jsonpath(kWorkloads, {"resourceclaims"},
                                   "{.items[0].status.allocation.devices.results[*].driver}");
  CHECK_THAT(devices, Catch::Contains(kDriver));
  // The operator rendered the SriovNetwork as a sriov NAD; our NRI plugin ran our sriov plugin
  // in RunPodSandbox, which set the VF's VLAN, trust and spoof checking through the PF, moved its
  // netdev into the pod as net1 and ran host-local for both address families.
  CHECK_THAT(p.jsonpath(kWorkloads, {"network-attachment-definitions", "cx6-vf"}, "{.spec.config}"),
             Catch::Contains("\"type\": \"sriov\"") && Catch::Contains("\"vlan\": 100"));
  CHECK_THAT(
      p.exec("inference-0", {"ip", "addr", "show", "dev", "net1"}),
      Catch::Contains(ProductOnNode::kNadAddress) && Catch::Contains(ProductOnNode::kNadAddress6));
  auto attached = vfsOnVlan(ProductOnNode::kVlan);
  REQUIRE(attached.size() == 1);
  const std::string pf = attached[0].first;
  const host::VfInfo vf = attached[0].second;
  INFO("VF " << vf.vf << " of " << pf);
  CHECK(vf.trust);
  CHECK(vf.spoofchk);
  CHECK_FALSE(ProductOnNode::onHost(pf + "v0"));
  const std::string vf_pci = allocatedVf(claimOf(p, "inference-0"));
  auto files = cniFiles("sriov");
  CHECK(files.size() == 2);
  CHECK(std::find(files.begin(), files.end(), "pci/" + vf_pci) != files.end());

  // helm upgrade with a changed value rolls the agent; the pod keeps its VF.
  std::string before = p.jsonpath("sriov-dra", kAgentPods, "{.items[0].metadata.name}");
  p.helm({"upgrade", "sriov-dra", testing::sourceDir() + "/deployment/sriov-dra-operator", "-n",
          "sriov-dra", "--reuse-values", "--set", "agent.resources.limits.memory=300Mi"});
  p.kubectl(
      {"-n", "sriov-dra", "rollout", "status", "daemonset/sriov-dra-agent", "--timeout=180s"});
  CHECK(p.jsonpath("sriov-dra", kAgentPods,
                   "{.items[0].spec.containers[0].resources.limits.memory}") == "300Mi");
  CHECK(p.jsonpath("sriov-dra", kAgentPods, "{.items[0].metadata.name}") != before);
  CHECK_THAT(p.exec("inference-0", {"ip", "addr", "show", "dev", "net1"}),
             Catch::Contains(ProductOnNode::kNadAddress));

  // The pod's end: CNI DEL through our plugin puts the VF back as it was before the pod (every
  // setting its PF reports) and its netdev in the host's namespace under its own name.
  p.kubectl({"delete", "pod", "-n", kWorkloads, "inference-0", "--wait=true", "--timeout=120s"});
  // Its cache file and the VF's allocation are the last things DEL removes.
  eventually([&] { return cniFiles("sriov").empty(); }, 60s,
             [&] { return "the sriov plugin still keeps " + join(cniFiles("sriov"), " "); });
  CHECK(ProductOnNode::onHost(pf + "v0"));
  CHECK(vfOf(vfs_before, pf, vf.vf) == vfOf(ProductOnNode::hostVfs(), pf, vf.vf));

  CHECK(p.netnsRefunds() == 0);
  // helm uninstall removes what the chart installed; the CRDs stay (crds.keep, the default),
  // and with them the policies.
  p.uninstall();
  CHECK(p.cp().kubectl({"get", "namespace", "sriov-dra"}).exit_code != 0);
  CHECK(p.cp().kubectl({"get", "clusterrole", "sriov-dra-agent"}).exit_code != 0);
  CHECK(p.cp()
            .kubectl({"get", "crd", "sriovnetworknodepolicies.sriovnetwork.openshift.io"})
            .exit_code == 0);
}
