// The structured allocator, table by table: pools and generations, class then request
// selectors, ExactCount / All / firstAvailable, matchAttribute (with the driver-domain rule)
// and distinctAttribute, devices in use, backtracking, deterministic order, and the reasons a
// claim stays pending.
#include "scheduling/allocator.h"

#include <catch2/catch.hpp>

#include "api/codec.h"
#include "support/fixtures.h"

using namespace sriovdra;
using scheduling::Allocator;
using scheduling::ClusterNode;
using scheduling::DeviceId;

namespace {

const std::string kGpu = "gpu.nvidia.com";
const std::string kVf = "sriovnetwork.k8snetworkplumbingwg.io";
const std::string kRoot = "resource.kubernetes.io/pcieRoot";

api::SliceDevice gpu(const std::string& name, const std::string& root) {
  api::SliceDevice d{name, {}, {{"memory", "80Gi"}}};
  d.attributes["type"] = api::AttributeValue::ofString("gpu");
  d.attributes[kRoot] = api::AttributeValue::ofString(root);
  return d;
}

api::SliceDevice vf(const std::string& name, const std::string& root,
                    const std::string& pf = "ibp0", const std::string& resource = "cx6_vfs") {
  api::SliceDevice d{name, {}, {}};
  d.attributes[kVf + "/resourceName"] = api::AttributeValue::ofString(resource);
  d.attributes[kVf + "/PFName"] = api::AttributeValue::ofString(pf);
  d.attributes[kRoot] = api::AttributeValue::ofString(root);
  return d;
}

api::ResourceSlice slice(const std::string& driver, const std::string& node,
                         std::vector<api::SliceDevice> devices, const std::string& name = "",
                         int64_t generation = 0, int64_t count = 1) {
  api::ResourceSlice s;
  s.metadata.name = name.empty() ? node + "-" + driver : name;
  s.spec.driver = driver;
  s.spec.pool = {node, generation, count};
  s.spec.node_name = node;
  s.spec.devices = std::move(devices);
  return s;
}

api::DeviceClass deviceClass(const std::string& name, const std::string& expr,
                             const std::string& config_json = "") {
  api::DeviceClass c;
  c.metadata.name = name;
  c.spec.cel_selectors = {expr};
  if (!config_json.empty()) c.spec.config.push_back({kVf, config_json});
  return c;
}

std::vector<api::DeviceClass> classes() {
  return {deviceClass(kGpu,
                      "device.driver == 'gpu.nvidia.com' && "
                      "device.attributes['gpu.nvidia.com'].type == 'gpu'"),
          deviceClass(kVf, "device.driver == '" + kVf + "'", R"({"kind":"VfConfig"})"),
          deviceClass("empty.example.com", "device.driver == 'example.com'")};
}

api::ResourceClaimSpec claim(const std::string& yaml) {
  auto doc = testing::yamlObject(yaml);
  return api::ResourceClaimSpec::decode(api::Reader(&doc, "spec"));
}

// GPU + VF on the same root, the aligned template's shape.
const std::string kAligned = R"(
devices:
  requests:
  - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
  - name: vf
    exactly:
      deviceClassName: sriovnetwork.k8snetworkplumbingwg.io
      selectors: [{cel: {expression: 'device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].resourceName == "cx6_vfs"'}}]
  constraints: [{requests: [gpu, vf], matchAttribute: resource.kubernetes.io/pcieRoot}]
  config: [{requests: [vf], opaque: {driver: sriovnetwork.k8snetworkplumbingwg.io, parameters: {ifName: net1}}}]
)";

std::vector<std::string> picks(const scheduling::NodeAllocation& a) {
  std::vector<std::string> out;
  for (const auto& p : a.devices) out.push_back(p.request + "=" + p.id.device);
  return out;
}

const ClusterNode kNode{"n1", {}};

}  // namespace

TEST_CASE("matchAttribute pairs a GPU and a VF on one root, backtracking when needed",
          "[allocator][unit]") {
  struct Row {
    std::string name;
    std::vector<api::SliceDevice> gpus, vfs;
    std::set<DeviceId> in_use;
    std::string claim_yaml;
    std::vector<std::string> want;  // empty: must stay pending
  };
  const std::string vf_first = R"(
devices:
  requests:
  - {name: vf, exactly: {deviceClassName: sriovnetwork.k8snetworkplumbingwg.io}}
  - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}
  constraints: [{matchAttribute: resource.kubernetes.io/pcieRoot}]
)";
  const std::vector<Row> rows = {
      {"first GPU and first VF share a root",
       {gpu("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:3a")},
       {vf("vf-0", "pci0000:00"), vf("vf-1", "pci0000:3a")},
       {},
       kAligned,
       {"gpu=gpu-0", "vf=vf-0"}},
      {"the first GPU has no VF on its root: the search moves to the second GPU",
       {gpu("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:b9")},
       {vf("vf-0", "pci0000:b9")},
       {},
       kAligned,
       {"gpu=gpu-1", "vf=vf-0"}},
      {"the first VF blocks every GPU: backtrack the VF",
       {gpu("gpu-0", "pci0000:b9")},
       {vf("vf-0", "pci0000:00"), vf("vf-1", "pci0000:b9")},
       {},
       vf_first,
       {"vf=vf-1", "gpu=gpu-0"}},
      {"devices of other claims are skipped",
       {gpu("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:3a")},
       {vf("vf-0", "pci0000:00"), vf("vf-1", "pci0000:3a")},
       {{kGpu, "n1", "gpu-0"}},
       kAligned,
       {"gpu=gpu-1", "vf=vf-1"}},
      {"the request selector narrows the VFs",
       {gpu("gpu-0", "pci0000:00")},
       {vf("vf-0", "pci0000:00", "ibp0", "other"), vf("vf-1", "pci0000:00")},
       {},
       kAligned,
       {"gpu=gpu-0", "vf=vf-1"}},
      {"no shared root stays pending",
       {gpu("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:3a")},
       {vf("vf-0", "pci0000:b9")},
       {},
       kAligned,
       {}},
      {"the only aligned GPU is in use: pending",
       {gpu("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:3a")},
       {vf("vf-0", "pci0000:00")},
       {{kGpu, "n1", "gpu-0"}},
       kAligned,
       {}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Allocator a({slice(kGpu, "n1", row.gpus), slice(kVf, "n1", row.vfs)}, classes());
    auto got = a.allocate(claim(row.claim_yaml), kNode, row.in_use);
    CHECK(got.fits == !row.want.empty());
    CHECK(picks(got) == row.want);
    if (!got.fits) CHECK_FALSE(got.reasons.empty());
  }
}

TEST_CASE("a pending claim says which request or constraint failed", "[allocator][unit]") {
  struct Row {
    std::string name;
    std::vector<api::SliceDevice> gpus, vfs;
    std::set<DeviceId> in_use;
    std::string claim_yaml;
    std::vector<std::string> reasons;
  };
  const std::vector<Row> rows = {
      {"roots differ",
       {gpu("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:3a")},
       {vf("vf-0", "pci0000:b9"), vf("vf-1", "pci0000:b9")},
       {},
       kAligned,
       {"no gpu and vf with the same resource.kubernetes.io/pcieRoot: gpu free on pci0000:00, "
        "pci0000:3a; vf free on pci0000:b9"}},
      {"three GPUs on no single root: the free count per root",
       {gpu("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:00"), gpu("gpu-2", "pci0000:3a")},
       {vf("vf-0", "pci0000:00"), vf("vf-1", "pci0000:00"), vf("vf-2", "pci0000:00")},
       {},
       R"(
devices:
  requests:
  - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 3}}
  - {name: vf, exactly: {deviceClassName: sriovnetwork.k8snetworkplumbingwg.io, count: 3}}
  constraints: [{requests: [gpu, vf], matchAttribute: resource.kubernetes.io/pcieRoot}]
)",
       {"no gpu and vf with the same resource.kubernetes.io/pcieRoot: gpu needs 3, free on "
        "pci0000:00 (2), pci0000:3a (1); vf needs 3, free on pci0000:00 (3)"}},
      {"every GPU in use",
       {gpu("gpu-0", "pci0000:00")},
       {vf("vf-0", "pci0000:00")},
       {{kGpu, "n1", "gpu-0"}},
       kAligned,
       {"request gpu: all 1 matching device(s) are allocated to other claims"}},
      {"no VF matches the selector",
       {gpu("gpu-0", "pci0000:00")},
       {vf("vf-0", "pci0000:00", "ibp0", "other")},
       {},
       kAligned,
       {"request vf: 1 device(s) of DeviceClass sriovnetwork.k8snetworkplumbingwg.io, none "
        "matches the selector device.attributes[\"sriovnetwork.k8snetworkplumbingwg.io\"]."
        "resourceName == \"cx6_vfs\""}},
      {"class without devices",
       {gpu("gpu-0", "pci0000:00")},
       {},
       {},
       "devices: {requests: [{name: x, exactly: {deviceClassName: empty.example.com}}]}",
       {"request x: no device of DeviceClass empty.example.com"}},
      {"unknown class",
       {},
       {},
       {},
       "devices: {requests: [{name: x, exactly: {deviceClassName: nope}}]}",
       {"request x: DeviceClass nope does not exist"}},
      {"a malformed request selector",
       {gpu("gpu-0", "pci0000:00")},
       {},
       {},
       "devices: {requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, selectors: "
       "[{cel: {expression: \"device.driver ==\"}}]}}]}",
       {"request g: selector: syntax error at 1:17: expected an expression, found end of input\n"
        "  device.driver ==\n                  ^"}},
      {"count larger than what is free",
       {},
       {vf("vf-0", "pci0000:00"), vf("vf-1", "pci0000:00"), vf("vf-2", "pci0000:00")},
       {{kVf, "n1", "vf-2"}},
       "devices: {requests: [{name: v, exactly: {deviceClassName: "
       "sriovnetwork.k8snetworkplumbingwg.io, count: 3}}]}",
       {"request v: needs 3 device(s), 2 of 3 matching are free"}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Allocator a({slice(kGpu, "n1", row.gpus), slice(kVf, "n1", row.vfs)}, classes());
    auto got = a.allocate(claim(row.claim_yaml), kNode, row.in_use);
    CHECK_FALSE(got.fits);
    CHECK(got.reasons == row.reasons);
  }
}

TEST_CASE("pools: highest generation, incomplete and invalid pools, sorted order",
          "[allocator][unit]") {
  const std::string one_vf =
      "devices: {requests: [{name: v, exactly: {deviceClassName: "
      "sriovnetwork.k8snetworkplumbingwg.io}}]}";
  SECTION("only the newest generation counts") {
    Allocator a({slice(kVf, "n1", {vf("old", "pci0000:00")}, "s-old", 1),
                 slice(kVf, "n1", {vf("new", "pci0000:00")}, "s-new", 2)},
                classes());
    CHECK(picks(a.allocate(claim(one_vf), kNode, {})) == std::vector<std::string>{"v=new"});
    CHECK(a.allocate(claim(one_vf), kNode, {{kVf, "n1", "new"}}).reasons ==
          std::vector<std::string>{"request v: all 1 matching device(s) are allocated to other "
                                   "claims"});
  }
  SECTION("an incomplete pool is skipped and named") {
    Allocator a({slice(kVf, "n1", {vf("vf-0", "pci0000:00")}, "s-0", 0, 2)}, classes());
    auto got = a.allocate(claim(one_vf), kNode, {});
    CHECK_FALSE(got.fits);
    CHECK(got.reasons ==
          std::vector<std::string>{
              "request v: no device of DeviceClass sriovnetwork.k8snetworkplumbingwg.io in a "
              "usable pool; pool sriovnetwork.k8snetworkplumbingwg.io/n1 is incomplete (1 of 2 "
              "slices published at generation 0)"});
  }
  SECTION("a pool publishing a device twice is invalid") {
    Allocator a({slice(kVf, "n1", {vf("vf-0", "pci0000:00")}, "s-0", 0, 2),
                 slice(kVf, "n1", {vf("vf-0", "pci0000:00")}, "s-1", 0, 2)},
                classes());
    auto got = a.allocate(claim(one_vf), kNode, {});
    CHECK_FALSE(got.fits);
    CHECK_THAT(got.reasons.at(0), Catch::Contains("is invalid: device vf-0 is published twice"));
  }
  SECTION("pools by name, slices by name, devices in order, whatever the input order") {
    auto pool_b = slice(kVf, "n1", {vf("b-0", "pci0000:00")}, "z");
    pool_b.spec.pool.name = "b";
    auto pool_a2 = slice(kVf, "n1", {vf("a-2", "pci0000:00"), vf("a-3", "pci0000:00")}, "y", 0, 2);
    pool_a2.spec.pool.name = "a";
    auto pool_a1 = slice(kVf, "n1", {vf("a-1", "pci0000:00")}, "x", 0, 2);
    pool_a1.spec.pool.name = "a";
    Allocator a({pool_b, pool_a2, pool_a1}, classes());
    auto got = a.allocate(claim("devices: {requests: [{name: v, exactly: {deviceClassName: "
                                "sriovnetwork.k8snetworkplumbingwg.io, count: 4}}]}"),
                          kNode, {});
    CHECK(picks(got) == std::vector<std::string>{"v=a-1", "v=a-2", "v=a-3", "v=b-0"});
  }
  SECTION("slices of other nodes do not count; allNodes and node selectors do") {
    auto shared = slice(kVf, "net", {vf("shared-0", "pci0000:00")}, "shared");
    shared.spec.node_name.clear();
    shared.spec.all_nodes = true;
    auto labelled = slice(kVf, "rack", {vf("rack-0", "pci0000:00")}, "rack");
    labelled.spec.node_name.clear();
    api::NodeSelectorTerm term;
    term.match_expressions.push_back({"rack", "In", {"r1"}});
    labelled.spec.node_selector = api::NodeSelector{{term}};
    Allocator a({slice(kVf, "n2", {vf("other", "pci0000:00")}), shared, labelled}, classes());
    auto all = claim(
        "devices: {requests: [{name: v, exactly: {deviceClassName: "
        "sriovnetwork.k8snetworkplumbingwg.io, allocationMode: All}}]}");
    CHECK(picks(a.allocate(all, {"n1", {{"rack", "r1"}}}, {})) ==
          std::vector<std::string>{"v=shared-0", "v=rack-0"});
    CHECK(picks(a.allocate(all, {"n3", {}}, {})) == std::vector<std::string>{"v=shared-0"});
  }
}

TEST_CASE("All, firstAvailable, distinctAttribute, adminAccess, results and config",
          "[allocator][unit]") {
  Allocator a({slice(kGpu, "n1", {gpu("gpu-0", "pci0000:00")}),
               slice(kVf, "n1",
                     {vf("vf-0", "pci0000:00", "ibp0"), vf("vf-1", "pci0000:00", "ibp0"),
                      vf("vf-2", "pci0000:00", "ibp1")})},
              classes());
  SECTION("All takes every matching device, and none if one is taken") {
    auto all = claim(
        "devices: {requests: [{name: v, exactly: {deviceClassName: "
        "sriovnetwork.k8snetworkplumbingwg.io, allocationMode: All}}]}");
    CHECK(picks(a.allocate(all, kNode, {})) ==
          std::vector<std::string>{"v=vf-0", "v=vf-1", "v=vf-2"});
    auto taken = a.allocate(all, kNode, {{kVf, "n1", "vf-1"}});
    CHECK_FALSE(taken.fits);
    CHECK(taken.reasons == std::vector<std::string>{"request v: allocationMode All, but 1 of 3 "
                                                    "matching device(s) are allocated to other "
                                                    "claims"});
  }
  SECTION("firstAvailable uses the first subrequest that leads to a solution") {
    auto spec = claim(R"(
devices:
  requests:
  - name: nic
    firstAvailable:
    - {name: none, deviceClassName: empty.example.com}
    - {name: two, deviceClassName: sriovnetwork.k8snetworkplumbingwg.io, count: 2}
  constraints: [{requests: [nic], distinctAttribute: sriovnetwork.k8snetworkplumbingwg.io/PFName}]
)");
    auto got = a.allocate(spec, kNode, {});
    CHECK(picks(got) == std::vector<std::string>{"nic/two=vf-0", "nic/two=vf-2"});
    CHECK(got.allocation.results.at(1).request == "nic/two");
  }
  SECTION("adminAccess may use devices of other claims") {
    auto spec = claim(
        "devices: {requests: [{name: v, exactly: {deviceClassName: "
        "sriovnetwork.k8snetworkplumbingwg.io, adminAccess: true}}]}");
    auto got = a.allocate(spec, kNode, {{kVf, "n1", "vf-0"}});
    CHECK(picks(got) == std::vector<std::string>{"v=vf-0"});
    CHECK(got.allocation.results.at(0).admin_access);
  }
  SECTION("results carry class config, claim config and the node") {
    auto got = a.allocate(claim(kAligned), kNode, {});
    REQUIRE(got.fits);
    REQUIRE(got.allocation.results.size() == 2);
    CHECK(got.allocation.results[1] ==
          api::DeviceRequestAllocationResult{"vf", kVf, "n1", "vf-0", false});
    REQUIRE(got.allocation.config.size() == 2);
    CHECK(got.allocation.config[0].source == "FromClass");
    CHECK(got.allocation.config[0].requests == std::vector<std::string>{"vf"});
    CHECK(got.allocation.config[1].source == "FromClaim");
    CHECK(got.allocation.config[1].opaque.parameters_json == R"({"ifName":"net1"})");
    CHECK(got.allocation.nodeName() == "n1");
  }
}

TEST_CASE("matchAttribute names are fully qualified; unqualified ones are the driver's",
          "[allocator][unit]") {
  // example.com publishes "model" unqualified; other.com publishes it unqualified too, which is
  // other.com/model and so never equal to example.com/model.
  api::SliceDevice e1{"e1", {{"model", api::AttributeValue::ofString("x")}}, {}};
  api::SliceDevice o1{"o1", {{"model", api::AttributeValue::ofString("x")}}, {}};
  api::SliceDevice o2{"o2", {{"example.com/model", api::AttributeValue::ofString("x")}}, {}};
  Allocator a({slice("example.com", "n1", {e1}), slice("other.com", "n1", {o1, o2})},
              {deviceClass("e", "device.driver == 'example.com'"),
               deviceClass("o", "device.driver == 'other.com'")});
  auto got = a.allocate(claim(R"(
devices:
  requests: [{name: a, exactly: {deviceClassName: e}}, {name: b, exactly: {deviceClassName: o}}]
  constraints: [{matchAttribute: example.com/model}]
)"),
                        kNode, {});
  CHECK(picks(got) == std::vector<std::string>{"a=e1", "b=o2"});
  CHECK(api::findAttribute(e1, "example.com", "example.com/model") != nullptr);
  CHECK(api::findAttribute(o1, "other.com", "example.com/model") == nullptr);
}

// Where kube-scheduler's structured allocator meets an error, it stops and fails the pod on every
// node (k8s.io/dynamic-resource-allocation v0.37.2, structured/internal/incubating): a request's
// selectors are evaluated in its search order on devices no other claim holds, so an error on a
// device the search never reaches, or on a held one, does not count; allocationMode All
// evaluates every device up front; a device All must take that breaks a constraint is an error.
TEST_CASE("errors are met where kube-scheduler's search meets them", "[allocator][unit]") {
  auto modelled = [](const std::string& name, const std::string& root) {
    auto d = gpu(name, root);
    d.attributes["model"] = api::AttributeValue::ofString("a100");
    return d;
  };
  const std::string kModelSelector =
      "devices: {requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, selectors: "
      "[{cel: {expression: \"device.attributes['gpu.nvidia.com'].model == 'a100'\"}}]}}]}";
  struct Row {
    std::string name;
    std::vector<api::SliceDevice> gpus, vfs;
    std::set<DeviceId> in_use;
    std::string claim_yaml;
    std::vector<std::string> devices;  // when it fits
    std::string error;                 // a part of the error, when the search meets one
  };
  const std::vector<Row> rows = {
      {"the first device fails its selector: the search stops there",
       {gpu("gpu-0", "pci0000:00"), modelled("gpu-1", "pci0000:00")},
       {},
       {},
       kModelSelector,
       {},
       "request g: device n1/gpu-0: selector device.attributes['gpu.nvidia.com'].model == 'a100': "
       "no such key: model (kube-scheduler stops on this error"},
      {"a solution before the failing device: it is never reached",
       {modelled("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:00")},
       {},
       {},
       kModelSelector,
       {"g gpu-0"},
       ""},
      {"the failing device is held by another claim: skipped before its selectors",
       {gpu("gpu-0", "pci0000:00"), modelled("gpu-1", "pci0000:00")},
       {},
       {{kGpu, "n1", "gpu-0"}},
       kModelSelector,
       {"g gpu-1"},
       ""},
      {"allocationMode All evaluates every device, held ones too",
       {modelled("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:00")},
       {},
       {{kGpu, "n1", "gpu-1"}},
       "devices: {requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, "
       "allocationMode: All, selectors: "
       "[{cel: {expression: \"device.attributes['gpu.nvidia.com'].model == 'a100'\"}}]}}]}",
       {},
       "request g: device n1/gpu-1: selector"},
      {"All with matchAttribute: a device it must take breaks the constraint",
       {gpu("gpu-0", "pci0000:00"), gpu("gpu-1", "pci0000:3a")},
       {vf("vf-0", "pci0000:00")},
       {},
       R"(
devices:
  requests:
  - {name: vf, exactly: {deviceClassName: sriovnetwork.k8snetworkplumbingwg.io}}
  - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}}
  constraints: [{requests: [gpu, vf], matchAttribute: resource.kubernetes.io/pcieRoot}]
)",
       {},
       "request gpu: cannot add device gpu.nvidia.com/n1/gpu-1 because a claim constraint would "
       "not be satisfied"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Allocator a({slice(kGpu, "n1", row.gpus), slice(kVf, "n1", row.vfs)}, classes());
    auto got = a.allocate(claim(row.claim_yaml), kNode, row.in_use);
    std::vector<std::string> devices;
    for (const auto& p : got.devices) devices.push_back(p.request + " " + p.id.device);
    CHECK(got.fits == row.error.empty());
    CHECK(devices == row.devices);
    if (row.error.empty()) {
      CHECK(got.error == "");
    } else {
      CHECK_THAT(got.error, Catch::Contains(row.error));
    }
  }
}

// Device taints (GA in Kubernetes 1.37): a NoSchedule or NoExecute taint keeps a device from
// every request that does not tolerate it, checked after the selectors; other effects do not.
TEST_CASE("tainted devices are allocated only to requests that tolerate the taint",
          "[allocator][unit]") {
  auto tainted = [](const std::string& name, const std::string& effect,
                    const std::string& value = "") {
    auto d = gpu(name, "pci0000:00");
    d.taints.push_back({"example.com/unhealthy", value, effect});
    return d;
  };
  auto request = [](const std::string& extra) {
    return "devices: {requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com" + extra +
           "}}]}";
  };
  struct Row {
    std::string name;
    std::vector<api::SliceDevice> gpus;
    std::string claim_yaml;
    std::vector<std::string> devices;  // empty: does not fit
    std::vector<std::string> reasons;
  };
  const std::vector<Row> rows = {
      {"a NoSchedule taint: the next device",
       {tainted("gpu-0", "NoSchedule"), gpu("gpu-1", "pci0000:00")},
       request(""),
       {"g gpu-1"},
       {}},
      {"tolerated by key (Exists)",
       {tainted("gpu-0", "NoSchedule"), gpu("gpu-1", "pci0000:00")},
       request(", tolerations: [{key: example.com/unhealthy, operator: Exists}]"),
       {"g gpu-0"},
       {}},
      {"Equal with another value does not tolerate",
       {tainted("gpu-0", "NoExecute", "yes")},
       request(", tolerations: [{key: example.com/unhealthy, value: no}]"),
       {},
       {"request g: all 1 matching device(s) have a taint the request does not tolerate"}},
      {"a toleration for another effect does not tolerate",
       {tainted("gpu-0", "NoExecute")},
       request(", tolerations: [{operator: Exists, effect: NoSchedule}]"),
       {},
       {"request g: all 1 matching device(s) have a taint the request does not tolerate"}},
      {"effect None does not keep the device",
       {tainted("gpu-0", "None")},
       request(""),
       {"g gpu-0"},
       {}},
      {"allocationMode All cannot take a tainted device: no solution, no error",
       {gpu("gpu-0", "pci0000:00"), tainted("gpu-1", "NoSchedule")},
       request(", allocationMode: All"),
       {},
       {"request g: allocationMode All, but 1 of 2 matching device(s) are allocated to other "
        "claims or tainted (not tolerated)"}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Allocator a({slice(kGpu, "n1", row.gpus)}, classes());
    auto got = a.allocate(claim(row.claim_yaml), kNode, {});
    std::vector<std::string> devices;
    for (const auto& p : got.devices) devices.push_back(p.request + " " + p.id.device);
    CHECK(got.fits == !row.devices.empty());
    CHECK(devices == row.devices);
    CHECK(got.reasons == row.reasons);
    CHECK(got.error == "");
  }

  // The taints as a ResourceSlice carries them, decoded and written back.
  auto doc = testing::yamlObject(
      "metadata: {name: s}\nspec:\n  driver: gpu.nvidia.com\n  pool: {name: n1}\n  devices:\n"
      "  - name: gpu-0\n    taints: [{key: example.com/unhealthy, value: yes, effect: "
      "NoExecute}]\n");
  auto s = api::ResourceSlice::decode(doc);
  REQUIRE(s.ok());
  REQUIRE(s->spec.devices.size() == 1);
  CHECK(s->spec.devices[0].taints ==
        std::vector<api::DeviceTaint>{{"example.com/unhealthy", "yes", "NoExecute"}});
  json::Document back(rapidjson::kObjectType);
  s->spec.encode(api::Writer(back, back.GetAllocator()));
  auto again = api::ResourceSlice::decode(
      testing::yamlObject("metadata: {name: s}\nspec: " + json::dump(back) + "\n"));
  REQUIRE(again.ok());
  CHECK(again->spec.devices == s->spec.devices);
}

// DeviceTaintRules (GA in 1.37) as kube-scheduler's slice tracker applies them: each selector
// field that is set must match; the empty selector matches every device, no selector none.
TEST_CASE("DeviceTaintRules taint the devices their selector matches", "[unit][allocator]") {
  const std::string slices_yaml =
      "- metadata: {name: a}\n  spec:\n    driver: gpu.nvidia.com\n    pool: {name: n1}\n"
      "    devices: [{name: gpu-0}, {name: gpu-1}]\n"
      "- metadata: {name: b}\n  spec:\n    driver: sriovnetwork.k8snetworkplumbingwg.io\n"
      "    pool: {name: n1}\n    devices: [{name: 0000-01-00-1}]\n"
      "- metadata: {name: c}\n  spec:\n    driver: gpu.nvidia.com\n    pool: {name: n2}\n"
      "    devices: [{name: gpu-0}]\n";
  struct Row {
    std::string what;
    std::string selector;              // YAML of spec.deviceSelector, "" for none
    std::vector<std::string> tainted;  // slice/device
  };
  const std::vector<Row> rows = {
      {"no selector: nothing", "", {}},
      {"the empty selector: every device",
       "deviceSelector: {}",
       {"a/gpu-0", "a/gpu-1", "b/0000-01-00-1", "c/gpu-0"}},
      {"a driver", "deviceSelector: {driver: gpu.nvidia.com}", {"a/gpu-0", "a/gpu-1", "c/gpu-0"}},
      {"a pool of any driver",
       "deviceSelector: {pool: n1}",
       {"a/gpu-0", "a/gpu-1", "b/0000-01-00-1"}},
      {"a device name in every pool", "deviceSelector: {device: gpu-0}", {"a/gpu-0", "c/gpu-0"}},
      {"driver, pool and device",
       "deviceSelector: {driver: gpu.nvidia.com, pool: n2, device: gpu-0}",
       {"c/gpu-0"}},
      {"a mismatch in one field", "deviceSelector: {driver: gpu.nvidia.com, pool: n3}", {}},
  };
  for (const auto& row : rows) {
    SECTION(row.what) {
      auto rule = api::DeviceTaintRule::decode(testing::yamlObject(
          "metadata: {name: r}\nspec:\n  " + row.selector +
          "\n  taint: {key: example.com/maintenance, value: planned, effect: NoSchedule}\n"));
      REQUIRE(rule.ok());
      auto docs = testing::yamlObject("items:\n" + slices_yaml);
      std::vector<api::ResourceSlice> slices;
      for (const auto& item : docs["items"].GetArray()) {
        auto s = api::ResourceSlice::decode(item);
        REQUIRE(s.ok());
        slices.push_back(std::move(*s));
      }
      api::applyTaintRules({*rule}, slices);
      std::vector<std::string> tainted;
      for (const auto& s : slices) {
        for (const auto& d : s.spec.devices) {
          if (d.taints.empty()) continue;
          CHECK(d.taints == std::vector<api::DeviceTaint>{
                                {"example.com/maintenance", "planned", "NoSchedule"}});
          tainted.push_back(s.metadata.name + "/" + d.name);
        }
      }
      CHECK(tainted == row.tainted);
    }
  }
}
