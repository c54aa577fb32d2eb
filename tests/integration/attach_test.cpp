// Standalone mode end to end (attach_env.h): a pod's VFs attached with CNI at RunPodSandbox or
// before its first container, the claim's status and the pod's network-status, and what a claim
// or a NAD may not make the agent do.
#include <csignal>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "attach_env.h"
#include "base/files.h"
#include "base/json.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using namespace sriovdra::testing::attach;
using sriovdra::testing::eventually;
using sriovdra::testing::KubeletClaim;
using sriovdra::testing::KubeletClient;
using sriovdra::testing::NriRuntime;
using sriovdra::testing::OperatorEnv;

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
  auto [claim, pod] =
      a.runWithVf("attached", "6f1c5b0e-9d0a-4d49-9a53-000000000001", "10.9.0.7/24", net);
  INFO(a.agent->logs());
  CHECK_THAT(net.inPod("vfnet0"), Catch::Contains("10.9.0.7/24"));  // no ifName: vfnet<N>
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
  auto [claim, pod] =
      a.runWithVf("edited", "6f1c5b0e-9d0a-4d49-9a53-000000000201", "10.9.0.9/24", net);
  INFO(a.agent->logs());

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
