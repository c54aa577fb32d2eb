// The product's claim, checked with the real kube-scheduler and resourceclaim controller: on
// kubelet-less Nodes served by the operator and one agent each (fixture sysfs trees, simulated
// kernel), with GPU slices published as the NVIDIA DRA driver publishes them, a pod using the
// reference ResourceClaimTemplate gets a GPU and a VF under the same PCIe root, or stays Pending
// with the scheduler's reason, which `sriov-dra explain` spells out root by root. With the GPUs
// published as MIG partitions, explain names the exact partition and VF the scheduler picks.
#include <filesystem>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "cli/commands.h"
#include "dra/cdi.h"
#include "e2e/workloads.h"
#include "support/dra_objects.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/kubelet_client.h"
#include "support/mig_gpus.h"
#include "support/operator_env.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;

namespace {

const std::string kRoot(api::attr::kPcieRoot);
const std::string kVfDriver(api::kDriverName);

// a100-reference nodes with the operator, an agent per node and the reference policies; the
// GPU driver's slices and class; the reference template "gpu-nic-aligned" in the namespace.
struct AlignedCluster {
  // `mig`: the GPUs are published partitionable, as the NVIDIA driver's dynamic MIG does.
  AlignedCluster(const std::string& prefix, int nodes, bool kubelet_plugin = false,
                 bool mig = false)
      : env(prefix, testing::schedulingControlPlane()),
        pods(env.cp(), env.ns(), {{"sriov-dra-test", env.ns()}}) {
    op = env.startOperator();
    for (int i = 0; i < nodes; ++i) {
      std::string n = env.createNode("a100-" + std::to_string(i), {{"dra-sriov-cx6", "true"}});
      names.push_back(n);
      agents.push_back(env.startAgent(n, "a100-reference", kubelet_plugin ? kubelet.path() : ""));
    }
    env.applyReferencePolicies();
    env.applyFixture("reference/aligned-resourceclaimtemplate.yaml");
    testing::createGpuDeviceClass(env.admin());
    for (size_t i = 0; i < names.size(); ++i) {
      std::optional<api::SriovNodeState> state;
      eventually(
          [&] {
            state = env.nodeState(names[i]);
            return env.deviceCount(names[i]) == 8 && state && state->status.gpus.size() == 8;
          },
          90s, [&] { return agents[i]->logs(); });
      if (!mig) {
        testing::publishGpuSlice(env.admin(), names[i], state->status.gpus);
        continue;
      }
      for (const auto& [name, spec] : testing::migGpuSlices(names[i], state->status.gpus, "")) {
        REQUIRE(testing::createSlice(env.admin(), name, spec).ok());
      }
    }
  }

  // The pcieRoot of every device allocated to the pod's claim, by request.
  std::map<std::string, std::string> rootsOf(const std::string& pod) {
    auto claim = pods.claimOf(pod);
    std::map<std::string, std::string> out;
    REQUIRE(claim.status.allocation);
    for (const auto& r : claim.status.allocation->results) {
      out[r.request] = pods.attribute(r, kRoot);
    }
    return out;
  }

  json::Document explain(const std::string& claim) {
    cli::ExplainArgs args;
    args.kubeconfig = env.cp().kubeconfig();
    args.output = "json";
    args.claim = env.ns() + "/" + claim;
    std::istringstream in;
    std::ostringstream out, err;
    cli::runExplain(args, cli::Streams{in, out, err});
    auto doc = json::parse(out.str());
    INFO(err.str());
    REQUIRE(doc.ok());
    return std::move(*doc);
  }

  testing::TempDir kubelet;  // first: the agents' sockets live in it
  testing::OperatorEnv env;
  testing::Workloads pods;
  std::unique_ptr<testing::OperatorProcess> op;
  std::vector<std::string> names;
  std::vector<std::unique_ptr<testing::OperatorProcess>> agents;
};

std::vector<std::string> reasonsFor(const json::Document& explained, const std::string& node) {
  std::vector<std::string> out;
  for (const auto& n : explained["nodeResults"].GetArray()) {
    if (n["node"].GetString() != node) continue;
    for (const auto& r : n["reasons"].GetArray()) out.emplace_back(r.GetString());
  }
  return out;
}

}  // namespace

TEST_CASE("the scheduler gives a pod a GPU and a VF under one PCIe root; the plugin prepares it",
          "[e2e]") {
  AlignedCluster c("aligned", 1, /*kubelet_plugin=*/true);
  c.pods.podFromTemplate("inference", "gpu-nic-aligned");
  CHECK(c.pods.waitScheduled("inference") == c.names[0]);
  auto roots = c.rootsOf("inference");
  REQUIRE(roots.size() == 2);
  CHECK_FALSE(roots.at("gpu").empty());
  CHECK(roots.at("gpu") == roots.at("vf"));

  // The claim exactly as the scheduler allocated it goes through the kubelet plugin.
  auto claim = c.pods.claimOf("inference");
  auto dirs = testing::KubeletDirs::under(c.kubelet.path());
  auto info = testing::KubeletClient::registerPlugin(dirs.registry, kVfDriver);
  REQUIRE(info.ok());
  c.agents[0]->waitReady();
  auto prepared = testing::KubeletClient::prepare(
      info->endpoint, "v1", {{c.env.ns(), claim.metadata.uid, claim.metadata.name}});
  REQUIRE(prepared.ok());
  const auto& answer = prepared->at(claim.metadata.uid);
  CHECK(answer.error == "");
  std::string vf;
  for (const auto& r : claim.status.allocation->results) {
    if (r.driver == kVfDriver) vf = r.device;
  }
  REQUIRE(answer.devices.size() == 1);
  CHECK(answer.devices[0].device == vf);
  CHECK(std::filesystem::exists(dirs.cdi + "/" + dra::cdiSpecFileName(claim.metadata.uid)));
  eventually(
      [&] {
        auto now = c.pods.claimOf("inference");
        for (const auto& d : now.status.devices) {
          if (d.driver == kVfDriver && d.device == vf) return true;
        }
        return false;
      },
      30s, [&] { return c.agents[0]->logs(); });
}

TEST_CASE("sixteen pods on two a100 nodes are all aligned; the seventeenth stays Pending",
          "[e2e]") {
  AlignedCluster c("sixteen", 2);
  for (int i = 0; i < 16; ++i) c.pods.podFromTemplate("p-" + std::to_string(i), "gpu-nic-aligned");
  std::map<std::string, int> per_node;
  std::set<std::string> vfs;
  for (int i = 0; i < 16; ++i) {
    std::string pod = "p-" + std::to_string(i);
    ++per_node[c.pods.waitScheduled(pod)];
    auto roots = c.rootsOf(pod);
    INFO(pod);
    CHECK(roots.at("gpu") == roots.at("vf"));
    auto claim = c.pods.claimOf(pod);
    for (const auto& r : claim.status.allocation->results) {
      if (r.driver == kVfDriver) vfs.insert(r.pool + "/" + r.device);
    }
  }
  CHECK(per_node == std::map<std::string, int>{{c.names[0], 8}, {c.names[1], 8}});
  CHECK(vfs.size() == 16);

  c.pods.podFromTemplate("p-16", "gpu-nic-aligned");
  CHECK_THAT(c.pods.waitUnschedulable("p-16"), Catch::Contains("cannot allocate all claims"));
  auto explained = c.explain(c.pods.claimOf("p-16").metadata.name);
  for (const auto& node : c.names) {
    CHECK(reasonsFor(explained, node) ==
          std::vector<std::string>{"request gpu: all 8 matching device(s) are allocated to other "
                                   "claims",
                                   "request vf: all 8 matching device(s) are allocated to other "
                                   "claims"});
  }
}

TEST_CASE(
    "with free GPUs and VFs only under different roots the pod stays Pending, and explain "
    "names the roots that lack a partner",
    "[e2e]") {
  AlignedCluster c("partnerless", 1);
  // Both VFs under the NUMA 0 roots and both GPUs under the NUMA 1 roots go to other pods.
  auto take = [&](const std::string& name, const std::string& klass, const std::string& root) {
    c.pods.claim(name,
                 "  devices:\n    requests:\n    - name: d\n      exactly:\n"
                 "        deviceClassName: " +
                     klass +
                     "\n        count: 2\n        selectors:\n"
                     "        - cel: {expression: 'device.attributes[\"resource."
                     "kubernetes.io\"].pcieRoot == \"" +
                     root + "\"'}\n");
    c.pods.podWithClaim(name, name);
    c.pods.waitScheduled(name);
  };
  take("vfs-00", kVfDriver, "pci0000:00");
  take("vfs-3a", kVfDriver, "pci0000:3a");
  take("gpus-80", "gpu.nvidia.com", "pci0000:80");
  take("gpus-b9", "gpu.nvidia.com", "pci0000:b9");

  c.pods.podFromTemplate("inference", "gpu-nic-aligned");
  CHECK_THAT(c.pods.waitUnschedulable("inference"), Catch::Contains("cannot allocate all claims"));
  auto explained = c.explain(c.pods.claimOf("inference").metadata.name);
  CHECK(reasonsFor(explained, c.names[0]) ==
        std::vector<std::string>{
            "no gpu and vf with the same resource.kubernetes.io/pcieRoot: gpu free on pci0000:00, "
            "pci0000:3a; vf free on pci0000:80, pci0000:b9"});
}

TEST_CASE(
    "a selector that fails on a device the scheduler reaches keeps the pod from being scheduled, "
    "and explain says so instead of naming a node",
    "[e2e]") {
  AlignedCluster c("selector-error", 1);
  // No VF has the attribute "model": the CEL lookup fails on the first VF the search reaches.
  c.pods.claim("broken",
               "  devices:\n    requests:\n    - name: vf\n      exactly:\n"
               "        deviceClassName: " +
                   kVfDriver +
                   "\n        selectors:\n"
                   "        - cel: {expression: 'device.attributes[\"" +
                   kVfDriver + "\"].model == \"cx7\"'}\n");
  c.pods.podWithClaim("broken", "broken");
  std::string seen;
  auto scheduler_says = [&] {
    auto got = c.env.admin().get(kube::resources::kPods, c.env.ns(), "broken");
    const json::Value* conds = got.ok() ? json::at(*got, {"status", "conditions"}) : nullptr;
    if (conds == nullptr || !conds->IsArray()) return false;
    for (const auto& cond : conds->GetArray()) {
      if (json::stringOr(cond, "type") != "PodScheduled") continue;
      seen = std::string(json::stringOr(cond, "reason")) + ": " +
             std::string(json::stringOr(cond, "message"));
      return seen.find("model") != std::string::npos;
    }
    return false;
  };
  eventually(scheduler_says, 90s, [&] { return "PodScheduled: " + seen; });
  INFO("kube-scheduler: " << seen);

  auto explained = c.explain("broken");
  CHECK_FALSE(explained["schedulable"].GetBool());
  CHECK_THAT(std::string(explained["error"].GetString()),
             Catch::Contains("model") && Catch::Contains("has() or the ? operator"));
  CHECK_FALSE(explained["nodeResults"][0]["fits"].GetBool());
}

TEST_CASE("on MIG-partitioned GPUs explain names the partition and VF the scheduler picks",
          "[e2e]") {
  AlignedCluster c("mig", 1, /*kubelet_plugin=*/false, /*mig=*/true);
  c.env.cp().applyYaml(
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: mig.nvidia.com}\n"
      "spec: {selectors: [{cel: {expression: \"device.driver == 'gpu.nvidia.com' && "
      "device.attributes['gpu.nvidia.com'].type == 'mig'\"}}]}\n");
  const std::string& node = c.names[0];
  // Other pods hold both 3g.20gb placements of gpu-0: its counters have no memory slice left
  // for another 3g.
  const auto& p3g = testing::a100MigProfiles()[2];
  for (int start : p3g.placements) {
    std::string name = "held-" + std::to_string(start);
    c.pods.claim(name,
                 "  devices:\n    requests:\n    - name: d\n      exactly:\n"
                 "        deviceClassName: mig.nvidia.com\n        selectors:\n"
                 "        - cel: {expression: 'device.attributes[\"gpu.nvidia.com\"].uuid == \"" +
                     node + "-" + testing::migDeviceName(0, p3g, start) + "\"'}\n");
    c.pods.podWithClaim(name, name);
    REQUIRE(c.pods.waitScheduled(name) == node);
  }
  c.pods.claim("mig-vf",
               "  devices:\n    requests:\n    - name: gpu\n      exactly:\n"
               "        deviceClassName: mig.nvidia.com\n        selectors:\n"
               "        - cel: {expression: 'device.attributes[\"gpu.nvidia.com\"].profile == "
               "\"3g.20gb\"'}\n    - name: vf\n      exactly:\n        deviceClassName: " +
                   kVfDriver +
                   "\n    constraints:\n    - requests: [gpu, vf]\n      matchAttribute: " + kRoot +
                   "\n");
  auto explained = c.explain("mig-vf");
  std::map<std::string, std::string> ours;  // request -> driver/pool/device
  for (const auto& n : explained["nodeResults"].GetArray()) {
    if (n["node"].GetString() != node) continue;  // the earlier cases' nodes are there too
    for (const auto& d : n["devices"].GetArray()) {
      ours[d["request"].GetString()] = std::string(d["driver"].GetString()) + "/" +
                                       d["pool"].GetString() + "/" + d["device"].GetString();
    }
  }
  REQUIRE(ours.size() == 2);
  CHECK(ours.at("gpu").find("/gpu-0-") == std::string::npos);
  c.pods.podWithClaim("inference", "mig-vf");
  REQUIRE(c.pods.waitScheduled("inference") == node);
  std::map<std::string, std::string> theirs;
  auto allocated = c.pods.claimOf("inference");
  REQUIRE(allocated.status.allocation);
  for (const auto& r : allocated.status.allocation->results) {
    theirs[r.request] = r.driver + "/" + r.pool + "/" + r.device;
  }
  CHECK(ours == theirs);
  // With the scheduler's pick held too, explain of another such claim names what is left.
  c.pods.claim("next",
               "  devices:\n    requests:\n    - name: gpu\n      exactly:\n"
               "        deviceClassName: mig.nvidia.com\n        allocationMode: All\n"
               "        selectors:\n        - cel: {expression: 'device.attributes[\""
               "gpu.nvidia.com\"].parentUUID == \"GPU-" +
                   node + "-gpu-0\"'}\n");
  auto reasons = reasonsFor(c.explain("next"), node);
  REQUIRE(reasons.size() == 1);
  CHECK_THAT(reasons[0], Catch::Contains("short of shared counters") &&
                             Catch::Contains("counter set gpu-0-counter-set has 0 of 40Gi memory "
                                             "left"));
}
