// The product's CRDs (config/crd/bases/) on a real API server: the reference objects and objects
// using every upstream field are accepted, defaults apply, and the typed codecs read them back.
#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/node_state.h"
#include "api/policies.h"
#include "base/process.h"
#include "support/control_plane.h"
#include "support/fixtures.h"

using namespace sriovdra;
using sriovdra::testing::ControlPlane;
using sriovdra::testing::loadFixtureObject;
using sriovdra::testing::retarget;
using sriovdra::testing::yamlObject;

namespace {

json::Document createIn(kube::Client& client, const kube::ResourceType& rt, const std::string& ns,
                        json::Document obj) {
  retarget(obj, ns);
  auto created = client.create(rt, ns, obj);
  REQUIRE(created.ok());
  return std::move(*created);
}

std::string kubectl(const ControlPlane& cp, const std::vector<std::string>& args) {
  auto out = cp.kubectl(args);
  INFO(out.err);
  REQUIRE(out.exit_code == 0);
  return out.out;
}

}  // namespace

TEST_CASE("the reference policies are accepted and decode to what the user wrote",
          "[api][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("ref");

  auto snnp = api::SriovNetworkNodePolicy::decode(
      createIn(*client, api::resources::kSriovNetworkNodePolicies, ns,
               loadFixtureObject("reference/sriovnetworknodepolicy-cx6-vfs.yaml")));
  REQUIRE(snnp.ok());
  CHECK(snnp->spec.resource_name == "cx6_vfs");
  CHECK(snnp->spec.priority == 10);
  CHECK(snnp->spec.num_vfs == 1);
  CHECK(snnp->spec.isInfiniband());
  CHECK(snnp->spec.is_rdma == true);
  CHECK(snnp->spec.nic_selector.vendor == "15b3");
  CHECK(snnp->spec.nic_selector.device_id == "101b");
  CHECK(snnp->spec.nic_selector.pf_names.size() == 8);
  CHECK(snnp->spec.node_selector == std::map<std::string, std::string>{{"dra-sriov-cx6", "true"}});

  auto srp = api::SriovResourcePolicy::decode(
      createIn(*client, api::resources::kSriovResourcePolicies, ns,
               loadFixtureObject("reference/sriovresourcepolicy-cx6-advertise-vfs.yaml")));
  REQUIRE(srp.ok());
  REQUIRE(srp->node_selector.has_value());
  REQUIRE(srp->node_selector->terms.size() == 1);
  CHECK(srp->node_selector->terms[0].match_expressions[0].op == "In");
  REQUIRE(srp->configs.size() == 1);
  CHECK(srp->configs[0].device_attributes_selector->match_labels.at("pool") == "cx6-vfs");
  CHECK(srp->configs[0].resource_filters[0].link_type == "ib");
  CHECK(srp->configs[0].resource_filters[0].pf_names.size() == 8);

  auto da = api::DeviceAttributes::decode(
      createIn(*client, api::resources::kDeviceAttributes, ns,
               loadFixtureObject("reference/deviceattributes-cx6-vfs-attrs.yaml")));
  REQUIRE(da.ok());
  CHECK(da->attributes.at(std::string(api::attr::kResourceName)) ==
        api::AttributeValue::ofString("cx6_vfs"));
  CHECK(da->metadata.labels.at("pool") == "cx6-vfs");

  std::string table = kubectl(cp, {"get", "sriovnetworknodepolicies", "-n", ns});
  CHECK_THAT(table, Catch::Contains("RESOURCE") && Catch::Contains("PRIORITY") &&
                        Catch::Contains("cx6_vfs"));
}

TEST_CASE("a policy without priority or deviceType gets the upstream defaults",
          "[api][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("defaults");
  auto created = createIn(*client, api::resources::kSriovNetworkNodePolicies, ns, yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: minimal}
spec:
  resourceName: intel_vfs
  numVfs: 4
  nodeSelector: {}
  nicSelector: {vendor: "8086"}
)"));
  auto p = api::SriovNetworkNodePolicy::decode(created);
  REQUIRE(p.ok());
  CHECK(p->spec.priority == 99);
  CHECK(p->spec.device_type == "netdevice");
}

TEST_CASE("objects using every upstream field are accepted", "[api][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("fields");
  createIn(*client, api::resources::kSriovNetworkNodePolicies, ns, yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: everything}
spec:
  resourceName: all-fields
  priority: 0
  mtu: 9000
  numVfs: 16
  nodeSelector: {kubernetes.io/os: linux}
  nicSelector:
    vendor: "15b3"
    deviceID: "101d"
    rootDevices: ["0000:3b:00.0"]
    pfNames: ["ens1f0#0-7"]
  deviceType: vfio-pci
  isRdma: false
  needVhostNet: true
  linkType: ETH
  eSwitchMode: switchdev
  vdpaType: vhost
  excludeTopology: true
  externallyManaged: false
  bridge:
    ovs:
      bridge: {datapathType: netdev, failMode: secure, externalIDs: {a: b}, otherConfig: {c: d}}
      uplink: {interface: {type: dpdk, mtuRequest: 9000, options: {n: "1"}}}
)"));
  createIn(*client, api::resources::kSriovNetworkNodePolicies, ns, yamlObject(R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: openstack}
spec:
  resourceName: osvfs
  numVfs: 1
  nodeSelector: {}
  nicSelector: {netFilter: "openstack/NetworkID:3d1f7c2e-0000-4f5e-9a1b-0123456789ab"}
)"));
  auto srp = createIn(*client, api::resources::kSriovResourcePolicies, ns, yamlObject(R"(
apiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1
kind: SriovResourcePolicy
metadata: {name: everything}
spec:
  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions: [{key: cpus, operator: Gt, values: ["8"]}]
      matchFields: [{key: metadata.name, operator: In, values: [node-a]}]
  configs:
  - deviceAttributesSelector:
      matchExpressions: [{key: pool, operator: In, values: [a, b]}]
    resourceFilters:
    - {vendors: ["8086"], devices: ["1889"], pciAddresses: ["0000:3b:02.0"], pfNames: [ens1f0],
       pfPciAddresses: ["0000:3b:00.0"], drivers: [iavf], linkType: ethernet}
    - {linkType: infiniband}
  - {}
)"));
  auto decoded = api::SriovResourcePolicy::decode(srp);
  REQUIRE(decoded.ok());
  CHECK(decoded->configs.size() == 2);
  CHECK(decoded->configs[0].resource_filters[0].drivers == std::vector<std::string>{"iavf"});
  CHECK(decoded->node_selector->terms[0].match_fields[0].key == "metadata.name");

  auto da = createIn(*client, api::resources::kDeviceAttributes, ns, yamlObject(R"(
apiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1
kind: DeviceAttributes
metadata: {name: typed, labels: {pool: a}}
spec:
  attributes:
    example.com/count: {int: 4}
    example.com/fast: {bool: true}
    example.com/firmware: {version: "22.31.1014"}
    example.com/zones: {strings: [a, b]}
)"));
  auto attrs = api::DeviceAttributes::decode(da);
  REQUIRE(attrs.ok());
  CHECK(attrs->attributes.at("example.com/count") == api::AttributeValue::ofInt(4));
  CHECK(attrs->attributes.at("example.com/firmware") ==
        api::AttributeValue::ofVersion("22.31.1014"));
  CHECK(attrs->attributes.at("example.com/zones").toString() == "[a, b]");
}

TEST_CASE("SriovNodeState spec and status are owned by different field managers",
          "[api][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("state");
  api::SriovNodeStateSpec spec;
  spec.interfaces.push_back({"0000:0e:00.0",
                             "ibp14s0",
                             1,
                             0,
                             "ib",
                             "",
                             false,
                             {{"cx6_vfs", "netdevice", "0-0", "cx6-vfs", 0, true, ""}}});
  spec.devices.push_back(
      {"0000-0e-00-1",
       "0000:0e:00.1",
       {{std::string(api::attr::kResourceName), api::AttributeValue::ofString("cx6_vfs")}}});
  auto obj = kube::newObject(api::resources::kSriovNodeStates, ns, "node-a");
  spec.encode(api::Writer(obj, obj.GetAllocator()).object("spec"));
  REQUIRE(client
              ->apply(api::resources::kSriovNodeStates, ns, obj,
                      {.field_manager = "sriov-dra-operator", .force = true})
              .ok());

  api::SriovNodeStateStatus status;
  status.sync_status = "Succeeded";
  status.interfaces.push_back({.name = "ibp14s0",
                               .pci_address = "0000:0e:00.0",
                               .vendor = "15b3",
                               .device_id = "101b",
                               .num_vfs = 1,
                               .link_type = "IB",
                               .total_vfs = 8,
                               .vfs = {{.driver = "mlx5_core",
                                        .pci_address = "0000:0e:00.1",
                                        .device_id = "101c",
                                        .vf_id = 0}},
                               .pcie_root = "pci0000:00",
                               .numa_node = 0});
  auto st = kube::newObject(api::resources::kSriovNodeStates, ns, "node-a");
  status.encode(api::Writer(st, st.GetAllocator()).object("status"));
  REQUIRE(client
              ->apply(api::resources::kSriovNodeStates, ns, st,
                      {.field_manager = "sriov-dra-agent", .force = true}, "status")
              .ok());

  auto got = client->get(api::resources::kSriovNodeStates, ns, "node-a");
  REQUIRE(got.ok());
  auto state = api::SriovNodeState::decode(*got);
  REQUIRE(state.ok());
  CHECK(state->spec == spec);
  CHECK(state->status.interfaces == status.interfaces);
  CHECK(state->status.sync_status == "Succeeded");
  std::string table = kubectl(cp, {"get", "sriovnodestates", "-n", ns});
  CHECK_THAT(table, Catch::Contains("SYNC") && Catch::Contains("Succeeded"));
}
