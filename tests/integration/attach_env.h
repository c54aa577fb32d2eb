#pragma once
// The standalone-mode attach tests' environment (attach_test.cpp, attach_faults_test.cpp): the
// real API server and operator, the agent with its kubelet plugin (a gRPC client acting as
// kubelet prepares the claim), containerd's NRI runtime side (tools/nri-runtime) sending the pod
// events, and Debian's real CNI plugins. The simulated A100 server's VF 0000:11:00.1 has the
// netdev ibp17s0v0; an ifb interface of that name stands in for it on this machine, and a
// network namespace the test creates is the pod's.
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

namespace sriovdra::testing::attach {

using namespace std::chrono_literals;

inline const std::string kDriver(api::kDriverName);
inline const std::string kVf = "0000:11:00.1";
inline const std::string kVfNetdev = "ibp17s0v0";  // the simulated kernel's name for it

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

  // Most cases' start: the NAD vf-net (host-device, the VF with the static `address`), the claim
  // `name` prepared for the pod `uid` naming it, and the pod's sandbox run: the VF is in `net`.
  struct Running {
    KubeletClaim claim;
    nri::Pod pod;
  };
  Running runWithVf(const std::string& name, const std::string& uid, const std::string& address,
                    const HostNetwork& net);

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

inline bool root() { return testing::rootOr("the attach checks"); }

inline std::string hostDevice(const std::string& address) {
  return R"({"cniVersion":"1.0.0","name":"vf-net","type":"host-device","device":")" + kVfNetdev +
         R"(","ipam":{"type":"static","addresses":[{"address":")" + address + R"("}]}})";
}

inline AttachEnv::Running AttachEnv::runWithVf(const std::string& name, const std::string& uid,
                                               const std::string& address, const HostNetwork& net) {
  createNad("vf-net", hostDevice(address));
  Running r{prepare(name, uid, R"("netAttachDefName":"vf-net")"), pod(name, uid, net)};
  INFO(agent->logs());
  REQUIRE(runtime.runPodSandbox(r.pod) == "");
  CHECK_FALSE(net.vfOnHost());
  return r;
}

}  // namespace sriovdra::testing::attach
