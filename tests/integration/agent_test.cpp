// The operator and the node agent together on simulated servers: VFs created through the
// simulated kernel, status reported, ResourceSlices published exactly like the reference driver.
#include <filesystem>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/resource.h"
#include "base/files.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/netlink.h"
#include "host/simulated_kernel.h"
#include "support/dra_objects.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/operator_env.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::OperatorEnv;

namespace {

void applyReference(OperatorEnv& env) { env.applyReferencePolicies(); }

void setNumVfs(OperatorEnv& env, int n) {
  REQUIRE(env.admin()
              .patch(api::resources::kSriovNetworkNodePolicies, env.ns(), "cx6-vfs",
                     kube::PatchType::kMerge, R"({"spec":{"numVfs":)" + std::to_string(n) + "}}")
              .ok());
}

// The agent's writes, one "verb resource/name" each.
std::vector<std::string> agentWrites(const OperatorEnv& env) {
  std::vector<std::string> out;
  for (const auto& e : env.cp().auditEvents()) {
    if (e.user == env.agentUser() && e.isWrite())
      out.push_back(e.verb + " " + e.resource + "/" + e.name);
  }
  return out;
}

// How many ResourceSlice writes the agent made.
size_t sliceWrites(const OperatorEnv& env) {
  size_t n = 0;
  for (const auto& w : agentWrites(env)) n += w.find(" resourceslices/") != std::string::npos;
  return n;
}

// The agent's last pass applied the node's current spec and reported it.
bool passDone(const OperatorEnv& env, const std::string& node) {
  auto s = env.nodeState(node);
  return s && s->status.sync_status == "Succeeded" &&
         s->status.observed_generation == s->metadata.generation;
}

// The operator and one agent on a fixture server, in a namespace of the test's own; the node
// carries `label`. `operator_args` go to the operator.
struct OneNode {
  OneNode(const std::string& prefix, const std::string& node_suffix,
          const std::pair<std::string, std::string>& label, const std::string& topology,
          std::vector<std::string> operator_args = {})
      : env(prefix),
        op(env.startOperator({.extra_args = std::move(operator_args)})),
        node(env.createNode(node_suffix, {label})),
        agent(env.startAgent(node, topology)) {}
  OperatorEnv env;
  std::unique_ptr<testing::OperatorProcess> op;
  std::string node;
  std::unique_ptr<testing::OperatorProcess> agent;
};

const api::Condition* condition(const api::SriovNodeState& s, const std::string& type) {
  return api::findCondition(s.status.conditions, type);
}

}  // namespace

TEST_CASE("on the a100-reference server the reference policies publish the reference VFs",
          "[agent][integration]") {
  OneNode one("agent", "a100", {"dra-sriov-cx6", "true"}, "a100-reference");
  auto& env = one.env;
  auto& node = one.node;
  auto& agent = one.agent;
  applyReference(env);
  auto describe = [&] {
    return "slice devices: " + std::to_string(env.deviceCount(node)) + "\n" + agent->logs();
  };
  eventually([&] { return env.deviceCount(node) == 8; }, 60s, describe);

  auto slices = env.slicesOf(node);
  REQUIRE(slices.size() == 1);
  CHECK(slices[0].spec.pool.name == node);
  CHECK(slices[0].spec.node_name == node);
  CHECK(slices[0].metadata.owner_references.at(0).kind == "Node");
  auto observed = api::ResourceSlice::decode(
      testing::loadFixtureObject("reference/resourceslice-sriov-observed.json"));
  REQUIRE(observed.ok());
  const api::SliceDevice* vf = nullptr;
  for (const auto& d : slices[0].spec.devices) {
    if (d.name == "0000-c7-00-1") vf = &d;
  }
  REQUIRE(vf != nullptr);
  // The reference driver's attributes, and the Multus name of --resource-prefix's default.
  auto expected = observed->spec.devices[0].attributes;
  expected[std::string(api::attr::kCniResourceName)] =
      api::AttributeValue::ofString("openshift.io/cx6_vfs");
  CHECK(vf->attributes == expected);

  // The status follows the slices in the same pass.
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return s && s->status.advertised_vfs == 8 &&
               s->status.observed_generation == s->metadata.generation;
      },
      30s, describe);
  auto state = env.nodeState(node);
  REQUIRE(state);
  CHECK(state->status.sync_status == "Succeeded");
  CHECK(state->status.observed_generation == state->metadata.generation);
  CHECK(state->status.interfaces.size() == 8);
  CHECK(state->status.gpu_count == 8);
  CHECK(state->status.advertised_vfs == 8);
  CHECK(state->status.alignment.root_implies_switch);
  CHECK(condition(*state, "Ready")->status == "True");
  for (const auto& g : state->status.alignment.gpus) {
    if (g.gpu == "0000:c0:00.0") {
      CHECK(g.same_switch_vfs == std::vector<std::string>{"0000-c7-00-1", "0000-ca-00-1"});
    }
  }
  std::string journal = env.kernelJournal(node);
  CHECK_THAT(journal, Catch::Contains("sys/bus/pci/devices/0000:c7:00.0/sriov_numvfs 1 -> ok"));
  // InfiniBand VFs get GUIDs derived from the node, PF and VF (the same after a restart, which
  // therefore writes nothing, below), and their driver binds again to read them.
  int ib_vfs = 0;
  for (const auto& pf : state->status.interfaces) {
    for (const auto& vf : pf.vfs) {
      if (pf.link_type != "IB") continue;
      ++ib_vfs;
      INFO(vf.pci_address);
      CHECK(vf.guid.size() == 23);
      CHECK(vf.guid != "00:00:00:00:00:00:00:00");
      CHECK_THAT(vf.mac, Catch::EndsWith(vf.guid));
      CHECK_THAT(journal, Catch::Contains(" port_guid " + vf.guid + " -> ok"));
    }
  }
  CHECK(ib_vfs > 0);

  SECTION("numVfs 1 -> 4 writes 0 then 4; the slice grows to 32; 4 -> 2 works") {
    setNumVfs(env, 4);
    eventually([&] { return env.deviceCount(node) == 32; }, 60s, describe);
    std::string j = env.kernelJournal(node);
    auto zero = j.find("0000:0e:00.0/sriov_numvfs 0 -> ok");
    auto four = j.find("0000:0e:00.0/sriov_numvfs 4 -> ok");
    CHECK(zero != std::string::npos);
    CHECK(four != std::string::npos);
    CHECK(zero < four);
    CHECK(j.find("EBUSY") == std::string::npos);
    setNumVfs(env, 2);
    eventually([&] { return env.deviceCount(node) == 16; }, 60s, describe);
  }
  SECTION("a restarted agent writes nothing; a deleted slice comes back") {
    agent->stop(SIGTERM);
    size_t journal_before = env.kernelJournal(node).size();
    auto writes_before = agentWrites(env);
    agent = env.startAgent(node, "a100-reference");
    agent->waitReady();
    CHECK(env.kernelJournal(node).size() == journal_before);
    auto writes_after = agentWrites(env);
    writes_after.erase(writes_after.begin(),
                       writes_after.begin() + static_cast<std::ptrdiff_t>(writes_before.size()));
    CHECK(writes_after == std::vector<std::string>{});

    REQUIRE(
        env.admin().remove(api::resources::kResourceSlices, "", slices[0].metadata.name).isOk());
    eventually([&] { return env.deviceCount(node) == 8; }, 60s, describe);
  }
  SECTION("a slice someone else changed is put back, with what else they gave it kept") {
    const std::string name = slices[0].metadata.name;
    REQUIRE(env.admin()
                .patch(api::resources::kResourceSlices, "", name, kube::PatchType::kMerge,
                       R"({"metadata":{"annotations":{"example.com/note":"kept"}},)"
                       R"("spec":{"devices":[]}})")
                .ok());
    eventually([&] { return env.deviceCount(node) == 8; }, 60s, describe);
    auto put_back = env.admin().get(api::resources::kResourceSlices, "", name);
    REQUIRE(put_back.ok());
    auto meta = kube::ObjectMeta::decode(*put_back);
    CHECK(meta.annotation("example.com/note") == "kept");
    CHECK(meta.labels.at("sriovnetwork.k8snetworkplumbingwg.io/node") == node);
    REQUIRE(meta.owner_references.size() == 1);
    CHECK(meta.owner_references[0].kind == "Node");
    CHECK(api::ResourceSlice::decode(*put_back)->spec == slices[0].spec);
  }
  SECTION("a stale slice of this driver on the node is deleted; another driver's is left alone") {
    // As the reference driver leaves them: no labels of ours, a generated name, an older pool.
    api::ResourceSliceSpec stale{.driver = std::string(api::kDriverName),
                                 .pool = {node, 0, 1},
                                 .node_name = node,
                                 .devices = {{"0000-c7-00-1", {}, {}}}};
    REQUIRE(testing::createSlice(env.admin(), node + "-stale-x7k2q", stale).ok());
    testing::publishGpuSlice(env.admin(), node,
                             {api::Gpu{.pci_address = "0000:c0:00.0", .pcie_root = "pci0000:c0"}});
    eventually(
        [&] {
          return !env.admin().get(api::resources::kResourceSlices, "", node + "-stale-x7k2q").ok();
        },
        30s, describe);
    auto gpu = env.admin().get(api::resources::kResourceSlices, "",
                               std::string("00000-gpu.nvidia.com-") + node);
    REQUIRE(gpu.ok());
    CHECK(api::ResourceSlice::decode(*gpu)->spec.driver == testing::kGpuDriver);
    CHECK(env.deviceCount(node) == 8);
  }
}

TEST_CASE("300 VFs on one node are 3 slices of one pool; one device's change updates one slice",
          "[agent][integration]") {
  // Every VF of the node policy is advertised, so that one resource policy changes one device.
  OneNode one("agent300", "e810", {"nic", "e810"}, "e810-ethernet",
              {"--advertise-node-policy-vfs"});
  auto& env = one.env;
  auto& node = one.node;
  auto& agent = one.agent;
  env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: e810}
spec: {resourceName: e810_vfs, numVfs: 150, nodeSelector: {nic: e810}, nicSelector: {vendor: "8086"}}
)"));
  auto describe = [&] {
    return std::to_string(env.deviceCount(node)) + " devices\n" + agent->logs();
  };
  eventually([&] { return env.deviceCount(node) == 300; }, 90s, describe);
  eventually([&] { return passDone(env, node); }, 30s, describe);
  auto before = env.slicesOf(node);
  REQUIRE(before.size() == 3);
  for (const auto& s : before) CHECK(s.spec.pool.resource_slice_count == 3);
  size_t writes_before = sliceWrites(env);

  // One VF gets an extra attribute through a resource policy and DeviceAttributes.
  env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1
kind: DeviceAttributes
metadata: {name: special, labels: {pick: one}}
spec: {attributes: {example.com/special: {bool: true}}}
)"));
  env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1
kind: SriovResourcePolicy
metadata: {name: one-vf}
spec:
  configs:
  - deviceAttributesSelector: {matchLabels: {pick: one}}
    resourceFilters: [{pciAddresses: ["0000:3c:01.0"]}]
)"));
  eventually(
      [&] {
        for (const auto& s : env.slicesOf(node)) {
          for (const auto& d : s.spec.devices) {
            if (d.attributes.count("example.com/special") != 0) return true;
          }
        }
        return false;
      },
      60s, describe);
  eventually([&] { return passDone(env, node); }, 30s, describe);
  auto after = env.slicesOf(node);
  REQUIRE(after.size() == 3);
  int changed = 0;
  for (size_t i = 0; i < 3; ++i) {
    changed += after[i].metadata.resource_version != before[i].metadata.resource_version;
    CHECK(after[i].spec.pool.generation == before[i].spec.pool.generation);
  }
  CHECK(changed == 1);
  // Only what is advertised changed: the slice went out once, ahead of the pass's discovery, and
  // the discovery found the host as the status reported it, so nothing more was written.
  CHECK(sliceWrites(env) - writes_before == 1);

  // A fact of the host that no spec sets changed meanwhile (PF ens1f0's NUMA node), then what is
  // advertised changes again. The slices published ahead carry the NUMA node the status
  // reported; the pass discovers the new one and publishes it, with the new attribute.
  auto numa = std::filesystem::canonical(env.sysfsRoot(node) +
                                         "/sys/bus/pci/devices/0000:3b:00.0/numa_node");
  REQUIRE(writeFileAtomic(numa.string(), "1\n").isOk());
  int64_t generation = env.nodeState(node)->metadata.generation;
  REQUIRE(env.admin()
              .patch(api::resources::kDeviceAttributes, env.ns(), "special",
                     kube::PatchType::kMerge,
                     R"({"spec":{"attributes":{"example.com/special":{"bool":false}}}})")
              .ok());
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return s && s->metadata.generation > generation && passDone(env, node);
      },
      60s, describe);
  // The pass publishes its slices before it reports.
  auto attribute = [](const api::SliceDevice& d, std::string_view name) {
    auto it = d.attributes.find(std::string(name));
    return it == d.attributes.end() ? std::optional<api::AttributeValue>() : it->second;
  };
  int on_numa_1 = 0;
  int special_false = 0;
  for (const auto& s : env.slicesOf(node)) {
    for (const auto& d : s.spec.devices) {
      on_numa_1 += attribute(d, api::attr::kNumaNode) == api::AttributeValue::ofInt(1);
      special_false += attribute(d, "example.com/special") == api::AttributeValue::ofBool(false);
    }
  }
  CHECK(on_numa_1 == 150);
  CHECK(special_false == 1);
  auto state = env.nodeState(node);
  REQUIRE(state);
  for (const auto& pf : state->status.interfaces) {
    CHECK(pf.numa_node == (pf.pci_address == "0000:3b:00.0" ? 1 : 0));
  }
  // The watch of the slices brings metadata only, and the agent's own writes are completed from
  // what it wrote: it never read one of its slices back.
  std::vector<std::string> slice_reads;
  for (const auto& e : env.cp().auditEvents()) {
    if (e.user == env.agentUser() && e.resource == "resourceslices" && e.verb == "get")
      slice_reads.push_back(e.name);
  }
  CHECK(slice_reads == std::vector<std::string>{});
}

TEST_CASE("on the shared-root server the status says pcieRoot does not imply a shared switch",
          "[agent][integration]") {
  OneNode one("shared", "shared", {"nic", "cx6"}, "shared-root", {"--advertise-node-policy-vfs"});
  auto& env = one.env;
  auto& node = one.node;
  auto& agent = one.agent;
  env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: cx6}
spec: {resourceName: cx6, numVfs: 2, nodeSelector: {nic: cx6}, nicSelector: {vendor: "15b3"}}
)"));
  // The agent publishes the slices first, then reports the status that describes them.
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return env.deviceCount(node) == 4 && s && s->status.advertised_vfs == 4 &&
               s->status.sync_status == "Succeeded";
      },
      60s, [&] { return agent->logs(); });
  auto s = *env.nodeState(node);
  CHECK_FALSE(s.status.alignment.root_implies_switch);
  REQUIRE(s.status.pcie_roots.size() == 1);
  CHECK(s.status.pcie_roots[0].switches.size() == 2);
  REQUIRE(s.status.alignment.gpus.size() == 2);
  CHECK(s.status.alignment.gpus[0].same_root_vfs.size() == 4);
  CHECK(s.status.alignment.gpus[0].same_switch_vfs.size() == 2);
}

TEST_CASE("the agent binds vfio-pci VFs, sets VF MTUs and resets a PF no policy wants any more",
          "[agent][integration]") {
  OneNode one("hostops", "e810", {"nic", "e810"}, "e810-ethernet");
  auto& env = one.env;
  auto& node = one.node;
  auto& agent = one.agent;
  env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: dpdk}
spec: {resourceName: e810_dpdk, numVfs: 4, deviceType: vfio-pci, nodeSelector: {nic: e810},
       nicSelector: {pfNames: ["ens1f0#0-1"]}}
)"));
  env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: jumbo}
spec: {resourceName: e810_net, numVfs: 4, mtu: 9000, nodeSelector: {nic: e810},
       nicSelector: {pfNames: ["ens1f0#2-3"]}}
)"));
  // Synced with `pfs` PFs in the spec (the operator renders both policies, the agent applies).
  auto synced = [&](size_t pfs) {
    return [&env, &node, pfs] {
      auto s = env.nodeState(node);
      return s && s->spec.interfaces.size() == pfs && s->status.sync_status == "Succeeded" &&
             s->status.observed_generation == s->metadata.generation;
    };
  };
  eventually(synced(1), 60s, [&] { return agent->logs(); });
  auto state = *env.nodeState(node);
  const api::InterfaceExt* pf = nullptr;
  for (const auto& i : state.status.interfaces) {
    if (i.name == "ens1f0") pf = &i;
  }
  REQUIRE(pf != nullptr);
  REQUIRE(pf->vfs.size() == 4);
  // What the kernel (the simulated one) holds now, read from sysfs, not from the agent's report.
  const std::string sys = env.sysfsRoot(node) + "/sys";
  auto driverOf = [&](const std::string& bdf) {
    return std::filesystem::read_symlink(sys + "/bus/pci/devices/" + bdf + "/driver")
        .filename()
        .string();
  };
  host::RealSysfs kernel(env.sysfsRoot(node));
  auto file = [&](const std::string& path) {
    auto text = kernel.read("sys/" + path);
    return text.ok() ? *text : "<" + text.status().message() + ">";
  };
  for (const auto& vf : pf->vfs) {
    INFO("VF " << vf.vf_id << " " << vf.pci_address);
    if (vf.vf_id < 2) {
      CHECK(driverOf(vf.pci_address) == "vfio-pci");
    } else {
      CHECK(driverOf(vf.pci_address) == "iavf");
      REQUIRE_FALSE(vf.name.empty());
      CHECK(file("class/net/" + vf.name + "/mtu") == "9000");
    }
  }
  CHECK(file("class/net/ens1f0/mtu") == "9000");  // the PF carries the largest VF MTU

  // No policy wants the PF any more: the agent gives it back with 0 VFs.
  for (const char* name : {"dpdk", "jumbo"}) {
    REQUIRE(env.admin().remove(api::resources::kSriovNetworkNodePolicies, env.ns(), name).isOk());
  }
  eventually([&] { return file("bus/pci/devices/" + pf->pci_address + "/sriov_numvfs") == "0"; },
             60s, [&] { return env.kernelJournal(node) + "\n" + agent->logs(); });
  eventually(synced(0), 60s, [&] { return agent->logs(); });
  CHECK(env.deviceCount(node) == 0);
}

TEST_CASE(
    "Mellanox firmware: more VFs and another link type are set for the next boot, the node asks "
    "for a reboot, and after it the VFs come",
    "[agent][firmware][integration]") {
  OneNode one("firmware", "a100", {"nic", "cx6"}, "a100-reference");
  auto& env = one.env;
  one.env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: cx6-eth}
spec: {resourceName: cx6, numVfs: 16, linkType: eth, nodeSelector: {nic: cx6},
       nicSelector: {pfNames: [ibp14s0]}}
)"));
  auto describe = [&] { return env.kernelJournal(one.node) + one.agent->logs() + one.op->logs(); };
  auto grant = [&](const api::SriovNodeState& s) {
    return s.metadata.annotation(api::kRebootGrantAnnotation);
  };
  // The port offers 8 VFs and is InfiniBand: the firmware gets the next boot's values, the node
  // asks for a reboot, and the operator grants it (no pod uses a VF; drains are off). This agent
  // has no --reboot-command: a person must reboot.
  eventually(
      [&] {
        auto s = one.env.nodeState(one.node);
        auto reboot = s ? condition(*s, "RebootRequired") : nullptr;
        return reboot != nullptr && reboot->status == "True" &&
               s->status.sync_status == "InProgress" &&
               reboot->message.find("no --reboot-command") != std::string::npos;
      },
      60s, describe);
  auto state = *env.nodeState(one.node);
  CHECK(condition(state, "RebootRequired")->message ==
        "NIC 0000:0e:00 (0000:0e:00.0): firmware LINK_TYPE_P1 IB -> ETH, NUM_OF_VFS 8 -> 16 "
        "takes effect after a reboot; the node must reboot (drained first) for them: granted; "
        "the agent has no --reboot-command, so a person or a reboot tool reboots the node");
  CHECK(grant(state) == std::to_string(state.metadata.generation));
  CHECK(condition(state, "Blocked")->reason == "RebootRequired");
  CHECK(condition(state, "Degraded")->status == "False");  // waiting, not failing
  CHECK_THAT(env.kernelJournal(one.node),
             Catch::Contains("mstconfig -d 0000:0e:00.0 set LINK_TYPE_P1=ETH NUM_OF_VFS=16 -> ok"));
  CHECK(env.kernelJournal(one.node).find("0000:0e:00.0/sriov_numvfs") == std::string::npos);
  CHECK(env.kernelJournal(one.node).find("reboot") == std::string::npos);

  // With a reboot command the agent reboots the host for the grant (the simulated agent reboots
  // its simulated host), once; the firmware's values are in effect afterwards.
  one.agent.reset();
  one.agent =
      env.startAgent(one.node, "a100-reference", "", "", {"--reboot-command=systemctl,reboot"});
  eventually(
      [&] {
        auto s = one.env.nodeState(one.node);
        return s && s->status.sync_status == "Succeeded" &&
               s->status.observed_generation == s->metadata.generation && grant(*s).empty();
      },
      60s, describe);
  CHECK_THAT(env.kernelJournal(one.node), Catch::Contains("reboot -> ok"));
  auto journal = env.kernelJournal(one.node);
  CHECK(journal.find("reboot -> ok") == journal.rfind("reboot -> ok"));  // once
  eventually([&] { return env.findEvent("Rebooting", "Normal", one.node).has_value(); }, 30s,
             describe);
  CHECK_THAT(*env.findEvent("Rebooting", "Normal", one.node),
             Catch::Contains("reboot granted for generation"));
  state = *env.nodeState(one.node);
  CHECK(condition(state, "RebootRequired")->status == "False");
  for (const auto& pf : state.status.interfaces) {
    if (pf.pci_address != "0000:0e:00.0") continue;
    CHECK(pf.num_vfs == 16);
    CHECK(pf.total_vfs == 16);
    CHECK(pf.link_type == "ETH");
  }
}

TEST_CASE("an IB GUID pool file that does not parse fails the sync, naming the file",
          "[agent][integration]") {
  OperatorEnv env("guidpool");
  auto op = env.startOperator();
  std::string node = env.createNode("a100", {{"nic", "cx6"}});
  testing::TempDir dir;
  std::string pool = dir.path() + "/guids";
  REQUIRE(writeFileAtomic(pool, R"([{"pciAddress": "0000:0e:00.0"}])").isOk());
  auto agent = env.startAgent(node, "a100-reference", "", "", {"--ib-guid-pool=" + pool});
  env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: cx6}
spec: {resourceName: cx6, numVfs: 1, nodeSelector: {nic: cx6}, nicSelector: {pfNames: [ibp14s0]}}
)"));
  eventually(
      [&] {
        auto s = env.nodeState(node);
        return s && s->status.sync_status == "Failed" &&
               s->status.last_sync_error.find(pool +
                                              ": IB GUID pool entry 0: give either guids "
                                              "or rangeStart and rangeEnd (fix the file") !=
                   std::string::npos;
      },
      60s, [&] { return agent->logs(); });
  // The VF exists; it got no GUID rather than a wrong one.
  CHECK_THAT(env.kernelJournal(node), !Catch::Contains("rtnetlink"));
}

TEST_CASE("the agent's log verbosity follows SriovOperatorConfig's logLevel",
          "[agent][integration]") {
  OperatorEnv env("agentlog");
  std::string node = env.createNode("a100", {{"nic", "cx6"}});
  auto agent = env.startAgent(node, "a100-reference");
  env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovOperatorConfig
metadata: {name: default}
spec: {logLevel: 2}
)"));
  eventually(
      [&] {
        return agent->logs().find("log verbosity 2 (SriovOperatorConfig logLevel)") !=
               std::string::npos;
      },
      30s, [&] { return agent->logs(); });
  // Under the agent's own RBAC: it reads "default" only.
  REQUIRE(env.admin().remove(api::resources::kSriovOperatorConfigs, env.ns(), "default").isOk());
  eventually([&] { return agent->logs().find(" (--v)") != std::string::npos; }, 30s,
             [&] { return agent->logs(); });
}

TEST_CASE("eSwitchMode switchdev is applied through devlink in the kernel's order, and undone",
          "[agent][integration]") {
  OneNode one("switchdev", "e810", {"nic", "e810"}, "e810-ethernet",
              {"--advertise-node-policy-vfs"});
  auto& env = one.env;
  const std::string pf = "0000:3b:00.0";  // ens1f0, altName enp59s0f0np0
  env.applyObject(testing::yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: legacy-first}
spec: {resourceName: e810_net, numVfs: 2, nodeSelector: {nic: e810},
       nicSelector: {pfNames: [ens1f0]}}
)"));
  auto pfState = [&]() -> std::optional<api::InterfaceExt> {
    auto s = env.nodeState(one.node);
    if (!s || s->status.sync_status != "Succeeded" ||
        s->status.observed_generation != s->metadata.generation) {
      return std::nullopt;
    }
    for (const auto& i : s->status.interfaces) {
      if (i.pci_address == pf) return i;
    }
    return std::nullopt;
  };
  std::optional<api::InterfaceExt> seen;
  eventually([&] { return (seen = pfState()) && seen->num_vfs == 2; }, 60s,
             [&] { return one.agent->logs(); });
  CHECK(seen->eswitch_mode == "legacy");
  CHECK(seen->alt_names == std::vector<std::string>{"enp59s0f0np0"});

  // The same PF, now in switchdev with 4 VFs, named by its altName.
  REQUIRE(env.admin()
              .patch(api::resources::kSriovNetworkNodePolicies, env.ns(), "legacy-first",
                     kube::PatchType::kMerge,
                     R"({"spec":{"eSwitchMode":"switchdev","numVfs":4,)"
                     R"("nicSelector":{"pfNames":["enp59s0f0np0"]}}})")
              .ok());
  eventually([&] { return (seen = pfState()) && seen->eswitch_mode == "switchdev"; }, 60s,
             [&] { return env.kernelJournal(one.node) + "\n" + one.agent->logs(); });
  CHECK(seen->num_vfs == 4);
  std::string journal = env.kernelJournal(one.node);
  auto at = [&](const std::string& line) { return journal.find(line); };
  auto zero = at("sys/bus/pci/devices/" + pf + "/sriov_numvfs 0 -> ok");
  auto mode = at("devlink pci/" + pf + " eswitch mode switchdev -> ok");
  auto four = at("sys/bus/pci/devices/" + pf + "/sriov_numvfs 4 -> ok");
  INFO(journal);
  REQUIRE(zero != std::string::npos);
  REQUIRE(mode != std::string::npos);
  REQUIRE(four != std::string::npos);
  CHECK((zero < mode && mode < four));
  CHECK(journal.find("-> changing the eSwitch mode") == std::string::npos);  // never refused
  // Its VFs are published with the PF's mode.
  eventually(
      [&] {
        auto slices = env.slicesOf(one.node);
        size_t switchdev = 0;
        for (const auto& slice : slices) {
          for (const auto& d : slice.spec.devices) {
            auto mode = d.attributes.find(std::string(api::attr::kEswitchMode));
            switchdev += mode != d.attributes.end() && mode->second.string_value == "switchdev";
          }
        }
        return switchdev == 4;
      },
      60s, [&] { return one.agent->logs(); });

  // No policy wants the PF any more: 0 VFs, and back to legacy.
  REQUIRE(env.admin()
              .remove(api::resources::kSriovNetworkNodePolicies, env.ns(), "legacy-first")
              .isOk());
  eventually(
      [&] {
        auto s = env.nodeState(one.node);
        if (!s || !s->spec.interfaces.empty() || s->status.sync_status != "Succeeded") {
          return false;
        }
        for (const auto& i : s->status.interfaces) {
          if (i.pci_address == pf) return i.num_vfs == 0 && i.eswitch_mode == "legacy";
        }
        return false;
      },
      60s, [&] { return env.kernelJournal(one.node) + "\n" + one.agent->logs(); });
}

TEST_CASE(
    "taking over a node: a VF in a pod's namespace keeps its GUID, is not advertised, "
    "blocks its PF, and rejoins the pool when the pod ends",
    "[agent][integration][takeover]") {
  OperatorEnv env("takeover");
  auto op = env.startOperator();
  std::string node = env.createNode("a100", {{"dra-sriov-cx6", "true"}});
  // What the SR-IOV network operator leaves: a VF on ibp14s0 with the random GUID it drew, read
  // by its driver, and its netdev in a running pod's network namespace.
  REQUIRE(host::writeFixture("a100-reference", env.sysfsRoot(node)).isOk());
  host::SimulatedKernel kernel(env.sysfsRoot(node));
  const std::string vf = "0000:0e:00.1";
  const uint64_t upstream_guid = 0x7a1b2c3d4e5f6071ULL;
  REQUIRE(kernel.write("sys/bus/pci/devices/0000:0e:00.0/sriov_numvfs", "1").isOk());
  REQUIRE(kernel.setVfGuids("ibp14s0", 0, upstream_guid, upstream_guid).isOk());
  REQUIRE(kernel.write("sys/bus/pci/drivers/mlx5_core/unbind", vf).isOk());
  REQUIRE(kernel.write("sys/bus/pci/drivers/mlx5_core/bind", vf).isOk());
  REQUIRE(kernel.moveToNetns("ibp14s0v0", "pod-a").isOk());
  auto guid_writes = [&] {
    std::string j = env.kernelJournal(node);
    size_t n = 0;
    for (size_t at = j.find("rtnetlink ibp14s0 vf 0 "); at != std::string::npos;
         at = j.find("rtnetlink ibp14s0 vf 0 ", at + 1)) {
      ++n;
    }
    return n;
  };
  REQUIRE(guid_writes() == 1);  // the one above

  auto agent = env.startAgent(node, "a100-reference");
  env.applyReferencePolicies();
  auto describe = [&] {
    return "slice devices: " + std::to_string(env.deviceCount(node)) + "\n" + agent->logs();
  };
  auto vfStatus = [&]() -> std::optional<api::VirtualFunction> {
    auto s = env.nodeState(node);
    if (!s) return std::nullopt;
    for (const auto& pf : s->status.interfaces) {
      for (const auto& v : pf.vfs) {
        if (v.pci_address == vf) return v;
      }
    }
    return std::nullopt;
  };
  // The other seven PFs get their VF; this one is held by the pod.
  eventually([&] { return passDone(env, node) && env.deviceCount(node) == 7; }, 60s, describe);
  auto held = vfStatus();
  REQUIRE(held);
  CHECK(held->assigned == "netns");
  CHECK(held->guid == host::guidText(upstream_guid));
  CHECK(held->driver == "mlx5_core");
  CHECK(guid_writes() == 1);
  for (const auto& slice : env.slicesOf(node)) {
    for (const auto& d : slice.spec.devices) CHECK(d.name != "0000-0e-00-1");
  }

  // A count change would destroy it: that PF waits, naming the VF; the others change.
  setNumVfs(env, 2);
  eventually(
      [&] {
        auto s = env.nodeState(node);
        const api::Condition* blocked = s ? condition(*s, "Blocked") : nullptr;
        return blocked != nullptr && blocked->status == "True" &&
               blocked->message.find("VF " + vf + " (its netdev is in a pod's network namespace") !=
                   std::string::npos &&
               env.deviceCount(node) == 14;
      },
      60s, describe);
  CHECK(kernel.read("sys/bus/pci/devices/0000:0e:00.0/sriov_numvfs").valueOr("") == "1");
  CHECK(guid_writes() == 1);

  // The pod ends: its CNI plugin returns the netdev. The VF is configured as the spec says and
  // advertised with the rest.
  REQUIRE(kernel.returnFromNetns("pod-a", "ibp14s0v0").isOk());
  eventually([&] { return passDone(env, node) && env.deviceCount(node) == 16; }, 60s, describe);
  auto s = env.nodeState(node);
  REQUIRE(s);
  CHECK(condition(*s, "Blocked")->status == "False");
  for (const auto& pf : s->status.interfaces) {
    for (const auto& v : pf.vfs) CHECK(v.assigned.empty());
  }
}
