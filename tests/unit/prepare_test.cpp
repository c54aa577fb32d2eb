// planPrepare(): what the kubelet plugin does with a claim, decided from what it read. Pure.
#include "dra/prepare.h"

#include <catch2/catch.hpp>

#include "api/names.h"

using namespace sriovdra;

namespace {

const std::string kDriver(api::kDriverName);
const std::string kVfio = R"({"apiVersion":"sriovnetwork.k8snetworkplumbingwg.io/v1alpha1",)"
                          R"("kind":"VfConfig","driver":"vfio-pci"})";
const std::string kDefault = R"({"apiVersion":"sriovnetwork.k8snetworkplumbingwg.io/v1alpha1",)"
                             R"("kind":"VfConfig","driver":"default"})";
std::string withNadNamespace(const std::string& ns) {
  return R"({"apiVersion":"sriovnetwork.k8snetworkplumbingwg.io/v1alpha1",)"
         R"("kind":"VfConfig","netAttachDefName":"net","netAttachDefNamespace":")" +
         ns + R"("})";
}
std::string withDriver(const std::string& driver) {
  return R"({"apiVersion":"sriovnetwork.k8snetworkplumbingwg.io/v1alpha1",)"
         R"("kind":"VfConfig","driver":")" +
         driver + R"("})";
}

// A claim allocated on n1 with VF 0000-11-00-1 for request "vf" (and a GPU), reserved for one pod.
api::ResourceClaim claim(const std::string& vf_config = "") {
  api::ResourceClaim c;
  c.metadata.namespace_ = "ns";
  c.metadata.name = "c";
  c.metadata.uid = "uid-1";
  api::AllocationResult a;
  a.results = {{"gpu", "gpu.nvidia.com", "n1", "gpu-3"}, {"vf", kDriver, "n1", "0000-11-00-1"}};
  if (!vf_config.empty()) a.config = {{"FromClaim", {"vf"}, {kDriver, vf_config}}};
  c.status.allocation = a;
  c.status.reserved_for = {{"", "pods", "pod", "pod-uid"}};
  return c;
}

api::SliceDevice advertisedVf() {
  return {"0000-11-00-1",
          {{std::string(api::attr::kPciAddress), api::AttributeValue::ofString("0000:11:00.1")},
           {std::string(api::attr::kCniResourceName),
            api::AttributeValue::ofString("openshift.io/cx6_vfs")}},
          {}};
}

// What kube-scheduler makes for a container's extended resource (KEP-5004): no VfConfig.
api::ResourceClaim extendedResourceClaim(const std::string& value = "true") {
  auto c = claim();
  c.metadata.annotations["resource.kubernetes.io/extended-resource-claim"] = value;
  return c;
}

host::VfAccess onDriver(const std::string& driver) {
  host::VfAccess a;
  a.driver = driver;
  return a;
}

struct Row {
  std::string name;
  api::ResourceClaim claim;
  bool advertised = true;
  std::optional<std::string> host_driver = "mlx5_core";  // nullopt: not on the host
  std::optional<std::string> earlier_original;           // an interrupted attempt recorded this
  std::set<std::string> allowed;                         // the agent's --allowed-vf-drivers
  bool attaches = false;                                 // standalone mode
  std::vector<std::string> drivers;                      // its resource filter's drivers
  // Expected: an error starting with this, or the plan below.
  std::string error;
  std::optional<std::string> rebind_to;
  std::string original_driver = "mlx5_core";
};

}  // namespace

TEST_CASE("planPrepare refuses what cannot be prepared and plans the rest", "[dra][plugin][unit]") {
  auto other_pool = claim();
  other_pool.status.allocation->results[1].pool = "n2";
  auto unallocated = claim();
  unallocated.status.allocation.reset();
  auto shared = claim();
  shared.status.reserved_for.push_back({"", "pods", "pod-2", "pod-uid-2"});
  auto gpu_only = claim();
  gpu_only.status.allocation->results.pop_back();
  const std::vector<Row> rows = {
      {.name = "not allocated",
       .claim = unallocated,
       .error = "ResourceClaim ns/c is not allocated"},
      {.name = "reserved for two pods",
       .claim = shared,
       .error = "ResourceClaim ns/c is reserved for 2 consumer(s); a VF is prepared for exactly "
                "one pod"},
      {.name = "a device of another node's pool",
       .claim = other_pool,
       .error = "ResourceClaim ns/c: device 0000-11-00-1 is in pool n2, another node's (this is "
                "n1)"},
      {.name = "a device this node neither advertises nor has discovered",
       .claim = claim(),
       .advertised = false,
       .error = "ResourceClaim ns/c: device 0000-11-00-1 is not a VF of node n1 (neither "
                "advertised nor discovered there)"},
      {.name = "an advertised VF the host does not have",
       .claim = claim(),
       .host_driver = std::nullopt,
       .error = "ResourceClaim ns/c: device 0000-11-00-1 (0000:11:00.1) is not on the host"},
      {.name = "a driver nobody allowed",
       .claim = claim(withDriver("pci-stub")),
       .error = "ResourceClaim ns/c: device 0000-11-00-1: driver \"pci-stub\" is not allowed; a "
                "claim may ask for \"vfio-pci\", \"default\", mlx5_core (its own) or a driver "
                "the administrator allows with the agent's --allowed-vf-drivers"},
      {.name = "a driver by name while the VF is on vfio-pci: its own is unknown, refused",
       .claim = claim(withDriver("mlx5_core")),
       .host_driver = "vfio-pci",
       .error = "ResourceClaim ns/c: device 0000-11-00-1: driver \"mlx5_core\" is not allowed; a "
                "claim may ask for \"vfio-pci\", \"default\" or a driver"},
      {.name = "the VF's own driver by name: nothing to do",
       .claim = claim(withDriver("mlx5_core"))},
      {.name = "a driver the administrator allowed",
       .claim = claim(withDriver("pci-stub")),
       .allowed = {"pci-stub"},
       .rebind_to = "pci-stub"},
      {.name = "a NetworkAttachmentDefinition of another namespace (a confused deputy)",
       .claim = claim(withNadNamespace("victim")),
       .error = "ResourceClaim ns/c: request vf: VfConfig netAttachDefNamespace \"victim\" is not "
                "the claim's namespace; a claim uses only the NetworkAttachmentDefinitions of its "
                "own namespace (as the reference driver does): create the "
                "NetworkAttachmentDefinition in ns and drop netAttachDefNamespace"},
      {.name = "netAttachDefNamespace naming the claim's own namespace: accepted",
       .claim = claim(withNadNamespace("ns"))},
      {.name = "no VF in the config: left on its driver", .claim = claim()},
      {.name = "vfio-pci asked: rebind, remember mlx5_core",
       .claim = claim(kVfio),
       .rebind_to = "vfio-pci"},
      {.name = "a crash after binding: the first original driver is kept, no second bind",
       .claim = claim(kVfio),
       .host_driver = "vfio-pci",
       .earlier_original = "mlx5_core"},
      {.name = "prepared on its group's vfio-pci, made again on its kernel driver: back",
       .claim = claim(),
       .earlier_original = "vfio-pci",
       .attaches = true,  // a device again: it needs no NAD
       .rebind_to = "vfio-pci",
       .original_driver = "vfio-pci"},
      {.name = "prepared on its kernel driver, made again on it: nothing to do",
       .claim = claim(),
       .earlier_original = "mlx5_core"},
      {.name = "the default driver asked of a VF on vfio-pci: back to its kernel driver",
       .claim = claim(kDefault),
       .host_driver = "vfio-pci",
       .rebind_to = "",
       .original_driver = "vfio-pci"},
      {.name = "standalone: a netdev VF without a NAD would reach the pod unattached",
       .claim = claim(),
       .attaches = true,
       .error = "ResourceClaim ns/c: request vf: device 0000-11-00-1 stays a network interface, "
                "but its VfConfig names no netAttachDefName"},
      {.name = "standalone: back to the kernel driver without a NAD, likewise",
       .claim = claim(kDefault),
       .host_driver = "vfio-pci",
       .attaches = true,
       .error = "ResourceClaim ns/c: request vf: device 0000-11-00-1 stays a network interface"},
      {.name = "standalone: a VF bound to vfio-pci is a device; it needs no NAD",
       .claim = claim(kVfio),
       .attaches = true,
       .rebind_to = "vfio-pci"},
      {.name = "standalone: a VF already on vfio-pci and left there needs none either",
       .claim = claim(),
       .host_driver = "vfio-pci",
       .attaches = true,
       .original_driver = "vfio-pci"},
      {.name = "standalone: an extended-resource claim's VF takes the pod's network later",
       .claim = extendedResourceClaim(),
       .attaches = true},
      {.name = "standalone: only \"true\" makes an extended-resource claim",
       .claim = extendedResourceClaim("false"),
       .attaches = true,
       .error = "ResourceClaim ns/c: request vf: device 0000-11-00-1 stays a network interface"},
      {.name = "standalone: a netdev VF with its NAD",
       .claim = claim(withNadNamespace("ns")),
       .attaches = true},
      {.name = "the filter's drivers: a claim that names none gets the first",
       .claim = claim(),
       .drivers = {"vfio-pci", "default"},
       .rebind_to = "vfio-pci"},
      {.name = "the filter's drivers: one of them, named",
       .claim = claim(kDefault),
       .drivers = {"vfio-pci", "default"}},
      {.name = "the filter's drivers: the kernel driver by name stands for default",
       .claim = claim(withDriver("mlx5_core")),
       .drivers = {"vfio-pci", "default"}},
      {.name = "the filter's drivers: default stands for the kernel driver's name",
       .claim = claim(kDefault),
       .drivers = {"mlx5_core"}},
      {.name = "the filter's drivers: another is refused",
       .claim = claim(kDefault),
       .drivers = {"vfio-pci"},
       .error = "ResourceClaim ns/c: request vf: device 0000-11-00-1 is for drivers [vfio-pci] "
                "(the drivers of the SriovResourcePolicy filter that advertises it), not "
                "\"default\": name one of those in the claim's VfConfig, or none for \"vfio-pci\""},
      {.name = "standalone: the filter's vfio-pci needs no NAD",
       .claim = claim(),
       .attaches = true,
       .drivers = {"vfio-pci"},
       .rebind_to = "vfio-pci"},
      {.name = "the filter's first driver still has to be allowed",
       .claim = claim(),
       .drivers = {"pci-stub"},
       .error = "ResourceClaim ns/c: device 0000-11-00-1: driver \"pci-stub\" is not allowed"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    dra::PrepareInput in{.claim = &row.claim, .driver = kDriver, .node = "n1"};
    in.allowed_drivers = row.allowed;
    in.attaches = row.attaches;
    in.device_drivers["0000-11-00-1"] = row.drivers;
    if (row.advertised) in.devices.emplace("0000-11-00-1", advertisedVf());
    if (row.host_driver) in.host.emplace("0000:11:00.1", onDriver(*row.host_driver));
    dra::PreparedClaim earlier;
    if (row.earlier_original) {
      earlier.devices.push_back(
          {.pci_address = "0000:11:00.1", .original_driver = *row.earlier_original});
      in.earlier = &earlier;
    }
    CHECK(dra::addressesToRead(row.claim, kDriver, in.devices) ==
          (row.advertised && row.claim.status.allocation ? std::vector<std::string>{"0000:11:00.1"}
                                                         : std::vector<std::string>{}));
    auto plan = dra::planPrepare(in);
    if (!row.error.empty()) {
      REQUIRE_FALSE(plan.ok());
      CHECK(plan.status().code() == Code::kInvalidArgument);
      CHECK_THAT(plan.status().message(), Catch::StartsWith(row.error));
      continue;
    }
    REQUIRE(plan.ok());
    CHECK(plan->claim.pod_uid == "pod-uid");
    CHECK(plan->claim.pod_name == "pod");
    CHECK(plan->claim.state == dra::PreparedClaim::State::kPreparing);
    REQUIRE(plan->claim.devices.size() == 1);
    const auto& d = plan->claim.devices[0];
    CHECK(d.device == "0000-11-00-1");
    CHECK(d.pci_address == "0000:11:00.1");
    CHECK(d.request_names == std::vector<std::string>{"vf"});
    CHECK(d.original_driver == row.original_driver);
    CHECK(d.resource_name == "openshift.io/cx6_vfs");
    CHECK(plan->claim.extended_resource ==
          (row.claim.metadata.annotation("resource.kubernetes.io/extended-resource-claim") ==
           "true"));
    REQUIRE(plan->vfs.size() == 1);
    CHECK(plan->vfs[0].rebind_to == row.rebind_to);
  }
}

TEST_CASE("a claim with none of our devices has an empty plan", "[dra][plugin][unit]") {
  auto c = claim();
  c.status.allocation->results.pop_back();
  dra::PrepareInput in{.claim = &c, .driver = kDriver, .node = "n1"};
  auto plan = dra::planPrepare(in);
  REQUIRE(plan.ok());
  CHECK(plan->claim.devices.empty());
}

TEST_CASE("the artifacts of a prepared VF: its CDI device and the Multus device-info file",
          "[dra][plugin][unit]") {
  dra::PreparedClaim pc{.uid = "uid-1", .namespace_ = "ns", .name = "c", .pod_uid = "pod-uid"};
  dra::PreparedDevice d{.device = "0000-11-00-1", .pci_address = "0000:11:00.1"};
  auto adv = advertisedVf();
  adv.attributes[std::string(api::attr::kCniResourceName)] =
      api::AttributeValue::ofString("openshift.io/cx6_vfs");
  adv.attributes[std::string(api::attr::kCniDeviceId)] =
      api::AttributeValue::ofString("0000:11:00.1");
  host::VfAccess access = onDriver("mlx5_core");
  access.rdma_device = "mlx5_3";
  auto a = dra::deviceArtifacts(pc, d, access, adv, kDriver, "/run/devinfo");
  REQUIRE(a.ok());
  CHECK(a->cdi.name == "uid-1-0000-11-00-1");
  CHECK(a->cdi_device_ids ==
        std::vector<std::string>{kDriver + "/vf=uid-1-0000-11-00-1", kDriver + "/vf=pod-uid"});
  CHECK(a->device_info_path == "/run/devinfo/openshift.io-cx6_vfs-0000:11:00.1-device.json");
  CHECK(a->device_info_json ==
        R"({"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:11:00.1",)"
        R"("rdma-device":"mlx5_3"}})");
  auto without = dra::deviceArtifacts(pc, d, access, advertisedVf(), kDriver, "/run/devinfo");
  REQUIRE(without.ok());
  CHECK(without->device_info_path.empty());
}

TEST_CASE("a VF of a needVhostNet group gets the vhost mounts unless the claim says no",
          "[dra][plugin][unit]") {
  const std::string no_vhost = R"({"apiVersion":"sriovnetwork.k8snetworkplumbingwg.io/v1alpha1",)"
                               R"("kind":"VfConfig","addVhostMount":false})";
  struct Row {
    std::string name;
    std::string vf_config;
    bool in_group;
    std::optional<bool> expected;
  };
  const std::vector<Row> rows = {
      {"a needVhostNet group", "", true, true},
      {"no such group", "", false, std::nullopt},
      {"the claim turns it off", no_vhost, true, false},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto c = claim(row.vf_config);
    dra::PrepareInput in{.claim = &c, .driver = kDriver, .node = "n1"};
    in.devices.emplace("0000-11-00-1", advertisedVf());
    in.host.emplace("0000:11:00.1", onDriver("mlx5_core"));
    if (row.in_group) in.vhost_net_vfs.insert("0000:11:00.1");
    auto plan = dra::planPrepare(in);
    REQUIRE(plan.ok());
    REQUIRE(plan->claim.devices.size() == 1);
    CHECK(plan->claim.devices[0].config.add_vhost_mount == row.expected);
  }
}
