// The kubelet plugin of the agent, driven by a gRPC client acting as kubelet (messages encoded
// from kubelet's field numbers), against the real API server, the operator and the simulated
// kernel: registration, prepare/unprepare of claims shaped like the reference cluster's, CDI
// specs that validate against the CDI schema, claim status next to another driver's entry,
// vfio-pci binding and its undoing, a restart in the middle, and one bad claim among many.
#include <csignal>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/resource.h"
#include "base/files.h"
#include "base/json.h"
#include "base/strings.h"
#include "dra/cdi.h"
#include "host/apply.h"
#include "host/simulated_kernel.h"
#include "metrics/registry.h"
#include "node/state/local_state.h"
#include "support/cdi_schema.h"
#include "support/dra_objects.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/kubelet_client.h"
#include "support/metrics_text.h"
#include "support/operator_env.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::KubeletClaim;
using sriovdra::testing::KubeletClient;
using sriovdra::testing::OperatorEnv;

namespace {

const std::string kDriver(api::kDriverName);

// One node with the a100-reference server, the operator (with its defaults: Multus names
// openshift.io/<resourceName>, so multus mode works without flags), the agent serving the plugin in
// a kubelet directory in Multus mode (these tests prepare claims; attaching them in standalone mode
// is attach_test's), and the reference policies with `num_vfs`.
struct PluginEnv {
  explicit PluginEnv(int num_vfs = 1) : env("plugin") {
    op = env.startOperator();
    node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
    agent = startAgent();
    env.applyReferencePolicies();
    if (num_vfs != 1) setNumVfs(num_vfs);
    eventually([&] { return env.deviceCount(node) == 8 * static_cast<size_t>(num_vfs); }, 90s,
               [&] { return agent->logs(); });
  }

  std::unique_ptr<testing::OperatorProcess> startAgent(const std::string& mode = "multus") {
    return env.startAgent(node, "a100-reference", kubelet.path(), "",
                          {"--configuration-mode=" + mode});
  }

  testing::KubeletDirs dirs() const { return testing::KubeletDirs::under(kubelet.path()); }

  // Registers the plugin like kubelet does; returns the DRA endpoint.
  std::string registerPlugin() {
    auto info = KubeletClient::registerPlugin(dirs().registry, kDriver);
    REQUIRE(info.ok());
    return info->endpoint;
  }

  void setNumVfs(int n) {
    REQUIRE(env.admin()
                .patch(api::resources::kSriovNetworkNodePolicies, env.ns(), "cx6-vfs",
                       kube::PatchType::kMerge, R"({"spec":{"numVfs":)" + std::to_string(n) + "}}")
                .ok());
  }

  // A claim allocated on `on_node` with `results` and reserved for the pod `pod_uid`, with an
  // opaque VfConfig for the request "vf" when `vf_config` is not empty (JSON members).
  KubeletClaim createClaim(const std::string& name, const std::string& pod_uid,
                           const std::vector<testing::DeviceResult>& results,
                           const std::string& vf_config = "", const std::string& on_node = "") {
    std::string uid =
        testing::createAllocatedClaim(env.admin(), {.ns = env.ns(),
                                                    .name = name,
                                                    .node = on_node.empty() ? node : on_node,
                                                    .results = results,
                                                    .vf_config = vf_config,
                                                    .pod_name = "pod-" + name,
                                                    .pod_uid = pod_uid});
    return {env.ns(), uid, name};
  }

  std::optional<api::ResourceClaim> claim(const std::string& name) const {
    auto got = env.admin().get(api::resources::kResourceClaims, env.ns(), name);
    if (!got.ok()) return std::nullopt;
    auto c = api::ResourceClaim::decode(*got);
    return c.ok() ? std::optional(std::move(*c)) : std::nullopt;
  }

  void release(const KubeletClaim& c) { testing::releaseClaim(env.admin(), c.namespace_, c.name); }

  // The Blocked condition of the node, "" when it is not True.
  std::string blocked() const {
    auto s = env.nodeState(node);
    auto c = s ? api::findCondition(s->status.conditions, "Blocked") : nullptr;
    return c != nullptr && c->status == "True" ? c->reason + ": " + c->message : "";
  }

  // "" while it has none (between an unbind and a bind).
  std::string driverOf(const std::string& bdf) const {
    std::error_code ec;
    auto link = std::filesystem::read_symlink(
        env.sysfsRoot(node) + "/sys/bus/pci/devices/" + bdf + "/driver", ec);
    return link.filename().string();
  }

  testing::TempDir kubelet;
  OperatorEnv env;
  std::unique_ptr<testing::OperatorProcess> op;
  std::string node;
  std::unique_ptr<testing::OperatorProcess> agent;
};

std::optional<json::Document> readJson(const std::string& path) {
  auto text = readFile(path);
  if (!text.ok()) return std::nullopt;
  auto doc = json::parse(*text);
  return doc.ok() ? std::optional(std::move(*doc)) : std::nullopt;
}

std::vector<std::string> strings(const json::Value& array) {
  std::vector<std::string> out;
  for (const auto& v : array.GetArray()) out.push_back(v.GetString());
  return out;
}

}  // namespace

TEST_CASE("kubelet registers the plugin and prepares a claim shaped like the reference cluster's",
          "[plugin][integration]") {
  PluginEnv p;
  CHECK(p.agent->probeStatus("/readyz") == 500);  // not before kubelet registered it
  auto info = KubeletClient::registerPlugin(p.dirs().registry, kDriver);
  REQUIRE(info.ok());
  CHECK(info->type == "DRAPlugin");
  CHECK(info->name == kDriver);
  CHECK(info->endpoint == p.dirs().plugins + "/" + kDriver + "/dra.sock");
  CHECK(info->supported_versions == std::vector<std::string>{"v1.DRAPlugin", "v1beta1.DRAPlugin"});
  p.agent->waitReady();

  // The observed claim: a GPU from gpu.nvidia.com and VF 0000-11-00-1 from us, same pcieRoot.
  auto claim = p.createClaim("client-devices", "8f4829c3-6499-4f8f-b57f-edabd7f0282a",
                             {{"gpu", "gpu.nvidia.com", "gpu-3"}, {"vf", kDriver, "0000-11-00-1"}},
                             R"("ifName":"net1","netAttachDefName":"cx6-vf")");
  // The GPU driver prepared its device first and wrote its status entry.
  auto gpu_entry = kube::newObject(api::resources::kResourceClaims, p.env.ns(), claim.name);
  auto gpu_status = testing::yamlObject("devices: [{driver: gpu.nvidia.com, pool: " + p.node +
                                        ", device: gpu-3, data: {uuid: GPU-1}}]\n");
  // A deep copy: the parsed document owns its strings and goes away first.
  gpu_entry.AddMember("status", json::Value(gpu_status, gpu_entry.GetAllocator()),
                      gpu_entry.GetAllocator());
  REQUIRE(p.env.admin()
              .apply(api::resources::kResourceClaims, p.env.ns(), gpu_entry,
                     {.field_manager = "gpu.nvidia.com"}, "status")
              .ok());
  std::string journal_before = p.env.kernelJournal(p.node);

  auto prepared = KubeletClient::prepare(info->endpoint, "v1", {claim});
  REQUIRE(prepared.ok());
  REQUIRE(prepared->count(claim.uid) == 1);
  const auto& answer = prepared->at(claim.uid);
  CHECK(answer.error == "");
  REQUIRE(answer.devices.size() == 1);  // the GPU result is not ours
  CHECK(answer.devices[0].request_names == std::vector<std::string>{"vf"});
  CHECK(answer.devices[0].pool == p.node);
  CHECK(answer.devices[0].device == "0000-11-00-1");
  CHECK(answer.devices[0].cdi_device_ids ==
        std::vector<std::string>{
            "sriovnetwork.k8snetworkplumbingwg.io/vf=" + claim.uid + "-0000-11-00-1",
            "sriovnetwork.k8snetworkplumbingwg.io/vf=8f4829c3-6499-4f8f-b57f-edabd7f0282a"});

  auto spec = readJson(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid));
  REQUIRE(spec);
  CHECK(testing::cdiSchemaErrors(*spec) == "");
  const auto& dev = (*spec)["devices"][0];
  CHECK(std::string(dev["name"].GetString()) == claim.uid + "-0000-11-00-1");
  auto env_vars = strings(dev["containerEdits"]["env"]);
  CHECK_THAT(env_vars, Catch::VectorContains(
                           std::string("SRIOVNETWORK_VF_DEVICE_0000_11_00_1=0000:11:00.1")));
  CHECK_THAT(env_vars,
             Catch::VectorContains(std::string("SRIOVNETWORK_NET_ATTACH_DEF_NAME=cx6-vf")));
  std::vector<std::string> nodes;
  for (const auto& n : dev["containerEdits"]["deviceNodes"].GetArray()) {
    nodes.push_back(n["path"].GetString());
  }
  auto uverbs = std::find_if(nodes.begin(), nodes.end(), [](const std::string& n) {
    return n.rfind("/dev/infiniband/uverbs", 0) == 0;
  });
  CHECK(uverbs != nodes.end());
  CHECK_THAT(nodes, Catch::VectorContains(std::string("/dev/infiniband/rdma_cm")));
  auto pod_spec =
      readJson(p.dirs().cdi + "/" + dra::cdiSpecFileName("8f4829c3-6499-4f8f-b57f-edabd7f0282a"));
  REQUIRE(pod_spec);
  CHECK(testing::cdiSchemaErrors(*pod_spec) == "");
  // The reference driver's variable and the SR-IOV network device plugin's for the resource, its
  // _INFO with the rdma part the device plugin gave an RDMA VF.
  CHECK(strings((*pod_spec)["devices"][0]["containerEdits"]["env"]) ==
        std::vector<std::string>{
            "SRIOVNETWORK_PCI_ADDRESSES=0000:11:00.1",
            "PCIDEVICE_OPENSHIFT_IO_CX6_VFS=0000:11:00.1",
            R"(PCIDEVICE_OPENSHIFT_IO_CX6_VFS_INFO={"0000:11:00.1":{"generic":{"deviceID":)"
            R"("0000:11:00.1"},"rdma":{"issm":"/dev/infiniband/issm17","rdma_cm":)"
            R"("/dev/infiniband/rdma_cm","rdma_dev":"mlx5_17","umad":"/dev/infiniband/umad17",)"
            R"("uverbs":"/dev/infiniband/uverbs17"}}})"});
  // Multus reads the device-info file named after k8s.cni.cncf.io/resourceName and deviceID.
  auto info_file =
      readJson(p.dirs().device_info + "/openshift.io-cx6_vfs-0000:11:00.1-device.json");
  REQUIRE(info_file);
  CHECK(std::string((*info_file)["type"].GetString()) == "pci");
  CHECK(std::string((*info_file)["version"].GetString()) == "1.1.0");
  CHECK(std::string((*info_file)["pci"]["pci-address"].GetString()) == "0000:11:00.1");
  CHECK_THAT(std::string((*info_file)["pci"]["rdma-device"].GetString()),
             Catch::StartsWith("mlx5_"));

  // Claim status: our entry next to the GPU driver's.
  std::optional<api::ResourceClaim> c;
  eventually(
      [&] { return (c = p.claim(claim.name)) && c->status.devices.size() == 2; }, 30s,
      [&] {
        auto raw = p.env.admin().get(api::resources::kResourceClaims, p.env.ns(), claim.name);
        return (raw.ok() ? json::dump(*raw) : raw.status().toString()) + "\n" + p.agent->logs();
      });
  for (const auto& d : c->status.devices) {
    if (d.driver == "gpu.nvidia.com") {
      CHECK(d.data_json == R"({"uuid":"GPU-1"})");
      continue;
    }
    CHECK(d.driver == kDriver);
    CHECK(d.pool == p.node);
    CHECK(d.device == "0000-11-00-1");
    REQUIRE(d.network_data);
    CHECK(d.network_data->interface_name == "net1");
    auto data = json::parse(d.data_json);
    REQUIRE(data.ok());
    CHECK(std::string((*data)["vfConfig"]["ifName"].GetString()) == "net1");
    CHECK(std::string((*data)["vfConfig"]["kind"].GetString()) == "VfConfig");
  }

  std::string metrics = p.agent->metrics();
  CHECK(testing::sampleValue(metrics, "sriov_dra_prepared_claims") == 1);
  CHECK(testing::sampleValue(metrics,
                             "sriov_dra_kubelet_plugin_claims_total{operation=\"prepare\","
                             "result=\"success\"}") == 1);
  CHECK(testing::sampleValue(metrics,
                             "sriov_dra_kubelet_plugin_request_duration_seconds_count{"
                             "operation=\"prepare\"}") == 1);

  // The same claim again, through v1beta1: the same answer, nothing done to the host.
  auto again = KubeletClient::prepare(info->endpoint, "v1beta1", {claim});
  REQUIRE(again.ok());
  CHECK(again->at(claim.uid).devices[0].cdi_device_ids == answer.devices[0].cdi_device_ids);
  CHECK(p.env.kernelJournal(p.node) == journal_before);

  auto undone = KubeletClient::unprepare(info->endpoint, "v1", {claim});
  REQUIRE(undone.ok());
  CHECK(undone->at(claim.uid) == "");
  CHECK_FALSE(std::filesystem::exists(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid)));
  CHECK_FALSE(std::filesystem::exists(
      p.dirs().cdi + "/" + dra::cdiSpecFileName("8f4829c3-6499-4f8f-b57f-edabd7f0282a")));
  CHECK_FALSE(std::filesystem::exists(p.dirs().device_info +
                                      "/openshift.io-cx6_vfs-0000:11:00.1-device.json"));
  // Unpreparing what is not prepared succeeds.
  const std::string never = "6a1d0c2e-0000-4000-8000-00000000abcd";
  auto unknown = KubeletClient::unprepare(info->endpoint, "v1beta1", {{p.env.ns(), never, "x"}});
  REQUIRE(unknown.ok());
  CHECK(unknown->at(never) == "");
  metrics = p.agent->metrics();
  CHECK(testing::sampleValue(metrics, "sriov_dra_prepared_claims") == 0);
  CHECK(testing::sampleValue(metrics,
                             "sriov_dra_kubelet_plugin_claims_total{operation=\"unprepare\","
                             "result=\"success\"}") == 2);
  p.agent->stop(SIGTERM);
  CHECK_FALSE(std::filesystem::exists(info->endpoint));
  CHECK_FALSE(std::filesystem::exists(p.dirs().registry + "/" + kDriver + "-reg.sock"));
}

TEST_CASE("a device has its advertised attributes before the node's slice cache lists it",
          "[plugin][integration]") {
  PluginEnv p;
  // The agent's own slice write reaches its cache a moment after the API server shows it; a
  // claim allocated in that moment is the case of a node whose cache has no slices at all.
  p.agent->stop(SIGTERM);
  for (const auto& s : p.env.slicesOf(p.node)) {
    REQUIRE(p.env.admin().remove(api::resources::kResourceSlices, "", s.metadata.name).isOk());
  }
  REQUIRE(p.env.slicesOf(p.node).empty());
  node::LocalState local(
      p.env.cp().client(),
      {.driver_name = std::string(kDriver), .node_name = p.node, .namespace_ = p.env.ns()});
  local.start();
  REQUIRE(local.waitForSync(60s, std::stop_token()));
  auto device = local.advertised("0000-11-00-1");
  REQUIRE(device);
  auto resource = device->attributes.find(std::string(api::attr::kCniResourceName));
  REQUIRE(resource != device->attributes.end());
  CHECK(resource->second == api::AttributeValue::ofString("openshift.io/cx6_vfs"));
  CHECK_FALSE(local.advertised("0000-99-00-1"));
  local.stop();
}

TEST_CASE("a VF allocated before it stopped being advertised is still prepared",
          "[plugin][integration]") {
  PluginEnv p;
  std::string endpoint = p.registerPlugin();
  p.agent->waitReady();
  // The scheduler allocated the VF; then, before the pod started, the SriovResourcePolicy that
  // advertised it went away and the agent withdrew every device.
  auto claim = p.createClaim("late", "5a0c1d2e-0000-4000-8000-000000000001",
                             {{"vf", kDriver, "0000-11-00-1"}},
                             R"("ifName":"net1","netAttachDefName":"cx6-vf")");
  REQUIRE(p.env.admin()
              .remove(api::resources::kSriovResourcePolicies, p.env.ns(), "cx6-advertise-vfs")
              .isOk());
  eventually([&] { return p.env.deviceCount(p.node) == 0; }, 60s, [&] { return p.agent->logs(); });

  auto prepared = KubeletClient::prepare(endpoint, "v1", {claim});
  REQUIRE(prepared.ok());
  const auto& answer = prepared->at(claim.uid);
  CHECK(answer.error == "");
  REQUIRE(answer.devices.size() == 1);
  CHECK(answer.devices[0].device == "0000-11-00-1");
  auto spec = readJson(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid));
  REQUIRE(spec);
  CHECK_THAT(
      strings((*spec)["devices"][0]["containerEdits"]["env"]),
      Catch::VectorContains(std::string("SRIOVNETWORK_VF_DEVICE_0000_11_00_1=0000:11:00.1")));
  CHECK_THAT(p.agent->logs(), Catch::Contains("no longer advertised"));

  // A device the node never had is still refused, saying so.
  auto ghost = p.createClaim("ghost", "5a0c1d2e-0000-4000-8000-000000000002",
                             {{"vf", kDriver, "0000-99-00-1"}});
  auto refused = KubeletClient::prepare(endpoint, "v1", {ghost});
  REQUIRE(refused.ok());
  CHECK_THAT(refused->at(ghost.uid).error,
             Catch::Contains("device 0000-99-00-1 is not a VF of node " + p.node));

  auto undone = KubeletClient::unprepare(endpoint, "v1", {claim});
  REQUIRE(undone.ok());
  CHECK(undone->at(claim.uid) == "");
  p.release(claim);
  p.release(ghost);
}

TEST_CASE("vfio-pci rebinds the VF until unprepare, also across an agent killed in between",
          "[plugin][integration]") {
  PluginEnv p;
  std::string endpoint = p.registerPlugin();
  auto claim = p.createClaim("dpdk", "pod-dpdk", {{"vf", kDriver, "0000-0e-00-1"}},
                             R"("driver":"vfio-pci")");
  auto prepared = KubeletClient::prepare(endpoint, "v1", {claim});
  REQUIRE(prepared.ok());
  REQUIRE(prepared->at(claim.uid).error == "");
  CHECK(p.driverOf("0000:0e:00.1") == "vfio-pci");
  auto spec = readJson(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid));
  REQUIRE(spec);
  CHECK(testing::cdiSchemaErrors(*spec) == "");
  std::vector<std::string> nodes;
  for (const auto& n : (*spec)["devices"][0]["containerEdits"]["deviceNodes"].GetArray()) {
    nodes.push_back(n["path"].GetString());
  }
  REQUIRE(nodes.size() == 2);
  CHECK_THAT(nodes[0], Catch::StartsWith("/dev/vfio/"));
  CHECK(nodes[1] == "/dev/vfio/vfio");

  SECTION("unprepare restores the original driver and removes the spec") {
    auto undone = KubeletClient::unprepare(endpoint, "v1", {claim});
    REQUIRE(undone.ok());
    CHECK(undone->at(claim.uid) == "");
    CHECK(p.driverOf("0000:0e:00.1") == "mlx5_core");
    CHECK(readFile(p.env.sysfsRoot(p.node) + "/sys/bus/pci/devices/0000:0e:00.1/driver_override")
              .value() == "(null)\n");  // nothing sticky left behind
    CHECK_FALSE(std::filesystem::exists(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid)));
  }
  SECTION("a claim recorded prepared whose host lost it (a reboot) is prepared again") {
    // What a reboot does: /var/run/cdi is empty and the VF is on its default driver again.
    std::filesystem::remove(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid));
    host::SimulatedKernel kernel(p.env.sysfsRoot(p.node));
    REQUIRE(host::bindDriver(kernel, "0000:0e:00.1", "", "vfio-pci").isOk());
    REQUIRE(p.driverOf("0000:0e:00.1") == "mlx5_core");
    auto again = KubeletClient::prepare(endpoint, "v1", {claim});
    REQUIRE(again.ok());
    CHECK(again->at(claim.uid).error == "");
    CHECK(p.driverOf("0000:0e:00.1") == "vfio-pci");
    CHECK(std::filesystem::exists(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid)));
    CHECK_THAT(p.agent->logs(), Catch::Contains("the host lost what prepare made"));
    auto undone = KubeletClient::unprepare(endpoint, "v1", {claim});
    REQUIRE(undone.ok());
    CHECK(undone->at(claim.uid) == "");
    CHECK(p.driverOf("0000:0e:00.1") == "mlx5_core");
  }
  SECTION("a claim cannot pick a kernel driver the administrator did not allow") {
    auto stub = p.createClaim("stub", "pod-stub", {{"vf", kDriver, "0000-11-00-1"}},
                              R"("driver":"pci-stub")");
    auto refused = KubeletClient::prepare(endpoint, "v1", {stub});
    REQUIRE(refused.ok());
    CHECK_THAT(refused->at(stub.uid).error, Catch::Contains("driver \"pci-stub\" is not allowed") &&
                                                Catch::Contains("--allowed-vf-drivers"));
    CHECK(p.driverOf("0000:11:00.1") == "mlx5_core");
    CHECK_FALSE(std::filesystem::exists(p.dirs().cdi + "/" + dra::cdiSpecFileName(stub.uid)));
  }
  SECTION("after SIGKILL and restart the VF stays protected, and unprepare still restores it") {
    p.agent->stop(SIGKILL);
    p.agent = p.startAgent();
    endpoint = p.registerPlugin();  // the stale sockets were replaced
    p.agent->waitReady();
    size_t journal_mark = p.env.kernelJournal(p.node).size();
    p.setNumVfs(2);  // would recreate the VFs of 0000:0e:00.0, including the prepared one
    eventually(
        [&] {
          auto s = p.env.nodeState(p.node);
          auto blocked = s ? api::findCondition(s->status.conditions, "Blocked") : nullptr;
          return blocked && blocked->status == "True" &&
                 blocked->message.find(p.env.ns() + "/dpdk") != std::string::npos;
        },
        60s, [&] { return p.agent->logs(); });
    CHECK(p.driverOf("0000:0e:00.1") == "vfio-pci");
    CHECK(p.env.kernelJournal(p.node).substr(journal_mark).find("0000:0e:00.0/sriov_numvfs") ==
          std::string::npos);

    auto undone = KubeletClient::unprepare(endpoint, "v1", {claim});
    REQUIRE(undone.ok());
    CHECK(undone->at(claim.uid) == "");
    CHECK_THAT(p.env.kernelJournal(p.node).substr(journal_mark),
               Catch::Contains("drivers/vfio-pci/unbind 0000:0e:00.1 -> ok"));
    // Kubernetes releases the claim once the pod is gone; until then its VF counts as in use.
    p.release(claim);
    eventually([&] { return p.env.deviceCount(p.node) == 16; }, 60s,
               [&] { return p.agent->logs(); });
  }
  SECTION("the node's policy removed under the prepared VF: its PF waits (Blocked) for the claim") {
    size_t journal_mark = p.env.kernelJournal(p.node).size();
    REQUIRE(p.env.admin()
                .remove(api::resources::kSriovNetworkNodePolicies, p.env.ns(), "cx6-vfs")
                .isOk());
    eventually([&] { return p.blocked().find(p.env.ns() + "/dpdk") != std::string::npos; }, 60s,
               [&] { return p.blocked() + "\n" + p.agent->logs(); });
    CHECK(p.driverOf("0000:0e:00.1") == "vfio-pci");
    std::string journal = p.env.kernelJournal(p.node).substr(journal_mark);
    CHECK(journal.find("0000:0e:00.0/sriov_numvfs") == std::string::npos);
    CHECK_THAT(journal, Catch::Contains("0000:c7:00.0/sriov_numvfs 0 -> ok"));  // the others go

    auto undone = KubeletClient::unprepare(endpoint, "v1", {claim});
    REQUIRE(undone.ok());
    CHECK(undone->at(claim.uid) == "");
    p.release(claim);
    eventually(
        [&] {
          return p.env.kernelJournal(p.node)
                     .substr(journal_mark)
                     .find("0000:0e:00.0/sriov_numvfs 0 -> ok") != std::string::npos;
        },
        60s, [&] { return p.blocked() + "\n" + p.agent->logs(); });
    // The status follows the pass that reset the PF.
    eventually([&] { return p.blocked().empty(); }, 60s, [&] { return p.blocked(); });
  }
  SECTION(
      "a corrupt checkpoint hides no VF in use: the API's claims keep it, unprepare cleans up") {
    p.agent->stop(SIGKILL);
    std::string path = p.env.stateDir(p.node) + "/checkpoint.json";
    REQUIRE(writeFileAtomic(path, R"({"version":1,"claims":{)", 0600).isOk());  // torn
    p.agent = p.startAgent();
    endpoint = p.registerPlugin();
    p.agent->waitReady();
    size_t journal_mark = p.env.kernelJournal(p.node).size();
    p.setNumVfs(2);
    eventually([&] { return p.blocked().find(p.env.ns() + "/dpdk") != std::string::npos; }, 60s,
               [&] { return p.blocked() + "\n" + p.agent->logs(); });
    CHECK(p.driverOf("0000:0e:00.1") == "vfio-pci");
    std::string journal = p.env.kernelJournal(p.node).substr(journal_mark);
    CHECK(journal.find("0000:0e:00.0/sriov_numvfs") == std::string::npos);
    CHECK_THAT(journal,
               Catch::Contains("0000:c7:00.0/sriov_numvfs 2 -> ok"));  // the others changed

    // The checkpoint forgot the claim; its CDI spec on disk says what to undo.
    std::string claim_spec = p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid);
    std::string pod_spec = p.dirs().cdi + "/" + dra::cdiSpecFileName("pod-dpdk");
    REQUIRE(std::filesystem::exists(claim_spec));
    REQUIRE(std::filesystem::exists(pod_spec));
    auto undone = KubeletClient::unprepare(endpoint, "v1", {claim});
    REQUIRE(undone.ok());
    CHECK(undone->at(claim.uid) == "");
    CHECK(p.driverOf("0000:0e:00.1") == "mlx5_core");
    CHECK_FALSE(std::filesystem::exists(claim_spec));
    CHECK_FALSE(std::filesystem::exists(pod_spec));
    p.release(claim);
    eventually([&] { return p.env.deviceCount(p.node) == 16; }, 60s,
               [&] { return p.agent->logs(); });
    CHECK(p.blocked() == "");
  }
  SECTION("while the claims cannot be read, no VF is destroyed: InUseUnknown, then it goes on") {
    // The agent's ServiceAccount loses `list` on ResourceClaims (a trimmed copy of its role).
    const std::string binding = "sriov-dra-agent-" + p.env.ns() + "-sa-sriov-dra-agent";
    const std::string trimmed = "sriov-dra-agent-no-list-" + p.env.ns();
    auto role = p.env.admin().get(kube::resources::kClusterRoles, "", "sriov-dra-agent");
    REQUIRE(role.ok());
    json::Document copy(rapidjson::kObjectType);
    copy.CopyFrom(*role, copy.GetAllocator());
    copy["metadata"].SetObject();
    copy["metadata"].AddMember("name", json::str(trimmed, copy.GetAllocator()),
                               copy.GetAllocator());
    for (auto& rule : copy["rules"].GetArray()) {
      if (rule["resources"][0] != "resourceclaims") continue;
      rule["verbs"].SetArray().PushBack("get", copy.GetAllocator());
    }
    REQUIRE(p.env.admin().create(kube::resources::kClusterRoles, "", copy).ok());
    REQUIRE(p.env.admin().remove(kube::resources::kClusterRoleBindings, "", binding).isOk());
    p.env.cp().bindRole("ClusterRole", trimmed,
                        "system:serviceaccount:" + p.env.ns() + ":sriov-dra-agent", p.env.ns());
    size_t journal_mark = p.env.kernelJournal(p.node).size();
    p.setNumVfs(2);
    eventually([&] { return p.blocked().rfind("InUseUnknown: ", 0) == 0; }, 60s,
               [&] { return p.agent->logs(); });
    CHECK_THAT(p.blocked(), Catch::Contains("forbidden") && Catch::Contains("resourceclaims"));
    auto event = p.env.findEvent("InUseUnknown", "Warning", p.node);
    REQUIRE(event);
    CHECK_THAT(*event, Catch::Contains("changes that destroy or rebind VFs wait"));
    CHECK(p.env.kernelJournal(p.node).substr(journal_mark).find("sriov_numvfs") ==
          std::string::npos);

    // The permission comes back: the other PFs change, the prepared VF's PF stays blocked.
    REQUIRE(p.env.admin()
                .remove(kube::resources::kClusterRoleBindings, "",
                        trimmed + "-" + p.env.ns() + "-sa-sriov-dra-agent")
                .isOk());
    p.env.cp().bindRole("ClusterRole", "sriov-dra-agent",
                        "system:serviceaccount:" + p.env.ns() + ":sriov-dra-agent", p.env.ns());
    eventually([&] { return p.env.deviceCount(p.node) == 15; }, 90s,
               [&] { return p.blocked() + "\n" + p.agent->logs(); });
    CHECK_THAT(p.blocked(), Catch::StartsWith("VfsInUse: ") && Catch::Contains("/dpdk"));
    REQUIRE(p.env.admin().remove(kube::resources::kClusterRoles, "", trimmed).isOk());
  }
  SECTION("a checkpoint changed on disk is reported and kept aside, never silently dropped") {
    p.agent->stop(SIGKILL);
    std::string path = p.env.stateDir(p.node) + "/checkpoint.json";
    auto text = readFile(path);
    REQUIRE(text.ok());
    auto pos = text->find("pod-dpdk");
    REQUIRE(pos != std::string::npos);
    std::string changed = *text;
    changed.replace(pos, 8, "pod-xxxx");  // valid JSON, wrong checksum
    REQUIRE(writeFileAtomic(path, changed, 0600).isOk());
    p.agent = p.startAgent();
    std::optional<std::string> event;
    eventually(
        [&] {
          return (event = p.env.findEvent("CheckpointUnreadable", "Warning", p.node)).has_value();
        },
        30s, [&] { return p.agent->logs(); });
    CHECK_THAT(*event, Catch::Contains("checksum"));
    CHECK_THAT(*event, Catch::Contains(path + ".corrupt-"));
    CHECK_THAT(*event, Catch::Contains("checked by hand"));
    CHECK_FALSE(std::filesystem::exists(path));
    size_t aside = 0;
    for (const auto& f : std::filesystem::directory_iterator(p.env.stateDir(p.node))) {
      if (f.path().filename().string().rfind("checkpoint.json.corrupt-", 0) == 0) {
        ++aside;
        CHECK(readFile(f.path().string()).value() == changed);
      }
    }
    CHECK(aside == 1);
    p.registerPlugin();  // the agent keeps serving
    p.agent->waitReady();
  }
}

TEST_CASE("a vfio-pci group's VF prepared as it was is on vfio-pci again after a reboot",
          "[plugin][integration]") {
  PluginEnv p;
  std::string endpoint = p.registerPlugin();
  REQUIRE(p.env.admin()
              .patch(api::resources::kSriovNetworkNodePolicies, p.env.ns(), "cx6-vfs",
                     kube::PatchType::kMerge,
                     R"({"spec":{"deviceType":"vfio-pci","isRdma":false}})")
              .ok());
  eventually([&] { return p.driverOf("0000:11:00.1") == "vfio-pci"; }, 60s,
             [&] {
               auto st = p.env.admin().get(api::resources::kSriovNodeStates, p.env.ns(), p.node);
               return st.ok() ? json::dump(*st) : st.status().message();
             });
  auto claim = p.createClaim("group", "pod-group", {{"vf", kDriver, "0000-11-00-1"}});
  auto prepared = KubeletClient::prepare(endpoint, "v1", {claim});
  REQUIRE(prepared.ok());
  REQUIRE(prepared->at(claim.uid).error == "");
  // The reboot: the VF made again on its kernel driver, /var/run/cdi empty (or, were it kept, the
  // driver alone lost); the agent leaves a prepared VF alone, so only preparing it again can give
  // the pod its device back.
  host::SimulatedKernel kernel(p.env.sysfsRoot(p.node));
  for (bool cdi_kept : {true, false}) {
    INFO("CDI spec kept: " << cdi_kept);
    if (!cdi_kept) std::filesystem::remove(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid));
    REQUIRE(host::bindDriver(kernel, "0000:11:00.1", "", "vfio-pci").isOk());
    auto again = KubeletClient::prepare(endpoint, "v1", {claim});
    REQUIRE(again.ok());
    CHECK(again->at(claim.uid).error == "");
    CHECK(p.driverOf("0000:11:00.1") == "vfio-pci");
    CHECK(std::filesystem::exists(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid)));
  }
  auto undone = KubeletClient::unprepare(endpoint, "v1", {claim});
  REQUIRE(undone.ok());
  CHECK(undone->at(claim.uid) == "");
  CHECK(p.driverOf("0000:11:00.1") == "vfio-pci");  // its group's driver
}

TEST_CASE("the SR-IOV DRA driver's drivers pattern: a filter's vfio-pci binds its VFs at prepare",
          "[plugin][integration]") {
  PluginEnv p;
  std::string endpoint = p.registerPlugin();
  // The driver's README: `drivers: [vfio-pci]` on the filter; its VFs are on mlx5_core.
  REQUIRE(p.env.admin()
              .patch(api::resources::kSriovResourcePolicies, p.env.ns(), "cx6-advertise-vfs",
                     kube::PatchType::kJson,
                     R"([{"op":"add","path":"/spec/configs/0/resourceFilters/0/drivers",)"
                     R"("value":["vfio-pci"]}])")
              .ok());
  auto driversOf = [&](const std::string& device) {
    auto state = p.env.nodeState(p.node);
    if (!state) return std::string("no SriovNodeState");
    for (const auto& d : state->spec.devices) {
      if (d.name == device) return sriovdra::join(d.drivers, ",");
    }
    return std::string("not in spec");
  };
  // The agent prepares from its own cache of the spec: wait until it reports that generation.
  auto applied = [&] {
    auto state = p.env.nodeState(p.node);
    return state && state->status.observed_generation == state->metadata.generation;
  };
  eventually([&] { return driversOf("0000-11-00-1") == "vfio-pci" && applied(); }, 60s,
             [&] { return driversOf("0000-11-00-1"); });
  CHECK(p.env.deviceCount(p.node) == 8);  // advertised although none is on vfio-pci

  // A claim that names no driver gets the filter's; one that names another is refused.
  auto plain = p.createClaim("plain", "pod-plain", {{"vf", kDriver, "0000-11-00-1"}});
  auto other = p.createClaim("other", "pod-other", {{"vf", kDriver, "0000-0e-00-1"}},
                             R"("driver":"default")");
  auto prepared = KubeletClient::prepare(endpoint, "v1", {plain, other});
  REQUIRE(prepared.ok());
  CHECK(prepared->at(plain.uid).error == "");
  CHECK(p.driverOf("0000:11:00.1") == "vfio-pci");
  CHECK_THAT(prepared->at(other.uid).error,
             Catch::Contains("device 0000-0e-00-1 is for drivers [vfio-pci]") &&
                 Catch::Contains("not \"default\""));
  CHECK(p.driverOf("0000:0e:00.1") == "mlx5_core");

  // Bound to vfio-pci, the VF stays advertised: its driver does not move it out of the slice.
  auto reported = [&] {
    auto state = p.env.nodeState(p.node);
    if (!state) return std::string();
    for (const auto& pf : state->status.interfaces) {
      for (const auto& vf : pf.vfs) {
        if (vf.pci_address == "0000:11:00.1") return vf.driver;
      }
    }
    return std::string();
  };
  eventually([&] { return reported() == "vfio-pci"; }, 60s, [&] { return reported(); });
  CHECK(driversOf("0000-11-00-1") == "vfio-pci");
  CHECK(p.env.deviceCount(p.node) == 8);

  auto undone = KubeletClient::unprepare(endpoint, "v1", {plain});
  REQUIRE(undone.ok());
  CHECK(undone->at(plain.uid) == "");
  CHECK(p.driverOf("0000:11:00.1") == "mlx5_core");
}

TEST_CASE("--enable-device-metadata mounts a KEP-5304 metadata file per request into the pod",
          "[plugin][integration]") {
  PluginEnv p;
  p.agent->stop(SIGTERM);
  p.agent = p.env.startAgent(p.node, "a100-reference", p.kubelet.path(), "",
                             {"--configuration-mode=multus", "--enable-device-metadata"});
  std::string endpoint = p.registerPlugin();
  p.agent->waitReady();
  auto claim = p.createClaim("worker-gpu-nic-x7k2", "pod-worker", {{"vf", kDriver, "0000-11-00-1"}},
                             R"("ifName":"net1","netAttachDefName":"cx6-vf")");
  // Made from a template: the pod's name for the claim is in this annotation.
  REQUIRE(p.env.admin()
              .patch(api::resources::kResourceClaims, p.env.ns(), claim.name,
                     kube::PatchType::kMerge,
                     R"({"metadata":{"annotations":{"resource.kubernetes.io/pod-claim-name":)"
                     R"("gpu-nic"}}})")
              .ok());
  auto prepared = KubeletClient::prepare(endpoint, "v1", {claim});
  REQUIRE(prepared.ok());
  const auto& answer = prepared->at(claim.uid);
  REQUIRE(answer.error == "");
  REQUIRE(answer.devices.size() == 1);
  const std::string id = kDriver + "/metadata=" + claim.uid + "_vf";
  CHECK_THAT(answer.devices[0].cdi_device_ids, Catch::VectorContains(id));

  // The CDI spec kubelet hands to the runtime mounts the file where the pod looks for it.
  auto spec = readJson(p.dirs().cdi + "/" + kDriver + "_metadata_" + claim.uid + "_vf.json");
  REQUIRE(spec);
  CHECK(testing::cdiSchemaErrors(*spec) == "");
  const auto& mount = (*spec)["devices"][0]["containerEdits"]["mounts"][0];
  CHECK(std::string(mount["containerPath"].GetString()) ==
        "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu-nic/vf/" +
            kDriver + "-metadata.json");
  std::string host = mount["hostPath"].GetString();
  CHECK(host == p.kubelet.path() + "/plugins/" + kDriver + "/dra-device-metadata/" + p.env.ns() +
                    "_worker-gpu-nic-x7k2/vf/metadata.json");
  auto stream = readFile(host);
  REQUIRE(stream.ok());
  auto first = json::parse(stream->substr(0, stream->find('\n')));
  REQUIRE(first.ok());
  CHECK(json::stringOr(*first, "apiVersion") == "metadata.resource.k8s.io/v1beta1");
  CHECK(json::stringOr((*first)["metadata"], "uid") == claim.uid);
  const auto& device = (*first)["requests"][0]["devices"][0];
  CHECK(json::stringOr(device, "pool") == p.node);
  CHECK(json::stringOr(device["attributes"]["resource.kubernetes.io/pciBusID"], "string") ==
        "0000:11:00.1");

  // Asked again (kubelet restarted), the same answer; unprepare removes both files.
  auto again = KubeletClient::prepare(endpoint, "v1", {claim});
  REQUIRE(again.ok());
  CHECK(again->at(claim.uid).devices[0].cdi_device_ids == answer.devices[0].cdi_device_ids);
  auto undone = KubeletClient::unprepare(endpoint, "v1", {claim});
  REQUIRE(undone.ok());
  CHECK(undone->at(claim.uid) == "");
  CHECK_FALSE(std::filesystem::exists(host));
  CHECK_FALSE(std::filesystem::exists(p.dirs().cdi + "/" + kDriver + "_metadata_" + claim.uid +
                                      "_vf.json"));

  // A claim the checkpoint lost: its metadata CDI spec says where its file is.
  auto lost = p.createClaim("direct", "pod-direct", {{"vf", kDriver, "0000-0e-00-1"}},
                            R"("ifName":"net1","netAttachDefName":"cx6-vf")");
  prepared = KubeletClient::prepare(endpoint, "v1", {lost});
  REQUIRE(prepared.ok());
  REQUIRE(prepared->at(lost.uid).error == "");
  std::string lost_dir =
      p.kubelet.path() + "/plugins/" + kDriver + "/dra-device-metadata/" + p.env.ns() + "_direct";
  REQUIRE(std::filesystem::exists(lost_dir + "/vf/metadata.json"));
  p.agent->stop(SIGKILL);
  REQUIRE(writeFileAtomic(p.env.stateDir(p.node) + "/checkpoint.json", R"({"version":1,)", 0600)
              .isOk());
  p.agent = p.env.startAgent(p.node, "a100-reference", p.kubelet.path(), "",
                             {"--configuration-mode=multus", "--enable-device-metadata"});
  endpoint = p.registerPlugin();
  p.agent->waitReady();
  undone = KubeletClient::unprepare(endpoint, "v1", {lost});
  REQUIRE(undone.ok());
  CHECK(undone->at(lost.uid) == "");
  CHECK_FALSE(std::filesystem::exists(lost_dir));
  CHECK_FALSE(
      std::filesystem::exists(p.dirs().cdi + "/" + kDriver + "_metadata_" + lost.uid + "_vf.json"));
}

TEST_CASE("in standalone mode a VF that stays a netdev needs a NetworkAttachmentDefinition",
          "[plugin][integration]") {
  PluginEnv p;
  p.agent->stop(SIGTERM);
  p.agent = p.startAgent("standalone");
  std::string endpoint = p.registerPlugin();
  p.agent->waitReady();
  std::vector<std::string> vfs;
  for (const auto& s : p.env.slicesOf(p.node)) {
    for (const auto& d : s.spec.devices) vfs.push_back(d.name);
  }
  REQUIRE(vfs.size() >= 4);
  auto bare = p.createClaim("bare", "pod-bare", {{"vf", kDriver, vfs[0]}});
  auto named = p.createClaim("named", "pod-named", {{"vf", kDriver, vfs[1]}}, R"("ifName":"net1")");
  auto nad = p.createClaim("nad", "pod-nad", {{"vf", kDriver, vfs[2]}},
                           R"("ifName":"net1","netAttachDefName":"cx6-vf")");
  auto dpdk =
      p.createClaim("dpdk", "pod-dpdk", {{"vf", kDriver, vfs[3]}}, R"("driver":"vfio-pci")");
  auto prepared = KubeletClient::prepare(endpoint, "v1", {bare, named, nad, dpdk});
  REQUIRE(prepared.ok());
  for (const auto& refused : {bare, named}) {
    INFO(refused.name);
    CHECK_THAT(prepared->at(refused.uid).error,
               Catch::Contains("request vf: device " + vfs[refused.name == "bare" ? 0 : 1] +
                               " stays a network interface, but its VfConfig names no "
                               "netAttachDefName") &&
                   Catch::Contains("Name one of namespace " + p.env.ns()) &&
                   Catch::Contains("--configuration-mode=multus"));
    CHECK(prepared->at(refused.uid).devices.empty());
    CHECK_FALSE(std::filesystem::exists(p.dirs().cdi + "/" + dra::cdiSpecFileName(refused.uid)));
  }
  CHECK(prepared->at(nad.uid).error == "");
  CHECK(prepared->at(dpdk.uid).error == "");
  CHECK(prepared->at(dpdk.uid).devices.size() == 1);
}

TEST_CASE("50 claims in one call are prepared; a bad claim fails alone and says why",
          "[plugin][integration]") {
  PluginEnv p(/*num_vfs=*/8);  // 64 VFs
  std::string endpoint = p.registerPlugin();
  std::vector<std::string> vfs;
  for (const auto& s : p.env.slicesOf(p.node)) {
    for (const auto& d : s.spec.devices) vfs.push_back(d.name);
  }
  REQUIRE(vfs.size() == 64);
  std::vector<KubeletClaim> claims;
  claims.reserve(55);
  for (int i = 0; i < 50; ++i) {
    claims.push_back(p.createClaim("many-" + std::to_string(i), "pod-" + std::to_string(i),
                                   {{"vf", kDriver, vfs[static_cast<size_t>(i)]}}));
  }
  auto elsewhere =
      p.createClaim("elsewhere", "pod-x", {{"vf", kDriver, vfs[60]}}, "", "other-node");
  auto unallocated = p.env.admin().create(
      api::resources::kResourceClaims, p.env.ns(),
      testing::yamlObject("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: "
                          "{name: pending}\nspec: {devices: {requests: [{name: vf, exactly: "
                          "{deviceClassName: sriovnetwork.k8snetworkplumbingwg.io}}]}}\n"));
  REQUIRE(unallocated.ok());
  KubeletClaim pending{p.env.ns(), (*unallocated)["metadata"]["uid"].GetString(), "pending"};
  auto malformed = p.createClaim("malformed", "pod-y", {{"vf", kDriver, vfs[61]}},
                                 R"("ifName":"net1","mtu":9000)");
  // Kubelet names a claim that was deleted and created again, and one that is gone.
  KubeletClaim recreated{p.env.ns(), "5a0c1d2e-0000-4000-8000-0000000000aa", "many-0"};
  KubeletClaim gone{p.env.ns(), "5a0c1d2e-0000-4000-8000-0000000000ab", "gone"};
  claims.push_back(elsewhere);
  claims.push_back(pending);
  claims.push_back(malformed);
  claims.push_back(recreated);
  claims.push_back(gone);

  auto prepared = KubeletClient::prepare(endpoint, "v1", claims);
  REQUIRE(prepared.ok());
  REQUIRE(prepared->size() == 55);
  for (int i = 0; i < 50; ++i) {
    const auto& r = prepared->at(claims[static_cast<size_t>(i)].uid);
    INFO(claims[static_cast<size_t>(i)].name << ": " << r.error);
    CHECK(r.error == "");
    CHECK(r.devices.size() == 1);
  }
  CHECK_THAT(prepared->at(elsewhere.uid).error,
             Catch::Contains("in pool other-node, another node's"));
  CHECK_THAT(prepared->at(pending.uid).error, Catch::Contains("is not allocated"));
  CHECK_THAT(prepared->at(malformed.uid).error, Catch::Contains("mtu: unknown field"));
  CHECK(prepared->at(recreated.uid).error == "ResourceClaim " + p.env.ns() + "/many-0 has UID " +
                                                 claims[0].uid + ", not " + recreated.uid +
                                                 " (deleted and created again?)");
  CHECK(prepared->at(gone.uid).error == "ResourceClaim " + p.env.ns() + "/gone does not exist");
  for (const auto& bad : {elsewhere, pending, malformed, recreated, gone}) {
    CHECK(prepared->at(bad.uid).devices.empty());
    CHECK_FALSE(std::filesystem::exists(p.dirs().cdi + "/" + dra::cdiSpecFileName(bad.uid)));
  }
  // A UID names files on the node: one that is not a UUID's characters reaches no driver.
  KubeletClaim traversal{p.env.ns(), "../../etc/x", "many-1"};
  auto refused = KubeletClient::prepare(endpoint, "v1", {traversal});
  REQUIRE(refused.ok());
  CHECK_THAT(refused->at(traversal.uid).error, Catch::Contains("kubelet named no valid UID"));
  auto not_undone = KubeletClient::unprepare(endpoint, "v1", {traversal});
  REQUIRE(not_undone.ok());
  CHECK_THAT(not_undone->at(traversal.uid), Catch::Contains("kubelet named no valid UID"));
  auto checkpoint = readFile(p.env.stateDir(p.node) + "/checkpoint.json");
  REQUIRE(checkpoint.ok());
  auto undone = KubeletClient::unprepare(endpoint, "v1", claims);
  REQUIRE(undone.ok());
  for (const auto& [uid, error] : *undone) CHECK(error == "");
  CHECK(std::filesystem::is_empty(p.dirs().cdi));
}

TEST_CASE(
    "an agent writes only its own node's claims' status (never their allocation), slices, "
    "states, Events and pods' network-status",
    "[plugin][integration]") {
  // Kubernetes 1.37 refuses these itself (resourceclaims/driver "associated-node:" verbs and
  // resourceclaims/binding); on 1.34-1.36 the ValidatingAdmissionPolicy sriov-dra-agent-own-node
  // does. Either way the agent of one node cannot touch another node's claims.
  PluginEnv p;
  auto cfg = kube::loadConfig(
      {.path = p.env.cp().serviceAccountKubeconfig(p.env.ns(), "sriov-dra-agent", p.node)});
  REQUIRE(cfg.ok());
  auto agent = kube::Client::create(*cfg);
  REQUIRE(agent.ok());
  auto mine = p.createClaim("mine", "pod-mine", {{"vf", kDriver, "0000-0e-00-1"}});
  auto theirs = p.createClaim("theirs", "pod-theirs", {{"vf", kDriver, "0000-0e-00-1"}}, "",
                              p.node + "-other");
  auto patchStatus = [&](const KubeletClaim& c, const std::string& body) {
    return (*agent)->patch(api::resources::kResourceClaims, c.namespace_, c.name,
                           kube::PatchType::kMerge, body, {.field_manager = "sriov-dra-agent"},
                           "status");
  };
  auto devices = [&](const std::string& pool) {
    return R"({"status":{"devices":[{"driver":")" + kDriver + R"(","pool":")" + pool +
           R"(","device":"0000-0e-00-1"}]}})";
  };
  CHECK(patchStatus(mine, devices(p.node)).ok());
  for (const auto& [claim, body] : std::vector<std::pair<KubeletClaim, std::string>>{
           {theirs, devices(p.node + "-other")},
           {mine, R"({"status":{"reservedFor":null}})"},
           {theirs, R"({"status":{"allocation":null}})"}}) {
    INFO(claim.name << ": " << body);
    auto refused = patchStatus(claim, body);
    REQUIRE_FALSE(refused.ok());
    CHECK(
        (refused.status().code() == Code::kForbidden || refused.status().code() == Code::kInvalid));
    CHECK_THAT(refused.status().message(),
               Catch::Contains("Forbidden") || Catch::Contains("sriov-dra agent"));
  }
  // Slices and states have no built-in node check: the policy alone refuses these, another
  // node's slice and another driver's slice on its own node.
  api::ResourceSliceSpec other_node{
      .driver = kDriver, .pool = {p.node + "-other", 1, 1}, .node_name = p.node + "-other"};
  auto forged = testing::createSlice(**agent, p.node + "-other-slice", other_node);
  REQUIRE_FALSE(forged.ok());
  CHECK_THAT(forged.status().message(),
             Catch::Contains("may only write its own node's ResourceSlices and SriovNodeState"));
  // Its own nodeName but another node's pool: that node's devices would count as allocated.
  api::ResourceSliceSpec other_pool{
      .driver = kDriver, .pool = {p.node + "-other", 1, 1}, .node_name = p.node};
  forged = testing::createSlice(**agent, p.node + "-other-pool-slice", other_pool);
  REQUIRE_FALSE(forged.ok());
  CHECK_THAT(forged.status().message(),
             Catch::Contains("may only publish the pool " + p.node + ", not " + p.node + "-other"));
  api::ResourceSliceSpec other_driver{
      .driver = testing::kGpuDriver, .pool = {p.node, 1, 1}, .node_name = p.node};
  forged = testing::createSlice(**agent, p.node + "-gpu-slice", other_driver);
  REQUIRE_FALSE(forged.ok());
  CHECK_THAT(forged.status().message(),
             Catch::Contains("may only write ResourceSlices of driver "
                             "sriovnetwork.k8snetworkplumbingwg.io, not gpu.nvidia.com"));
  // Events only about its own node's SriovNodeState.
  auto event = [&](const std::string& about) {
    return "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"generateName\":\"e-\"},"
           "\"involvedObject\":{\"apiVersion\":\"sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\","
           "\"kind\":\"SriovNodeState\",\"namespace\":\"" +
           p.env.ns() + "\",\"name\":\"" + about +
           "\"},\"reason\":\"Test\",\"message\":\"m\",\"type\":\"Normal\"}";
  };
  auto post = [&](const std::string& about) {
    auto doc = json::parse(event(about));
    REQUIRE(doc.ok());
    return (*agent)->create(kube::resources::kEvents, p.env.ns(), *doc);
  };
  CHECK(post(p.node).ok());
  auto gossip = post(p.node + "-other");
  REQUIRE_FALSE(gossip.ok());
  CHECK_THAT(gossip.status().message(),
             Catch::Contains("may only record Events about its node's SriovNodeState"));
  auto theirs_now = p.claim("theirs");
  REQUIRE(theirs_now);
  CHECK(theirs_now->status.devices.empty());
  CHECK(theirs_now->status.allocation.has_value());
  // Pods: only Multus's network-status annotation, only on its own node's pods.
  testing::createPod(p.env.admin(), p.env.ns(), "pod-here", p.node, R"({"app":"a"})");
  testing::createPod(p.env.admin(), p.env.ns(), "pod-there", p.node + "-other");
  auto annotate = [&](const std::string& pod, const std::string& metadata) {
    return (*agent)->patch(kube::resources::kPods, p.env.ns(), pod, kube::PatchType::kMerge,
                           R"({"metadata":)" + metadata + "}");
  };
  const std::string status =
      R"({"annotations":{"k8s.v1.cni.cncf.io/network-status":"[{\"name\":\"n/vf\"}]"}})";
  CHECK(annotate("pod-here", status).ok());
  auto elsewhere = annotate("pod-there", status);
  REQUIRE_FALSE(elsewhere.ok());
  CHECK_THAT(elsewhere.status().message(), Catch::Contains("may only annotate pods on its node"));
  for (const std::string& metadata :
       {std::string(R"({"annotations":{"k8s.v1.cni.cncf.io/networks":"n/other"}})"),
        std::string(R"({"labels":{"app":"b"}})"), std::string(R"({"finalizers":["x.io/keep"]})")}) {
    INFO(metadata);
    auto refused = annotate("pod-here", metadata);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.status().message(),
               Catch::Contains("may only change the annotation "
                               "k8s.v1.cni.cncf.io/network-status of a pod"));
  }
  auto huge = annotate("pod-here", R"({"annotations":{"k8s.v1.cni.cncf.io/network-status":")" +
                                       std::string(70000, 'x') + R"("}})");
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.status().message(), Catch::Contains("may write at most 64 KiB"));
}

TEST_CASE("a node policy with needVhostNet gives its VFs /dev/vhost-net and /dev/net/tun",
          "[plugin][integration]") {
  PluginEnv p;
  REQUIRE(p.env.admin()
              .patch(api::resources::kSriovNetworkNodePolicies, p.env.ns(), "cx6-vfs",
                     kube::PatchType::kMerge, R"({"spec":{"needVhostNet":true}})")
              .ok());
  eventually(
      [&] {
        auto s = p.env.nodeState(p.node);
        return s && !s->spec.interfaces.empty() && !s->spec.interfaces[0].vf_groups.empty() &&
               s->spec.interfaces[0].vf_groups[0].need_vhost_net;
      },
      30s, [&] { return p.op->logs(); });
  std::string endpoint = p.registerPlugin();
  auto claim = p.createClaim("vhost", "pod-vhost", {{"vf", kDriver, "0000-0e-00-1"}});
  // The agent reads the spec from its cache: retried until it has the new generation.
  eventually(
      [&] {
        auto prepared = KubeletClient::prepare(endpoint, "v1", {claim});
        REQUIRE(prepared.ok());
        REQUIRE(prepared->at(claim.uid).error == "");
        auto spec = readJson(p.dirs().cdi + "/" + dra::cdiSpecFileName(claim.uid));
        std::vector<std::string> nodes;
        if (spec) {
          for (const auto& n : (*spec)["devices"][0]["containerEdits"]["deviceNodes"].GetArray()) {
            nodes.emplace_back(n["path"].GetString());
          }
        }
        bool mounted = std::count(nodes.begin(), nodes.end(), "/dev/vhost-net") == 1 &&
                       std::count(nodes.begin(), nodes.end(), "/dev/net/tun") == 1;
        if (!mounted) {
          auto undone = KubeletClient::unprepare(endpoint, "v1", {claim});
          REQUIRE(undone.ok());
        }
        return mounted;
      },
      30s, [&] { return p.agent->logs(); });
}
