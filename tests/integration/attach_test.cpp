// Standalone mode end to end: the real API server and operator, the agent with its kubelet
// plugin (a gRPC client acting as kubelet prepares the claim), containerd's NRI runtime side
// (tools/nri-runtime) sending the pod events, and Debian's real CNI plugins. The simulated
// A100 server's VF 0000:11:00.1 has the netdev ibp17s0v0; an ifb interface of that name stands in
// for it on this machine, and a network namespace the test creates is the pod's.
#include <csignal>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "api/names.h"
#include "api/resource.h"
#include "base/files.h"
#include "base/json.h"
#include "kube/object_meta.h"
#include "support/dra_objects.h"
#include "support/eventually.h"
#include "support/kubelet_client.h"
#include "support/nri_runtime.h"
#include "support/operator_env.h"
#include "support/pod_network.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::KubeletClaim;
using sriovdra::testing::KubeletClient;
using sriovdra::testing::NriRuntime;
using sriovdra::testing::OperatorEnv;

namespace {

const std::string kDriver(api::kDriverName);
const std::string kVf = "0000:11:00.1";
const std::string kVfNetdev = "ibp17s0v0";  // the simulated kernel's name for it

// The pod's network namespace and the VF's stand-in netdev on this machine.
struct HostNetwork : testing::PodNetwork {
  HostNetwork() : PodNetwork("sdra-attach-" + std::to_string(::getpid()), kVfNetdev) {}
  bool vfOnHost() const { return deviceOnHost(); }
};

struct AttachEnv {
  // agent_args, agent_env: more flags and environment for every start of the agent.
  explicit AttachEnv(std::vector<std::string> agent_args = {},
                     std::vector<std::pair<std::string, std::string>> agent_env = {})
      : env("attach"), agent_args(std::move(agent_args)), agent_env(std::move(agent_env)) {
    // With the manifests' --resource-prefix: VFs carry k8s.cni.cncf.io/resourceName, NADs
    // rendered from networks k8s.v1.cni.cncf.io/resourceName.
    op = env.startOperator({.extra_args = {"--resource-prefix", "openshift.io"}});
    node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
    agent = startAgent();
    env.applyReferencePolicies();
    eventually([&] { return env.deviceCount(node) == 8; }, 90s, [&] { return agent->logs(); });
    auto info = KubeletClient::registerPlugin(testing::KubeletDirs::under(kubelet.path()).registry,
                                              kDriver);
    REQUIRE(info.ok());
    endpoint = info->endpoint;
    INFO(agent->logs());
    REQUIRE(runtime.waitPlugins(1) == "");
  }

  // CNI plugins from <kubelet>/cni (the tests' own) and Debian's. host-device stands in for the
  // SR-IOV CNI (which needs a real VF), so it is allowed here; nothing else of Debian's is.
  std::unique_ptr<testing::OperatorProcess> startAgent() {
    std::vector<std::string> args = {
        "--cni-bin-dir=" + kubelet.path() + "/cni,/usr/lib/cni",
        "--cni-plugins=sriov,host-device,hang,chatty,slow,liar,del-fails",
        "--cni-ipam-plugins=static"};
    args.insert(args.end(), agent_args.begin(), agent_args.end());
    return env.startAgent(node, "a100-reference", kubelet.path(), "", args, agent_env);
  }

  // A NAD in the test namespace: host-device moving the VF's netdev, with a static address.
  void createNad(const std::string& name, const std::string& plugin_json) {
    env.cp().applyYaml(
        "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\n"
        "metadata: {name: " +
        name + ", namespace: " + env.ns() + "}\nspec:\n  config: '" + plugin_json + "'\n");
  }

  // A claim for the VF, allocated and reserved for `pod_uid`, prepared as kubelet would.
  // extended_resource: as kube-scheduler makes it for a container's extended resource.
  KubeletClaim prepare(const std::string& name, const std::string& pod_uid,
                       const std::string& vf_config, bool extended_resource = false) {
    std::string uid =
        testing::createAllocatedClaim(env.admin(), {.ns = env.ns(),
                                                    .name = name,
                                                    .node = node,
                                                    .results = {{"vf", kDriver, "0000-11-00-1"}},
                                                    .vf_config = vf_config,
                                                    .pod_name = "pod-" + name,
                                                    .pod_uid = pod_uid,
                                                    .extended_resource = extended_resource});
    KubeletClaim claim{env.ns(), uid, name};
    auto prepared = KubeletClient::prepare(endpoint, "v1", {claim});
    REQUIRE(prepared.ok());
    INFO(prepared->at(uid).error);
    REQUIRE(prepared->at(uid).error.empty());
    return claim;
  }

  nri::Pod pod(const std::string& claim, const std::string& uid, const HostNetwork& net) const {
    return {"sandbox-" + claim, uid, "pod-" + claim, env.ns(), net.path()};
  }

  // Our entry of the claim's status.devices.
  std::optional<api::AllocatedDeviceStatus> status(const std::string& claim) const {
    auto got = env.admin().get(api::resources::kResourceClaims, env.ns(), claim);
    if (!got.ok()) return std::nullopt;
    auto c = api::ResourceClaim::decode(*got);
    if (!c.ok()) return std::nullopt;
    for (const auto& d : c->status.devices) {
      if (d.driver == kDriver) return d;
    }
    return std::nullopt;
  }

  testing::TempDir kubelet;
  OperatorEnv env;
  std::vector<std::string> agent_args;
  std::vector<std::pair<std::string, std::string>> agent_env;
  NriRuntime runtime{kubelet.path() + "/runtime", kubelet.path() + "/nri.sock"};
  std::unique_ptr<testing::OperatorProcess> op;
  std::string node;
  std::unique_ptr<testing::OperatorProcess> agent;
  std::string endpoint;
};

bool root() { return testing::rootOr("the attach checks"); }

std::string hostDevice(const std::string& address) {
  return R"({"cniVersion":"1.0.0","name":"vf-net","type":"host-device","device":")" + kVfNetdev +
         R"(","ipam":{"type":"static","addresses":[{"address":")" + address + R"("}]}})";
}

}  // namespace

TEST_CASE("the SR-IOV DRA driver's environment configures the agent as its Helm chart sets it",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a({}, {{"CONFIGURATION_MODE", "STANDALONE"},
                   {"DEFAULT_INTERFACE_PREFIX", "net"},
                   {"NRI_PLUGIN_NAME", "dra-driver-sriov"},
                   {"NRI_PLUGIN_IDX", "42"}});
  HostNetwork net;
  a.createNad("vf-net", hostDevice("10.9.0.8/24"));
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000009";
  a.prepare("driver-env", uid, R"("netAttachDefName":"vf-net")");
  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(a.pod("driver-env", uid, net)) == "");
  CHECK_THAT(net.inPod("net0"), Catch::Contains("10.9.0.8/24"));
  auto s = a.status("driver-env");
  REQUIRE(s);
  REQUIRE(s->network_data);
  CHECK(s->network_data->interface_name == "net0");
}

TEST_CASE("RunPodSandbox attaches the prepared VF with CNI and the claim status shows it",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  a.createNad("vf-net", hostDevice("10.9.0.7/24"));
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000001";
  auto claim = a.prepare("attached", uid, R"("netAttachDefName":"vf-net")");
  auto pod = a.pod("attached", uid, net);

  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(pod) == "");
  CHECK_THAT(net.inPod("vfnet0"), Catch::Contains("10.9.0.7/24"));  // no ifName: vfnet<N>
  CHECK_FALSE(net.vfOnHost());
  auto s = a.status("attached");
  REQUIRE(s);
  REQUIRE(s->network_data);
  CHECK(s->network_data->interface_name == "vfnet0");
  CHECK(s->network_data->ips == std::vector<std::string>{"10.9.0.7/24"});
  CHECK(s->network_data->hardware_address.size() == 17);
  auto data = json::parse(s->data_json);
  REQUIRE(data.ok());
  CHECK(json::stringOr(*json::at(*data, {"cniConfig"}), "deviceID") == kVf);
  CHECK(json::stringOr(*json::at(*data, {"cniConfig"}), "type") == "host-device");
  CHECK(json::at(*data, {"cniResult", "ips"}) != nullptr);
  CHECK(json::stringOr(*json::at(*data, {"vfConfig"}), "netAttachDefName") == "vf-net");

  // The runtime asking twice attaches nothing twice (host-device would fail: the netdev moved).
  CHECK(a.runtime.runPodSandbox(pod) == "");

  SECTION("StopPodSandbox gives the VF back and the status loses the network data") {
    REQUIRE(a.runtime.stopPodSandbox(pod) == "");
    CHECK(net.vfOnHost());
    CHECK(net.inPod("vfnet0").empty());
    auto after = a.status("attached");
    REQUIRE(after);
    CHECK_FALSE(after->network_data);
    CHECK(a.runtime.removePodSandbox(pod) == "");
  }

  SECTION("after a restart the agent attaches nothing twice and writes a status it lost") {
    a.agent->stop(SIGKILL);
    // As if the agent had died before writing the status: the network data is not there.
    REQUIRE(a.env.admin()
                .patch(api::resources::kResourceClaims, a.env.ns(), "attached",
                       kube::PatchType::kJson,
                       R"([{"op":"remove","path":"/status/devices/0/networkData"}])", {}, "status")
                .ok());
    a.agent = a.startAgent();
    REQUIRE(a.runtime.waitPlugins(2) == "");
    eventually(
        [&] {
          auto again = a.status("attached");
          return again && again->network_data && !again->network_data->ips.empty();
        },
        30s, [&] { return a.agent->logs(); });
    CHECK_THAT(net.inPod("vfnet0"), Catch::Contains("10.9.0.7/24"));
    CHECK(a.agent->logs().find("attaching VF") == std::string::npos);  // no attach was retried
    REQUIRE(a.runtime.stopPodSandbox(pod) == "");
    CHECK(net.vfOnHost());
  }
}

TEST_CASE("the pod gets Multus's network-status annotation for the network attached",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  a.createNad("vf-net", hostDevice("10.9.0.8/24"));
  // The pod as kube-scheduler leaves it on the agent's node; its claim reserved for its UID.
  const std::string uid = testing::createPod(a.env.admin(), a.env.ns(), "pod-annotated", a.node);
  a.prepare("annotated", uid, R"("netAttachDefName":"vf-net","ifName":"net1")");
  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(a.pod("annotated", uid, net)) == "");
  auto got = a.env.admin().get(kube::resources::kPods, a.env.ns(), "pod-annotated");
  REQUIRE(got.ok());
  auto meta = kube::ObjectMeta::decode(*got);
  auto status = json::parse(meta.annotation("k8s.v1.cni.cncf.io/network-status"));
  REQUIRE(status.ok());
  REQUIRE(status->IsArray());
  REQUIRE(status->Size() == 1);
  const json::Value& network = (*status)[0];
  CHECK(json::stringOr(network, "name") == a.env.ns() + "/vf-net");
  CHECK(json::stringOr(network, "interface") == "net1");
  CHECK(json::stringOr(network, "mac").size() == 17);
  const json::Value* ips = json::at(network, {"ips"});
  REQUIRE(ips != nullptr);
  REQUIRE(ips->IsArray());
  REQUIRE(ips->Size() == 1);
  CHECK(std::string((*ips)[0].GetString()) == "10.9.0.8");
  CHECK(json::at(network, {"dns"}) != nullptr);
  const json::Value* info = json::at(network, {"device-info"});
  REQUIRE(info != nullptr);
  CHECK(json::stringOr(*info, "type") == "pci");
  const json::Value* pci = json::at(*info, {"pci"});
  REQUIRE(pci != nullptr);
  CHECK(json::stringOr(*pci, "pci-address") == kVf);
  REQUIRE(a.runtime.stopPodSandbox(a.pod("annotated", uid, net)) == "");
}

TEST_CASE(
    "a pod written for the SR-IOV network operator gets its VF through the network its "
    "annotation names",
    "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  // The network as the operator renders a SriovNetwork of resource cx6_vfs: annotated with the
  // resource, its plugin declaring the "ips" capability (static IPAM reads runtimeConfig.ips).
  a.env.cp().applyYaml(
      "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata:\n"
      "  name: vf-net\n  namespace: " +
      a.env.ns() +
      "\n  annotations: {k8s.v1.cni.cncf.io/resourceName: openshift.io/cx6_vfs}\nspec:\n"
      "  config: '{\"cniVersion\":\"1.0.0\",\"name\":\"vf-net\",\"type\":\"host-device\","
      "\"device\":\"" +
      kVfNetdev + "\",\"capabilities\":{\"ips\":true},\"ipam\":{\"type\":\"static\"}}'\n");
  // The claim kube-scheduler made for the pod's resources.limits openshift.io/cx6_vfs: 1 (no
  // VfConfig); the pod names the network in its annotation, with an address for it.
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000021";
  a.prepare("pod-x-extended-resources-q7k2m", uid, "", true);
  auto pod = a.pod("pod-x-extended-resources-q7k2m", uid, net);
  pod.networks = R"([{"name":"vf-net","ips":["10.9.0.44/24"]}])";

  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(pod) == "");
  // Multus's name for the first network of the annotation, with the address the pod asked for.
  CHECK_THAT(net.inPod("net1"), Catch::Contains("10.9.0.44/24"));
  CHECK_FALSE(net.vfOnHost());
  auto s = a.status("pod-x-extended-resources-q7k2m");
  REQUIRE(s);
  REQUIRE(s->network_data);
  CHECK(s->network_data->interface_name == "net1");
  CHECK(s->network_data->ips == std::vector<std::string>{"10.9.0.44/24"});
  auto data = json::parse(s->data_json);
  REQUIRE(data.ok());
  CHECK(json::dump(*json::at(*data, {"cniConfig", "runtimeConfig", "ips"})) ==
        R"(["10.9.0.44/24"])");
  REQUIRE(a.runtime.stopPodSandbox(pod) == "");
  CHECK(net.vfOnHost());

  // What Multus would refuse fails the sandbox with the reason, and nothing is attached.
  for (const auto& [networks, says] : std::vector<std::pair<std::string, std::string>>{
           {"llm/a/b", "annotation k8s.v1.cni.cncf.io/networks: element 1: more than one '/'"},
           {"vf-net, vf-net@net5",
            "network " + a.env.ns() +
                "/vf-net is for resource openshift.io/cx6_vfs, but the pod holds no more VFs"},
           {"absent-net, vf-net", "network " + a.env.ns() +
                                      "/absent-net of its k8s.v1.cni.cncf.io/networks "
                                      "annotation: its NetworkAttachmentDefinition does not exist"},
           {"default/vf-net",
            "network default/vf-net of its k8s.v1.cni.cncf.io/networks "
            "annotation is in another namespace"},
           {R"([{"name":"vf-net","interface":"eth0"}])", "interface eth0 is the pod's own"}}) {
    pod.networks = networks;
    CHECK_THAT(a.runtime.runPodSandbox(pod), Catch::Contains(says));
    CHECK(net.vfOnHost());
  }
  // A VF that stays a network interface is not given to a pod without its network.
  pod.networks = "";
  CHECK_THAT(a.runtime.runPodSandbox(pod),
             Catch::Contains("VF 0000-11-00-1 of resource openshift.io/cx6_vfs stays a network "
                             "interface, but no network the annotation names is for that "
                             "resource"));
  CHECK(net.vfOnHost());
}

TEST_CASE("a NAD edited or deleted under a running pod: its VF comes back as it was attached",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  a.createNad("vf-net", hostDevice("10.9.0.9/24"));
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000201";
  auto claim = a.prepare("edited", uid, R"("netAttachDefName":"vf-net")");
  auto pod = a.pod("edited", uid, net);
  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(pod) == "");
  CHECK_FALSE(net.vfOnHost());

  // What a SriovNetwork's edit or deletion does to its NAD while the pod runs. A DEL from the
  // NAD as it is now would look for another device and leave the VF in the pod's namespace.
  SECTION("edited") {
    a.createNad("vf-net", R"({"cniVersion":"1.0.0","name":"vf-net","type":"host-device",)"
                          R"("device":"sdra-elsewhere"})");
  }
  SECTION("deleted") {
    REQUIRE(a.env.admin()
                .remove(api::resources::kNetworkAttachmentDefinitions, a.env.ns(), "vf-net")
                .isOk());
  }
  REQUIRE(a.runtime.stopPodSandbox(pod) == "");
  CHECK(net.vfOnHost());
  CHECK(net.inPod("vfnet0").empty());
  auto after = a.status("edited");
  REQUIRE(after);
  CHECK_FALSE(after->network_data);
  CHECK(a.runtime.removePodSandbox(pod) == "");
  auto undone = KubeletClient::unprepare(a.endpoint, "v1", {claim});
  REQUIRE(undone.ok());
  CHECK(undone->at(claim.uid) == "");
}

TEST_CASE(
    "a pod whose end the runtime never reports gives its VF back when its claim is unprepared",
    "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  a.createNad("vf-net", hostDevice("10.9.0.11/24"));
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000301";
  auto claim = a.prepare("unreported", uid, R"("netAttachDefName":"vf-net")");
  auto pod = a.pod("unreported", uid, net);
  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(pod) == "");
  CHECK_FALSE(net.vfOnHost());

  // containerd, restarted since the pod started, sends no StopPodSandbox; the kubelet still
  // unprepares the claim once the pod is gone.
  auto undone = KubeletClient::unprepare(a.endpoint, "v1", {claim});
  REQUIRE(undone.ok());
  CHECK(undone->at(claim.uid) == "");
  CHECK(net.vfOnHost());
  CHECK(net.inPod("vfnet0").empty());
  CHECK_THAT(a.agent->logs(), Catch::Contains("never said its sandbox stopped"));
  // The runtime's late StopPodSandbox, if it comes, finds nothing left to do.
  CHECK(a.runtime.stopPodSandbox(pod) == "");
  CHECK(net.vfOnHost());
}

TEST_CASE("a pod's new sandbox takes its VF from an earlier one the runtime never stopped",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  a.createNad("vf-net", hostDevice("10.9.0.12/24"));
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000401";
  a.prepare("resandboxed", uid, R"("netAttachDefName":"vf-net")");
  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(a.pod("resandboxed", uid, net)) == "");
  CHECK_FALSE(net.vfOnHost());

  // The pod's next sandbox (after a reboot or a runtime restart, no StopPodSandbox came).
  const std::string next_ns = "sdra-attach-next-" + std::to_string(::getpid());
  REQUIRE(testing::ip({"netns", "add", next_ns}).exit_code == 0);
  struct Gone {
    std::string ns;
    ~Gone() { testing::ip({"netns", "del", ns}); }
  } gone{next_ns};
  nri::Pod next{"sandbox-resandboxed-2", uid, "pod-resandboxed", a.env.ns(),
                "/var/run/netns/" + next_ns};
  REQUIRE(a.runtime.runPodSandbox(next) == "");
  CHECK(net.inPod("vfnet0").empty());
  CHECK_THAT(testing::ip({"-n", next_ns, "-br", "addr", "show", "vfnet0"}).out,
             Catch::Contains("10.9.0.12/24"));
  CHECK_THAT(a.agent->logs(), Catch::Contains("gets a new sandbox while its earlier one"));
  REQUIRE(a.runtime.stopPodSandbox(next) == "");
  CHECK(net.vfOnHost());
}

TEST_CASE("a container created before its pod's VF is attached gets it first",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  a.createNad("vf-net", hostDevice("10.9.0.13/24"));
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000501";
  a.prepare("unseen", uid, R"("netAttachDefName":"vf-net")");
  auto pod = a.pod("unseen", uid, net);
  INFO(a.agent->logs());
  // Its RunPodSandbox came while the agent was away (containerd went on without it).
  REQUIRE(a.runtime.runUnseen(pod) == "");
  CHECK(net.vfOnHost());
  REQUIRE(a.runtime.createContainer(pod, "app") == "");
  CHECK_THAT(net.inPod("vfnet0"), Catch::Contains("10.9.0.13/24"));
  CHECK_THAT(a.agent->logs(), Catch::Contains("container app is being created while VFs"));
  auto s = a.status("unseen");
  REQUIRE(s);
  CHECK(s->network_data);
  // The next container finds it attached: no second ADD (host-device would fail: moved).
  REQUIRE(a.runtime.createContainer(pod, "sidecar") == "");
  CHECK(a.agent->logs().find("container sidecar is being created") == std::string::npos);
  REQUIRE(a.runtime.stopPodSandbox(pod) == "");
  CHECK(net.vfOnHost());
}

TEST_CASE("a sandbox whose VF cannot be attached fails with the reason, nothing attached",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  // A plugin whose ADD result is larger than an attach record keeps (DEL succeeds).
  std::filesystem::create_directories(a.kubelet.path() + "/cni");
  REQUIRE(writeFileAtomic(a.kubelet.path() + "/cni/chatty",
                          "#!/bin/sh\ncat >/dev/null\n[ \"$CNI_COMMAND\" = ADD ] && "
                          "printf '{\"cniVersion\":\"1.0.0\",\"padding\":\"%070000d\"}' 0\n"
                          "exit 0\n",
                          0755)
              .isOk());
  // A plugin that exits 0 with a result that is not one.
  REQUIRE(
      writeFileAtomic(a.kubelet.path() + "/cni/liar", "#!/bin/sh\ncat >/dev/null\necho ok\n", 0755)
          .isOk());
  struct Row {
    std::string name;
    std::string nad;  // "" = none created
    std::string config;
    std::string expected;
  };
  std::vector<Row> rows = {
      {"missing NAD", "", "", "NetworkAttachmentDefinition " + a.env.ns() + "/absent-net"},
      {"unknown CNI type", R"({"cniVersion":"1.0.0","name":"x","type":"sriov"})", "",
       "CNI plugin sriov is not installed"},
      {"plugin fails", hostDevice("not-an-address"), "", "CNI plugin host-device: "},
      // Installed (Debian's tuning, host-local) but not allowed on this node: nothing runs.
      {"meta plugin not allowed",
       R"({"cniVersion":"1.0.0","name":"x","plugins":[{"type":"host-device","device":")" +
           kVfNetdev + R"("},{"type":"tuning","mtu":1280}]})",
       "", "plugins[1] (type tuning): CNI plugin \"tuning\" is not allowed on this node"},
      {"IPAM plugin not allowed",
       R"({"cniVersion":"1.0.0","name":"x","type":"host-device","device":")" + kVfNetdev +
           R"(","ipam":{"type":"host-local","ranges":[[{"subnet":"10.9.1.0/24"}]]}})",
       "", "IPAM plugin \"host-local\" is not allowed on this node"},
      {"configuration too large to record",
       R"({"cniVersion":"1.0.0","name":"x","type":"host-device","device":")" + kVfNetdev +
           R"(","padding":")" + std::string(70000, 'a') + R"("})",
       "", "spec.config is 70"},
      {"a result that is not one", R"({"cniVersion":"1.0.0","name":"x","type":"liar"})", "",
       "CNI plugin liar: the CNI result is not JSON"},
      {"result too large to record", R"({"cniVersion":"1.0.0","name":"x","type":"chatty"})", "",
       "wrote more than 65536 bytes"},
      {"host path not allowed",
       R"({"cniVersion":"1.0.0","name":"x","type":"host-device","device":")" + kVfNetdev +
           R"(","logFile":"/var/run/cdi/evil.json"})",
       "", "\"logFile\" names the host path \"/var/run/cdi/evil.json\""},
  };
  int n = 0;
  for (const auto& row : rows) {
    INFO(row.name);
    std::string claim = "fails-" + std::to_string(n);
    std::string uid = "6f1c5b0e-9d0a-4d49-9a53-00000000010" + std::to_string(n++);
    std::string nad = row.nad.empty() ? "absent-net" : claim + "-net";
    if (!row.nad.empty()) a.createNad(nad, row.nad);
    auto prepared = a.prepare(claim, uid, R"("netAttachDefName":")" + nad + R"(")");
    std::string error = a.runtime.runPodSandbox(a.pod(claim, uid, net));
    std::string which = "attaching VF " + kVf + " of ResourceClaim ";
    which.append(a.env.ns()).append("/").append(claim);
    CHECK_THAT(error, Catch::Contains(row.expected) && Catch::Contains(which));
    CHECK(net.vfOnHost());
    auto s = a.status(claim);
    REQUIRE(s);
    CHECK_FALSE(s->network_data);
    auto undone = KubeletClient::unprepare(a.endpoint, "v1", {prepared});
    REQUIRE(undone.ok());
    testing::releaseClaim(a.env.admin(), a.env.ns(), claim);
  }
}

TEST_CASE("an agent killed during CNI ADD deletes and adds again after its restart",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a({"--nri-attach-timeout=60"});  // the hanging ADD outlives the agent
  HostNetwork net;
  // A CNI plugin that records its pid and hangs on ADD (DEL succeeds): the agent dies mid-ADD.
  std::string marker = a.kubelet.path() + "/hang.pid";
  std::string deleted = a.kubelet.path() + "/hang.deleted";
  std::filesystem::create_directories(a.kubelet.path() + "/cni");
  REQUIRE(
      writeFileAtomic(a.kubelet.path() + "/cni/hang",
                      "#!/bin/sh\ncat >/dev/null\nif [ \"$CNI_COMMAND\" = ADD ]; then echo $$ > " +
                          marker + "; exec sleep 300; fi\ntouch " + deleted +
                          "\necho '{\"cniVersion\":\"1.0.0\"}'\n",
                      0755)
          .isOk());
  a.createNad("flaky-net", R"({"cniVersion":"1.0.0","name":"flaky-net","type":"hang"})");
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000201";
  a.prepare("flaky", uid, R"("netAttachDefName":"flaky-net")");
  auto pod = a.pod("flaky", uid, net);
  std::string record = a.env.stateDir(a.node) + "/attach/" + pod.id + ".json";

  std::thread run([&] { (void)a.runtime.runPodSandbox(pod); });
  eventually([&] { return std::filesystem::exists(marker); }, 30s, [&] { return a.agent->logs(); });
  CHECK_THAT(readFile(record).valueOr(""), Catch::Contains("\"state\":\"Adding\""));
  a.agent->stop(SIGKILL);
  run.join();  // the runtime dropped the dead plugin and went on: the pod runs, unattached
  // The hung plugin outlived the agent; stop it as a person would.
  ::kill(std::stoi(readFile(marker).valueOr("0")), SIGKILL);

  // The NAD is fixed meanwhile. The restarted agent registers at once (the synchronization's CNI
  // work runs after the answer), deletes the half-done ADD with the configuration it ran with,
  // and attaches with the NAD as it is now.
  a.createNad("flaky-net", hostDevice("10.9.0.9/24"));
  a.agent = a.startAgent();
  REQUIRE(a.runtime.waitPlugins(2) == "");
  // The interface appears in the pod before its address (host-device moves it, then IPAM runs)
  // and the record says Attached once ADD returned: both are waited for.
  eventually([&] { return net.inPod("vfnet0").find("10.9.0.9/24") != std::string::npos; }, 30s,
             [&] { return net.inPod("vfnet0") + a.agent->logs(); });
  CHECK(std::filesystem::exists(deleted));
  eventually(
      [&] {
        return readFile(record).valueOr("").find("\"state\":\"Attached\"") != std::string::npos;
      },
      30s, [&] { return readFile(record).valueOr("(no record)"); });
  eventually(
      [&] {
        auto s = a.status("flaky");
        return s && s->network_data && !s->network_data->ips.empty();
      },
      30s, [&] { return a.agent->logs(); });
  REQUIRE(a.runtime.stopPodSandbox(pod) == "");
  CHECK(net.vfOnHost());
}

TEST_CASE("a DEL that keeps failing is given up with a Warning Event", "[attach][integration]") {
  if (!root()) return;
  AttachEnv a({"--cni-del-give-up-after=0"});
  HostNetwork net;
  // A plugin whose ADD succeeds and whose DEL never does (its state lost, say).
  std::filesystem::create_directories(a.kubelet.path() + "/cni");
  REQUIRE(writeFileAtomic(a.kubelet.path() + "/cni/del-fails",
                          "#!/bin/sh\ncat >/dev/null\nif [ \"$CNI_COMMAND\" = DEL ]; then echo "
                          "'{\"code\":11,\"msg\":\"no state left\"}'; exit 1; fi\necho "
                          "'{\"cniVersion\":\"1.0.0\"}'\n",
                          0755)
              .isOk());
  a.createNad("dead-end", R"({"cniVersion":"1.0.0","name":"dead-end","type":"del-fails"})");
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000601";
  a.prepare("dead-end", uid, R"("netAttachDefName":"dead-end")");
  auto pod = a.pod("dead-end", uid, net);
  const std::string record = a.env.stateDir(a.node) + "/attach/" + pod.id + ".json";
  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(pod) == "");
  REQUIRE(std::filesystem::exists(record));
  // The runtime, the kubelet's unprepare and the pod's next sandbox would each try again: here
  // the runtime, nine times refused with the plugin's message, the tenth given up.
  for (int i = 1; i < 10; ++i) {
    CHECK_THAT(a.runtime.stopPodSandbox(pod), Catch::Contains("no state left"));
  }
  CHECK(a.runtime.stopPodSandbox(pod) == "");
  CHECK_FALSE(std::filesystem::exists(record));
  // On the node's SriovNodeState: the one object the agent may record Events about.
  std::optional<std::string> message;
  eventually(
      [&] { return (message = a.env.findEvent("DetachAbandoned", "Warning", a.node)).has_value(); },
      30s, [&] { return a.agent->logs(); });
  CHECK_THAT(*message, Catch::Contains("pod " + a.env.ns() +
                                       "/pod-dead-end: CNI DEL of vfnet0 "
                                       "(VF 0000:11:00.1) failed 10 times") &&
                           Catch::Contains("no state left") && Catch::Contains("IPAM lease"));
}

TEST_CASE("a stale record never takes a VF from the claim that holds it now",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  a.createNad("vf-net", hostDevice("10.9.0.14/24"));
  const std::string first_uid = "6f1c5b0e-9d0a-4d49-9a53-000000000701";
  const std::string second_uid = "6f1c5b0e-9d0a-4d49-9a53-000000000702";
  auto first = a.prepare("first", first_uid, R"("netAttachDefName":"vf-net")");
  auto first_pod = a.pod("first", first_uid, net);
  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(first_pod) == "");
  const std::string record = a.env.stateDir(a.node) + "/attach/" + first_pod.id + ".json";
  auto stale = readFile(record);
  REQUIRE(stale.ok());
  REQUIRE(a.runtime.stopPodSandbox(first_pod) == "");
  auto undone = KubeletClient::unprepare(a.endpoint, "v1", {first});
  REQUIRE(undone.ok());
  REQUIRE(undone->at(first.uid) == "");
  // The VF goes to the next pod's claim; the first pod's record comes back (a restored backup).
  a.prepare("second", second_uid, R"("netAttachDefName":"vf-net")");
  auto second_pod = a.pod("second", second_uid, net);
  REQUIRE(a.runtime.runPodSandbox(second_pod) == "");
  REQUIRE(writeFileAtomic(record, *stale, 0600).isOk());
  CHECK(a.runtime.stopPodSandbox(first_pod) == "");
  CHECK_THAT(net.inPod("vfnet0"), Catch::Contains("10.9.0.14/24"));  // no DEL took it
  CHECK_THAT(a.agent->logs(),
             Catch::Contains("is attached to pod " + a.env.ns() +
                             "/pod-second now; its stale attachment is forgotten"));
  CHECK_FALSE(std::filesystem::exists(record));
  REQUIRE(a.runtime.stopPodSandbox(second_pod) == "");
  CHECK(net.vfOnHost());
}

TEST_CASE("a claim cannot make the agent read another namespace's NetworkAttachmentDefinition",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  // The victim's NAD, with a secret in its IPAM configuration.
  std::string victim = a.env.cp().newNamespace("victim");
  a.env.cp().applyYaml(
      "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\n"
      "metadata: {name: private-net, namespace: " +
      victim + "}\nspec:\n  config: '" + hostDevice("10.9.0.66/24") + "'\n");
  std::string uid = testing::createAllocatedClaim(
      a.env.admin(), {.ns = a.env.ns(),
                      .name = "deputy",
                      .node = a.node,
                      .results = {{"vf", kDriver, "0000-11-00-1"}},
                      .vf_config = R"("netAttachDefName":"private-net",)"
                                   R"("netAttachDefNamespace":")" +
                                   victim + R"(")",
                      .pod_name = "pod-deputy",
                      .pod_uid = "6f1c5b0e-9d0a-4d49-9a53-000000000301"});
  auto prepared = KubeletClient::prepare(a.endpoint, "v1", {{a.env.ns(), uid, "deputy"}});
  REQUIRE(prepared.ok());
  CHECK_THAT(prepared->at(uid).error, Catch::Contains("VfConfig netAttachDefNamespace \"" + victim +
                                                      "\" is not the claim's namespace"));
  // Nothing of the victim's NAD reached the claim's status.
  auto s = a.status("deputy");
  CHECK((!s || s->data_json.find("10.9.0.66") == std::string::npos));
}

TEST_CASE("a NAD name that would end the agent's request line is refused; nothing is smuggled",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  auto slices = a.env.slicesOf(a.node);
  REQUIRE_FALSE(slices.empty());
  const std::string victim = slices.front().metadata.name;
  // The agent would GET .../network-attachment-definitions/<name>: this name ends that request
  // and sends a DELETE of the node's own ResourceSlice with the agent's token (issue 52).
  const std::string smuggled =
      R"(x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /apis/resource.k8s.io/v1/resourceslices/)" + victim;
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000401";
  std::string claim_uid = testing::createAllocatedClaim(
      a.env.admin(), {.ns = a.env.ns(),
                      .name = "smuggler",
                      .node = a.node,
                      .results = {{"vf", kDriver, "0000-11-00-1"}},
                      .vf_config = R"("netAttachDefName":")" + smuggled + R"(")",
                      .pod_name = "pod-smuggler",
                      .pod_uid = uid});
  auto prepared = KubeletClient::prepare(a.endpoint, "v1", {{a.env.ns(), claim_uid, "smuggler"}});
  REQUIRE(prepared.ok());
  CHECK_THAT(prepared->at(claim_uid).error,
             Catch::Contains(R"(netAttachDefName: "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /apis)") &&
                 Catch::Contains("is not a NetworkAttachmentDefinition name"));
  // The runtime starts the sandbox anyway: the agent has nothing to attach and asks for nothing.
  // (An agent that sent the GET would have written the DELETE with it, before the answer.)
  (void)a.runtime.runPodSandbox(a.pod("smuggler", uid, net));
  CHECK(a.env.admin().get(api::resources::kResourceSlices, "", victim).ok());
  for (const auto& e : a.env.cp().auditEvents()) {
    INFO(e.verb << " " << e.resource << " " << e.name);
    CHECK_FALSE(
        (e.user == a.env.agentUser() && e.resource == "resourceslices" && e.verb == "delete"));
    CHECK(e.name.find("HTTP") == std::string::npos);
  }
  CHECK(net.vfOnHost());
}

TEST_CASE("a CNI plugin slower than the runtime's budget fails its sandbox in time, no other",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;  // --nri-attach-timeout 1.5 s; the runtime drops a plugin silent for 10 s
  HostNetwork net;
  std::filesystem::create_directories(a.kubelet.path() + "/cni");
  REQUIRE(writeFileAtomic(a.kubelet.path() + "/cni/slow",
                          "#!/bin/sh\ncat >/dev/null\n[ \"$CNI_COMMAND\" = ADD ] && exec sleep 30\n"
                          "echo '{\"cniVersion\":\"1.0.0\"}'\n",
                          0755)
              .isOk());
  a.createNad("slow-net", R"({"cniVersion":"1.0.0","name":"slow-net","type":"slow"})");
  const std::string slow_uid = "6f1c5b0e-9d0a-4d49-9a53-000000000401";
  auto slow = a.prepare("slow", slow_uid, R"("netAttachDefName":"slow-net")");
  std::string error = a.runtime.runPodSandbox(a.pod("slow", slow_uid, net));
  CHECK_THAT(error, Catch::Contains("CNI plugin slow: ") && Catch::Contains("did not finish") &&
                        Catch::Contains("within 1500 ms, --nri-attach-timeout"));
  CHECK(net.vfOnHost());
  auto undone = KubeletClient::unprepare(a.endpoint, "v1", {slow});
  REQUIRE(undone.ok());
  testing::releaseClaim(a.env.admin(), a.env.ns(), "slow");

  // The runtime kept the plugin: the next pod is attached without a new registration.
  a.createNad("vf-net", hostDevice("10.9.0.8/24"));
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000402";
  a.prepare("next", uid, R"("netAttachDefName":"vf-net")");
  auto next = a.pod("next", uid, net);
  INFO(a.runtime.logs());
  REQUIRE(a.runtime.runPodSandbox(next) == "");
  CHECK_THAT(net.inPod("vfnet0"), Catch::Contains("10.9.0.8/24"));
  CHECK(a.runtime.waitPlugins(2, std::chrono::seconds(1)) != "");  // still the first connection
  REQUIRE(a.runtime.stopPodSandbox(next) == "");
}
