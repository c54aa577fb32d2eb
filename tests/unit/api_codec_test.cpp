// Codecs of the resource.k8s.io objects and the node state: the observed reference objects
// decode to what they say, and encode/decode round-trips.
#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/node_state.h"
#include "api/resource.h"
#include "support/fixtures.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;
using sriovdra::testing::loadFixtureObject;

TEST_CASE("the observed VF ResourceSlice decodes with its attribute types", "[api][unit]") {
  auto slice =
      api::ResourceSlice::decode(loadFixtureObject("reference/resourceslice-sriov-observed.json"));
  REQUIRE(slice.ok());
  CHECK(slice->spec.driver == api::kDriverName);
  CHECK(slice->spec.pool == api::ResourcePool{"a100-04", 1, 1});
  CHECK(slice->spec.node_name == "a100-04");
  REQUIRE(slice->spec.devices.size() == 1);
  const auto& attrs = slice->spec.devices[0].attributes;
  CHECK(attrs.size() == 15);
  CHECK(attrs.at(std::string(api::attr::kNumaNode)) == api::AttributeValue::ofInt(1));
  CHECK(attrs.at(std::string(api::attr::kRdmaCapable)) == api::AttributeValue::ofBool(true));
  CHECK(attrs.at(std::string(api::attr::kPcieRoot)) == api::AttributeValue::ofString("pci0000:b9"));

  json::Document doc(rapidjson::kObjectType);
  slice->spec.encode(api::Writer(doc, doc.GetAllocator()).object("spec"));
  auto again = api::ResourceSlice::decode(doc);
  REQUIRE(again.ok());
  CHECK(again->spec == slice->spec);
}

TEST_CASE("the observed GPU slice keeps versions and capacity", "[api][unit]") {
  auto slice =
      api::ResourceSlice::decode(loadFixtureObject("reference/resourceslice-gpu-observed.json"));
  REQUIRE(slice.ok());
  const auto& d = slice->spec.devices.at(0);
  CHECK(d.attributes.at("cudaComputeCapability") == api::AttributeValue::ofVersion("8.0.0"));
  CHECK(d.capacity.at("memory") == "80Gi");
}

TEST_CASE("slices of other drivers keep counters, node selection and binding conditions",
          "[api][unit]") {
  auto counters = api::ResourceSlice::decode(testing::yamlObject(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpus-counters}
spec:
  driver: gpu.nvidia.com
  pool: {name: node-1, generation: 3, resourceSliceCount: 2}
  nodeName: node-1
  sharedCounters:
  - name: gpu-0-counters
    counters: {memory: {value: 80Gi}, memorySlices: {value: "8"}}
)"));
  REQUIRE(counters.ok());
  REQUIRE(counters->spec.shared_counters.size() == 1);
  CHECK(counters->spec.shared_counters[0] ==
        api::CounterSet{"gpu-0-counters", {{"memory", "80Gi"}, {"memorySlices", "8"}}});
  auto devices = api::ResourceSlice::decode(testing::yamlObject(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: fabric}
spec:
  driver: fabric.example.com
  pool: {name: rack-1, generation: 1, resourceSliceCount: 1}
  perDeviceNodeSelection: true
  devices:
  - name: link-0
    nodeName: node-1
    consumesCounters:
    - counterSet: gpu-0-counters
      counters: {memory: {value: 40Gi}}
    bindsToNode: true
    bindingConditions: [Attached]
    bindingFailureConditions: [AttachFailed]
  - name: link-1
    nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: [r1]}]}]}
  - name: link-2
    allNodes: true
    allowMultipleAllocations: true
    capacity:
      bandwidth: {value: 100G, requestPolicy: {default: 10G, validRange: {min: 10G, max: 60G, step: 10G}}}
      queues: {value: "16", requestPolicy: {validValues: ["1", "2", "4"]}}
)"));
  REQUIRE(devices.ok());
  CHECK(devices->spec.per_device_node_selection);
  const auto& d = devices->spec.devices.at(0);
  CHECK(d.node_name == "node-1");
  CHECK(d.consumes_counters ==
        std::vector<api::DeviceCounterConsumption>{{"gpu-0-counters", {{"memory", "40Gi"}}}});
  CHECK(d.binds_to_node);
  CHECK(d.binding_conditions == std::vector<std::string>{"Attached"});
  CHECK(d.binding_failure_conditions == std::vector<std::string>{"AttachFailed"});
  CHECK(devices->spec.devices.at(1).node_selector->terms.at(0).match_expressions.at(0).values ==
        std::vector<std::string>{"r1"});
  const auto& shared = devices->spec.devices.at(2);
  CHECK(shared.all_nodes);
  CHECK(shared.allow_multiple_allocations);
  CHECK(shared.capacity == api::Quantities{{"bandwidth", "100G"}, {"queues", "16"}});
  CHECK(shared.request_policies.at("bandwidth") ==
        api::CapacityRequestPolicy{"10G", {}, "10G", "60G", "10G"});
  CHECK(shared.request_policies.at("queues") ==
        api::CapacityRequestPolicy{"", {"1", "2", "4"}, "", "", ""});
  for (const auto& slice : {*counters, *devices}) {
    json::Document doc(rapidjson::kObjectType);
    slice.spec.encode(api::Writer(doc, doc.GetAllocator()).object("spec"));
    auto again = api::ResourceSlice::decode(doc);
    REQUIRE(again.ok());
    CHECK(again->spec == slice.spec);
  }
}

TEST_CASE("the observed allocated claim decodes allocation and device status", "[api][unit]") {
  auto claim = api::ResourceClaim::decode(
      loadFixtureObject("reference/resourceclaim-aligned-observed.yaml"));
  REQUIRE(claim.ok());
  REQUIRE(claim->spec.requests.size() == 2);
  CHECK(claim->spec.requests[1].exactly->device_class_name ==
        "sriovnetwork.k8snetworkplumbingwg.io");
  CHECK(claim->spec.requests[1].exactly->selectors.size() == 2);
  CHECK(claim->spec.constraints.at(0).match_attribute == "resource.kubernetes.io/pcieRoot");
  REQUIRE(claim->status.allocation);
  CHECK(claim->status.allocation->nodeName() == "a100-06");
  CHECK(claim->status.allocation->results.at(1) ==
        api::DeviceRequestAllocationResult{"vf", std::string(api::kDriverName), "a100-06",
                                           "0000-11-00-1", false});
  CHECK(claim->status.allocation->config.at(0).source == "FromClaim");
  REQUIRE(claim->status.devices.size() == 1);
  CHECK(claim->status.devices[0].network_data->interface_name == "net1");
  CHECK_THAT(claim->status.devices[0].data_json, Catch::Contains("\"deviceID\":\"0000:11:00.1\""));
  CHECK(claim->status.reserved_for.at(0).resource == "pods");
}

TEST_CASE("the aligned claim template round-trips", "[api][unit]") {
  auto t = api::ResourceClaimTemplate::decode(
      loadFixtureObject("reference/aligned-resourceclaimtemplate.yaml"));
  REQUIRE(t.ok());
  CHECK(t->spec.requests.size() == 2);
  CHECK(t->spec.config.at(0).opaque.driver == api::kDriverName);
  CHECK_THAT(t->spec.config[0].opaque.parameters_json,
             Catch::Contains("\"netAttachDefName\":\"cx6-vf\""));
  json::Document doc(rapidjson::kObjectType);
  t->spec.encode(api::Writer(doc, doc.GetAllocator()));
  CHECK(api::ResourceClaimSpec::decode(api::Reader(&doc, "")) == t->spec);
}

TEST_CASE("SriovNodeState status round-trips with upstream field names", "[api][unit]") {
  auto status = testing::fixture::a100Status(2);
  status.gpus = {{"0000:07:00.0", "10de", "20b2", "nvidia", "pci0000:00", 0, "0000:05:00.0"}};
  status.pcie_roots = {{"pci0000:00", 0, {{"0000:05:00.0", {"0000:07:00.0", "0000:0e:00.0"}}}, {}}};
  status.alignment = {false, {{"0000:07:00.0", "pci0000:00", {"0000-0e-00-1"}, {"0000-0e-00-1"}}}};
  json::Document doc(rapidjson::kObjectType);
  status.encode(api::Writer(doc, doc.GetAllocator()));
  std::string text = json::dump(doc);
  CHECK_THAT(text, Catch::Contains("\"Vfs\":[") && Catch::Contains("\"totalvfs\":8") &&
                       Catch::Contains("\"linkType\":\"IB\""));
  CHECK(api::SriovNodeStateStatus::decode(api::Reader(&doc, "")) == status);
}
