// The structured allocator on other drivers' devices as kube-scheduler 1.37 sees them: shared
// counters (a GPU's MIG partitions), pools completed by slices of other nodes, per-device node
// selection, binding conditions, the 32-device claim limit, the allocation's node selector and
// consumable capacity (devices shared by requests, each taking a share of their capacity).
#include <catch2/catch.hpp>

#include "scheduling/allocator.h"
#include "support/fixtures.h"

using namespace sriovdra;
using scheduling::Allocator;
using scheduling::ClusterNode;
using scheduling::DeviceId;

namespace {

const std::string kMig = "gpu.nvidia.com";

api::ResourceSlice slice(const std::string& node, const std::string& name,
                         std::vector<api::SliceDevice> devices, int64_t count = 1,
                         int64_t generation = 0) {
  api::ResourceSlice s;
  s.metadata.name = name;
  s.spec.driver = kMig;
  s.spec.pool = {node, generation, count};
  s.spec.node_name = node;
  s.spec.devices = std::move(devices);
  return s;
}

// A GPU's counter set: 8 memory slices of 10Gi.
api::CounterSet gpuCounters(const std::string& gpu) {
  return {gpu + "-counters", {{"memory", "80Gi"}, {"slices", "8"}}};
}

// A partition of `gpu` taking `slices` of its 8 memory slices ("whole" takes all of them).
api::SliceDevice partition(const std::string& gpu, const std::string& name, int slices) {
  api::SliceDevice d{gpu + "-" + name, {}, {}};
  d.attributes["profile"] = api::AttributeValue::ofString(name.substr(0, name.find('-')));
  d.attributes["parent"] = api::AttributeValue::ofString(gpu);
  d.consumes_counters.push_back(
      {gpu + "-counters",
       {{"memory", std::to_string(10 * slices) + "Gi"}, {"slices", std::to_string(slices)}}});
  return d;
}

// Node n1: one pool of two slices, the counters of gpu-0 and gpu-1 in one, their partitions in
// the other (a whole GPU, two 3g and two 1g partitions each).
std::vector<api::ResourceSlice> migNode() {
  auto counters = slice("n1", "n1-counters", {}, 2);
  counters.spec.shared_counters = {gpuCounters("gpu-0"), gpuCounters("gpu-1")};
  std::vector<api::SliceDevice> devices;
  for (std::string gpu : {"gpu-0", "gpu-1"}) {
    devices.push_back(partition(gpu, "whole", 8));
    for (std::string p : {"3g-0", "3g-1"}) devices.push_back(partition(gpu, p, 4));
    for (std::string p : {"1g-0", "1g-1"}) devices.push_back(partition(gpu, p, 1));
  }
  return {counters, slice("n1", "n1-devices", devices, 2)};
}

std::vector<api::DeviceClass> classes() {
  api::DeviceClass c;
  c.metadata.name = "mig";
  c.spec.cel_selectors = {"device.driver == 'gpu.nvidia.com'"};
  return {c};
}

api::ResourceClaimSpec claim(const std::string& yaml) {
  auto doc = testing::yamlObject(yaml);
  return api::ResourceClaimSpec::decode(api::Reader(&doc, "spec"));
}

// `count` devices of class mig with this profile (count 0: allocationMode All).
std::string request(const std::string& name, const std::string& profile, int count) {
  std::string mode = count == 0 ? "allocationMode: All" : "count: " + std::to_string(count);
  return "{name: " + name + ", exactly: {deviceClassName: mig, " + mode +
         ", selectors: [{cel: {expression: 'device.attributes[\"gpu.nvidia.com\"].profile == \"" +
         profile + "\"'}}]}}";
}

api::ResourceClaimSpec requests(const std::vector<std::string>& list,
                                const std::string& more = "") {
  std::string yaml = "devices: {requests: [";
  for (size_t i = 0; i < list.size(); ++i) yaml += (i ? ", " : "") + list[i];
  return claim(yaml + "]" + more + "}");
}

std::vector<std::string> picks(const scheduling::NodeAllocation& a) {
  std::vector<std::string> out;
  for (const auto& p : a.devices) out.push_back(p.request + "=" + p.id.device);
  return out;
}

const ClusterNode kNode{"n1", {}};

DeviceId held(const std::string& device) { return {kMig, "n1", device}; }

}  // namespace

TEST_CASE("shared counters: partitions of one GPU fit while its counters last",
          "[allocator][unit]") {
  struct Row {
    std::string name;
    std::vector<std::string> requests;
    std::set<DeviceId> in_use;
    std::vector<std::string> want;  // empty: does not fit
  };
  const std::vector<Row> rows = {
      {"a whole GPU when nothing is allocated", {request("g", "whole", 1)}, {}, {"g=gpu-0-whole"}},
      {"a 1g partition allocated: the whole of gpu-0 no longer fits, gpu-1 does",
       {request("g", "whole", 1)},
       {held("gpu-0-1g-1")},
       {"g=gpu-1-whole"}},
      {"two 3g partitions fill gpu-0; a third goes to gpu-1",
       {request("p", "3g", 3)},
       {},
       {"p=gpu-0-3g-0", "p=gpu-0-3g-1", "p=gpu-1-3g-0"}},
      {"the claim's own picks share the counters: whole GPU then a 1g of the other GPU",
       {request("g", "whole", 1), request("s", "1g", 1)},
       {},
       {"g=gpu-0-whole", "s=gpu-1-1g-0"}},
      {"both whole GPUs allocated: no partition is left",
       {request("s", "1g", 1)},
       {held("gpu-0-whole"), held("gpu-1-whole")},
       {}},
      {"counters overcommitted by allocated devices block every partition of the pool",
       {request("s", "1g", 1)},
       {held("gpu-0-whole"), held("gpu-0-3g-0")},
       {}},
      {"allocationMode All takes what fits together or nothing",
       {request("s", "1g", 0)},
       {},
       {"s=gpu-0-1g-0", "s=gpu-0-1g-1", "s=gpu-1-1g-0", "s=gpu-1-1g-1"}},
      {"All with a whole GPU allocated: its partitions cannot be taken",
       {request("s", "1g", 0)},
       {held("gpu-1-whole")},
       {}},
  };
  Allocator a(migNode(), classes());
  for (const auto& row : rows) {
    INFO(row.name);
    auto got = a.allocate(requests(row.requests), kNode, row.in_use);
    CHECK(got.error.empty());
    CHECK(picks(got) == row.want);
    CHECK(got.fits == !row.want.empty());
  }
}

TEST_CASE("a pending claim names the shared counters", "[allocator][unit]") {
  Allocator a(migNode(), classes());
  auto got = a.allocate(requests({request("s", "1g", 1)}), kNode,
                        {held("gpu-0-whole"), held("gpu-1-3g-0"), held("gpu-1-3g-1")});
  CHECK_FALSE(got.fits);
  CHECK(got.reasons ==
        std::vector<std::string>{"request s: all 4 matching device(s) are allocated to other "
                                 "claims or short of shared counters (counter set gpu-0-counters "
                                 "has 0 of 80Gi memory left; counter set gpu-1-counters has 0 of "
                                 "80Gi memory left)"});
  // Each request could be served alone; together they need more of the GPUs' counters.
  auto together =
      a.allocate(requests({request("w", "whole", 1), request("p", "3g", 4)}), kNode, {});
  CHECK_FALSE(together.fits);
  CHECK(together.reasons ==
        std::vector<std::string>{"the requests compete for the same devices, their shared counters "
                                 "or their capacity: not enough for all"});
}

TEST_CASE("a constraint's reasons hold back partitions short of counters", "[allocator][unit]") {
  // gpu-1's 3g partitions hold all its counters: its 1g partitions are not free, and gpu-0 has
  // room for a 3g or a 1g, not both.
  Allocator a(migNode(), classes());
  auto got = a.allocate(
      requests({request("p", "3g", 1), request("s", "1g", 1)},
               ", constraints: [{requests: [p, s], matchAttribute: gpu.nvidia.com/parent}]"),
      kNode, {held("gpu-0-3g-0"), held("gpu-1-3g-0"), held("gpu-1-3g-1")});
  CHECK_FALSE(got.fits);
  CHECK(got.reasons == std::vector<std::string>{
                           "no p and s with the same gpu.nvidia.com/parent: p free on gpu-0; s "
                           "free on gpu-0, held back on gpu-1 (counter set gpu-1-counters has 0 "
                           "of 80Gi memory left)"});
}

TEST_CASE("pools with counters are invalid when the counters do not add up", "[allocator][unit]") {
  struct Row {
    std::string name;
    std::function<void(std::vector<api::ResourceSlice>&)> change;
    std::string problem;
  };
  const std::vector<Row> rows = {
      {"a device consumes an unknown counter set",
       [](auto& s) { s[1].spec.devices[0].consumes_counters[0].counter_set = "gpu-9-counters"; },
       "pool gpu.nvidia.com/n1 is invalid: device gpu-0-whole consumes counter set "
       "gpu-9-counters, which the pool does not publish"},
      {"a device consumes an unknown counter",
       [](auto& s) { s[1].spec.devices[0].consumes_counters[0].counters["power"] = "1"; },
       "pool gpu.nvidia.com/n1 is invalid: device gpu-0-whole consumes counter power, which "
       "counter set gpu-0-counters does not have"},
      {"two slices publish one counter set",
       [](auto& s) {
         auto extra = slice("n1", "n1-more", {}, 3);
         extra.spec.shared_counters = {gpuCounters("gpu-0")};
         for (auto& x : s) x.spec.pool.resource_slice_count = 3;
         s.push_back(extra);
       },
       "pool gpu.nvidia.com/n1 is invalid: counter set gpu-0-counters is published twice"},
      {"the counter slice is missing", [](auto& s) { s.erase(s.begin()); },
       "pool gpu.nvidia.com/n1 is incomplete (1 of 2 slices published at generation 0)"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto slices = migNode();
    row.change(slices);
    Allocator a(slices, classes());
    auto got = a.allocate(requests({request("g", "whole", 1)}), kNode, {});
    CHECK_FALSE(got.fits);
    REQUIRE(got.reasons.size() == 1);
    CHECK_THAT(got.reasons[0], Catch::EndsWith(row.problem));
    auto all = a.allocate(requests({request("g", "whole", 0)}), kNode, {});
    CHECK_THAT(all.error, Catch::Contains("asks for all devices, but resource pool "
                                          "gpu.nvidia.com/n1 is currently"));
  }
}

TEST_CASE("pools are completed by other nodes' slices and dropped when obsolete",
          "[allocator][unit]") {
  // One pool over two nodes: the counters in a slice for n2, devices for n1 and n2.
  auto counters = slice("n2", "a-counters", {}, 3);
  counters.spec.shared_counters = {gpuCounters("gpu-0")};
  auto on_n1 = slice("n1", "b-n1", {partition("gpu-0", "3g-0", 4)}, 3);
  auto on_n2 =
      slice("n2", "c-n2", {partition("gpu-0", "3g-1", 4), partition("gpu-0", "whole", 8)}, 3);
  for (auto* s : {&counters, &on_n1, &on_n2}) s->spec.pool.name = "shared";
  auto one = requests({request("p", "3g", 1)});
  SECTION("n1 uses the pool, its own devices only, with counters held on n2") {
    Allocator a({counters, on_n1, on_n2}, classes());
    CHECK(picks(a.allocate(one, kNode, {})) == std::vector<std::string>{"p=gpu-0-3g-0"});
    auto busy = a.allocate(one, kNode, {{kMig, "shared", "gpu-0-whole"}});
    CHECK_FALSE(busy.fits);
    CHECK(busy.reasons == std::vector<std::string>{"request p: all 1 matching device(s) are "
                                                   "allocated to other claims or short of "
                                                   "shared counters (counter set gpu-0-counters "
                                                   "has 0 of 80Gi memory left)"});
  }
  SECTION("a newer generation elsewhere makes n1's slice obsolete: the pool is ignored") {
    on_n2.spec.pool.generation = 1;
    Allocator a({counters, on_n1, on_n2}, classes());
    auto got = a.allocate(one, kNode, {});
    CHECK(got.reasons == std::vector<std::string>{"request p: no device of DeviceClass mig"});
  }
}

TEST_CASE("per-device node selection, binding conditions and the allocation's node selector",
          "[allocator][unit]") {
  auto one = requests({request("p", "3g", 1)});
  SECTION("each device reaches the nodes it names") {
    auto s =
        slice("", "per-device", {partition("gpu-0", "3g-0", 4), partition("gpu-0", "3g-1", 4)});
    s.spec.node_name.clear();
    s.spec.per_device_node_selection = true;
    s.spec.pool.name = "fabric";
    s.spec.devices[0].node_name = "n2";
    api::NodeSelectorTerm rack;
    rack.match_expressions.push_back({"rack", "In", {"r1"}});
    s.spec.devices[1].node_selector = api::NodeSelector{{rack}};
    auto counters = slice("", "counters", {}, 2);
    counters.spec.node_name.clear();
    counters.spec.all_nodes = true;
    counters.spec.pool.name = "fabric";
    counters.spec.shared_counters = {gpuCounters("gpu-0")};
    s.spec.pool.resource_slice_count = 2;
    Allocator a({s, counters}, classes());
    auto in_rack = a.allocate(one, {"n1", {{"rack", "r1"}}}, {});
    CHECK(picks(in_rack) == std::vector<std::string>{"p=gpu-0-3g-1"});
    REQUIRE(in_rack.allocation.node_selector);
    CHECK(*in_rack.allocation.node_selector == api::NodeSelector{{rack}});
    CHECK(picks(a.allocate(one, {"n2", {}}, {})) == std::vector<std::string>{"p=gpu-0-3g-0"});
    CHECK_FALSE(a.allocate(one, {"n3", {}}, {}).fits);
  }
  SECTION("devices every node reaches give no node selector; bindsToNode gives the node") {
    auto s = slice("n1", "net", {partition("gpu-0", "3g-0", 4)}, 2);
    s.spec.node_name.clear();
    s.spec.all_nodes = true;
    auto counters = slice("n1", "counters", {}, 2);
    counters.spec.shared_counters = {gpuCounters("gpu-0")};
    Allocator a({s, counters}, classes());
    auto anywhere = a.allocate(one, kNode, {});
    CHECK(anywhere.fits);
    CHECK_FALSE(anywhere.allocation.node_selector);
    s.spec.devices[0].binds_to_node = true;
    Allocator binding({s, counters}, classes());
    CHECK(binding.allocate(one, kNode, {}).allocation.nodeName() == "n1");
  }
  SECTION("pools with binding conditions are searched last; results carry the conditions") {
    auto slices = migNode();
    auto attached = slice("n1", "attached", {partition("gpu-9", "3g-0", 4)});
    attached.spec.pool.name = "a-attached";  // sorts first, searched last
    attached.spec.devices[0].consumes_counters.clear();
    attached.spec.devices[0].binding_conditions = {"Attached"};
    attached.spec.devices[0].binding_failure_conditions = {"AttachFailed"};
    slices.push_back(attached);
    Allocator a(slices, classes());
    CHECK(picks(a.allocate(requests({request("p", "3g", 5)}), kNode, {})) ==
          std::vector<std::string>{"p=gpu-0-3g-0", "p=gpu-0-3g-1", "p=gpu-1-3g-0", "p=gpu-1-3g-1",
                                   "p=gpu-9-3g-0"});
    auto got = a.allocate(one, kNode, {held("gpu-0-whole"), held("gpu-1-whole")});
    REQUIRE(got.fits);
    CHECK(got.allocation.results.at(0).binding_conditions == std::vector<std::string>{"Attached"});
    CHECK(got.allocation.results.at(0).binding_failure_conditions ==
          std::vector<std::string>{"AttachFailed"});
  }
}

TEST_CASE("a claim takes at most 32 devices", "[allocator][unit]") {
  std::vector<api::SliceDevice> devices;
  for (int i = 0; i < 40; ++i) {
    api::SliceDevice d{"dev-" + std::to_string(100 + i), {}, {}};
    d.attributes["profile"] = api::AttributeValue::ofString(i < 33 ? "small" : "big");
    devices.push_back(d);
  }
  Allocator a({slice("n1", "many", devices)}, classes());
  struct Row {
    std::string name;
    std::vector<std::string> requests;
    std::string error;  // "" : fits
  };
  const std::vector<Row> rows = {
      {"All over 33 matching devices",
       {request("s", "small", 0)},
       "request s: adding 33 devices exceeds the claim limit of 32, with 0 already accounted "
       "for"},
      {"two requests of 20",
       {request("a", "small", 20), request("b", "small", 13)},
       "request b: adding 13 devices exceeds the claim limit of 32, with 20 already accounted "
       "for"},
      {"32 in all", {request("a", "small", 25), request("b", "big", 7)}, ""},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto got = a.allocate(requests(row.requests), kNode, {});
    CHECK(got.error == row.error);
    CHECK(got.fits == row.error.empty());
  }
  SECTION("firstAvailable falls back to a subrequest that stays within the limit") {
    auto spec = claim(R"(
devices:
  requests:
  - name: a
    firstAvailable:
    - {name: many, deviceClassName: mig, count: 30}
    - {name: few, deviceClassName: mig, count: 2}
  - {name: b, exactly: {deviceClassName: mig, count: 5}}
)");
    auto got = a.allocate(spec, kNode, {});
    REQUIRE(got.fits);
    CHECK(got.devices.size() == 7);
    CHECK(got.devices[0].request == "a/few");
  }
}

TEST_CASE("consumable capacity: a request's share, rounded up by the capacity's policy",
          "[allocator][unit]") {
  api::SliceDevice link{"link-0", {}, {{"bandwidth", "100G"}, {"queues", "16"}}};
  link.allow_multiple_allocations = true;
  link.request_policies["bandwidth"] = {"10G", {}, "10G", "60G", "5G"};
  link.request_policies["queues"] = {"1", {"1", "2", "4", "8"}, "", "", ""};
  struct Row {
    std::string name;
    api::Quantities requests;
    std::map<std::string, std::string> want;  // empty: the device cannot serve it
  };
  const std::vector<Row> rows = {
      {"no request: each policy's default", {}, {{"bandwidth", "10G"}, {"queues", "1"}}},
      {"below min: min", {{"bandwidth", "2G"}}, {{"bandwidth", "10G"}, {"queues", "1"}}},
      {"between steps: the next step",
       {{"bandwidth", "12G"}},
       {{"bandwidth", "15G"}, {"queues", "1"}}},
      {"on a step", {{"bandwidth", "25G"}}, {{"bandwidth", "25G"}, {"queues", "1"}}},
      {"above max", {{"bandwidth", "61G"}}, {}},
      {"valid values: the next one", {{"queues", "3"}}, {{"bandwidth", "10G"}, {"queues", "4"}}},
      {"past the last valid value", {{"queues", "9"}}, {}},
      {"a capacity the device lacks", {{"memory", "1Gi"}}, {}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto got = scheduling::capacityFor(row.requests, link);
    REQUIRE(got.ok());
    scheduling::Capacities want;
    for (const auto& [name, text] : row.want) want[name] = *scheduling::Quantity::parse(text);
    REQUIRE(got->has_value() == !row.want.empty());
    if (*got) CHECK(**got == want);
  }
  api::SliceDevice plain{"plain", {}, {{"memory", "80Gi"}}};
  CHECK(scheduling::capacityFor({}, plain)->value().at("memory") ==
        *scheduling::Quantity::parse("80Gi"));
  plain.capacity["memory"] = "lots";
  CHECK_FALSE(scheduling::capacityFor({}, plain).ok());
}

TEST_CASE("consumable capacity: a shared device serves requests while their shares fit",
          "[allocator][unit]") {
  auto link = [](const std::string& name) {
    api::SliceDevice d{name, {}, {{"bandwidth", "100G"}}};
    d.attributes["profile"] = api::AttributeValue::ofString("link");
    d.allow_multiple_allocations = true;
    d.request_policies["bandwidth"] = {"", {}, "10G", "", "10G"};
    return d;
  };
  auto ask = [](const std::string& name, const std::string& bandwidth, int count = 1) {
    return "{name: " + name + ", exactly: {deviceClassName: mig, count: " + std::to_string(count) +
           ", capacity: {requests: {bandwidth: " + bandwidth + "}}}}";
  };
  Allocator a({slice("n1", "links", {link("link-0"), link("link-1")})}, classes());
  struct Row {
    std::string name;
    std::vector<std::string> requests;
    scheduling::SharedAllocations shared;
    std::vector<std::string> want;  // empty: does not fit
  };
  auto taken = [](const std::string& device, const std::string& bandwidth) {
    return scheduling::SharedAllocations{
        {{kMig, "n1", device}, {{"bandwidth", *scheduling::Quantity::parse(bandwidth)}}}};
  };
  const std::vector<Row> rows = {
      {"two requests share one device",
       {ask("a", "40G"), ask("b", "60G")},
       {},
       {"a=link-0", "b=link-0"}},
      {"rounded up (45G takes 50G): the second goes to the next device",
       {ask("a", "45G"), ask("b", "60G")},
       {},
       {"a=link-0", "b=link-1"}},
      {"one request takes two devices, never one twice",
       {ask("a", "10G", 2)},
       {},
       {"a=link-0", "a=link-1"}},
      {"shares other claims hold count", {ask("a", "50G")}, taken("link-0", "60G"), {"a=link-1"}},
      {"nothing left anywhere",
       {ask("a", "50G")},
       [&] {
         auto s = taken("link-0", "60G");
         s.merge(taken("link-1", "90G"));
         return s;
       }(),
       {}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto got = a.allocate(requests(row.requests), kNode, {}, row.shared);
    CHECK(got.error.empty());
    CHECK(picks(got) == row.want);
  }
  auto got = a.allocate(requests({ask("a", "45G")}), kNode, {});
  REQUIRE(got.fits);
  CHECK(got.allocation.results.at(0).share_id == "share-1");
  CHECK(got.allocation.results.at(0).consumed_capacity == api::Quantities{{"bandwidth", "50G"}});
  auto full = a.allocate(requests({ask("a", "50G")}), kNode, {}, [&] {
    auto s = taken("link-0", "60G");
    s.merge(taken("link-1", "90G"));
    return s;
  }());
  CHECK(full.reasons ==
        std::vector<std::string>{"request a: all 2 matching device(s) are allocated "
                                 "to other claims or without the capacity left (device link-0 "
                                 "has 40G of 100G bandwidth left; device link-1 has 10G of 100G "
                                 "bandwidth left)"});
  auto huge = a.allocate(requests({ask("a", "200G")}), kNode, {});
  CHECK(huge.reasons == std::vector<std::string>{"request a: 2 matching device(s) of DeviceClass "
                                                 "mig, none can give the capacity the request "
                                                 "asks for"});
  SECTION("claims' results with a shareID are shares, not whole devices") {
    auto claim = api::ResourceClaim::decode(testing::yamlObject(R"(
metadata: {name: c, uid: u1}
status:
  allocation:
    devices:
      results:
      - {request: a, driver: gpu.nvidia.com, pool: n1, device: link-0, shareID: 1f0e, consumedCapacity: {bandwidth: 30G}}
      - {request: b, driver: gpu.nvidia.com, pool: n1, device: link-0, shareID: 2a0b, consumedCapacity: {bandwidth: 20G}}
      - {request: c, driver: gpu.nvidia.com, pool: n1, device: link-1}
)"));
    REQUIRE(claim.ok());
    CHECK(scheduling::allocatedDevices({*claim}) == std::set<DeviceId>{{kMig, "n1", "link-1"}});
    auto shares = scheduling::sharedAllocations({*claim});
    CHECK(shares.at({kMig, "n1", "link-0"}).at("bandwidth") == *scheduling::Quantity::parse("50G"));
  }
}
