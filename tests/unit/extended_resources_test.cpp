// The claim kube-scheduler 1.37 makes for a pod's extended resources that DeviceClasses back:
// which containers ask, the request names and counts, init containers reusing later requests,
// the node's device plugin serving a resource instead, and which class backs a name.
#include "scheduling/extended_resources.h"

#include <catch2/catch.hpp>

#include "api/objects.h"
#include "support/fixtures.h"

using namespace sriovdra;
using scheduling::extendedResourceClaim;
using scheduling::extendedResourceClasses;

namespace {

api::DeviceClass deviceClass(const std::string& name, const std::string& extended = "",
                             const std::string& created = "2026-01-01T00:00:00Z") {
  api::DeviceClass c;
  c.metadata.name = name;
  c.metadata.creation_timestamp = created;
  if (!extended.empty()) c.spec.extended_resource_name = extended;
  return c;
}

api::PodResources pod(const std::string& yaml) {
  auto doc = testing::yamlObject(yaml);
  auto p = api::PodResources::decode(doc);
  REQUIRE(p.ok());
  return std::move(*p);
}

// "name=class:count" per request, in order.
std::vector<std::string> requests(const scheduling::ExtendedResourceClaim& c) {
  std::vector<std::string> out;
  for (const auto& r : c.spec.requests) {
    out.push_back(r.name + "=" + r.exactly->device_class_name + ":" +
                  std::to_string(r.exactly->count));
  }
  return out;
}

// "container:resource->request" per mapping, in order.
std::vector<std::string> mappings(const scheduling::ExtendedResourceClaim& c) {
  std::vector<std::string> out;
  for (const auto& m : c.mappings) out.push_back(m.container + ":" + m.resource + "->" + m.request);
  return out;
}

const std::string kVfImplicit = "deviceclass.resource.kubernetes.io/vf";

}  // namespace

TEST_CASE("extended resources become the scheduler's claim", "[extended][unit]") {
  std::vector<api::DeviceClass> classes = {deviceClass("gpu.nvidia.com", "nvidia.com/gpu"),
                                           deviceClass("vf")};
  auto backed = extendedResourceClasses(classes);
  struct Row {
    std::string name;
    std::string spec;  // the pod's spec
    std::vector<std::string> requests;
    std::vector<std::string> mappings;
  };
  const std::vector<Row> rows = {
      {"a limit stands for the request; the count is the quantity",
       "{containers: [{name: app, resources: {limits: {nvidia.com/gpu: 2}}}]}",
       {"container-0-request-0=gpu.nvidia.com:2"},
       {"app:nvidia.com/gpu->container-0-request-0"}},
      {"the request's index is the resource's among all the container's requests",
       "{containers: [{name: app, resources: {requests: {cpu: '1', memory: 1Gi, nvidia.com/gpu: "
       "'1'}}}]}",
       {"container-0-request-2=gpu.nvidia.com:1"},
       {"app:nvidia.com/gpu->container-0-request-2"}},
      {"the implicit name of a class; each container its own request",
       "{containers: [{name: a, resources: {limits: {" + kVfImplicit +
           ": 1}}}, {name: b, resources: {limits: {" + kVfImplicit + ": 2}}}]}",
       {"container-0-request-0=vf:1", "container-1-request-0=vf:2"},
       {"a:" + kVfImplicit + "->container-0-request-0",
        "b:" + kVfImplicit + "->container-1-request-0"}},
      {"an init container reuses a later container's devices and asks for the rest",
       "{initContainers: [{name: init, resources: {limits: {nvidia.com/gpu: 3}}}], containers: "
       "[{name: app, resources: {limits: {nvidia.com/gpu: 1}}}]}",
       {"container-0-request-0=gpu.nvidia.com:2", "container-1-request-0=gpu.nvidia.com:1"},
       {"app:nvidia.com/gpu->container-1-request-0", "init:nvidia.com/gpu->container-1-request-0",
        "init:nvidia.com/gpu->container-0-request-0"}},
      {"an init container served by later containers asks for nothing",
       "{initContainers: [{name: init, resources: {limits: {nvidia.com/gpu: 1}}}], containers: "
       "[{name: app, resources: {limits: {nvidia.com/gpu: 1}}}]}",
       {"container-1-request-0=gpu.nvidia.com:1"},
       {"app:nvidia.com/gpu->container-1-request-0", "init:nvidia.com/gpu->container-1-request-0"}},
      {"init containers share their largest request",
       "{initContainers: [{name: i0, resources: {limits: {nvidia.com/gpu: 2}}}, {name: i1, "
       "resources: {limits: {nvidia.com/gpu: 3}}}], containers: [{name: app}]}",
       {"container-1-request-0=gpu.nvidia.com:3"},
       {"i0:nvidia.com/gpu->container-1-request-0", "i1:nvidia.com/gpu->container-1-request-0"}},
      {"a sidecar asks for its own devices, which an init container before it reuses",
       "{initContainers: [{name: init, resources: {limits: {nvidia.com/gpu: 1}}}, {name: side, "
       "restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}}], containers: [{name: "
       "app}]}",
       {"container-1-request-0=gpu.nvidia.com:1"},
       {"side:nvidia.com/gpu->container-1-request-0",
        "init:nvidia.com/gpu->container-1-request-0"}},
      {"a request wins over its limit; resources in name order",
       "{containers: [{name: app, resources: {requests: {nvidia.com/gpu: 1}, limits: "
       "{nvidia.com/gpu: 2, " +
           kVfImplicit + ": 1}}}]}",
       {"container-0-request-0=vf:1", "container-0-request-1=gpu.nvidia.com:1"},
       {"app:" + kVfImplicit + "->container-0-request-0",
        "app:nvidia.com/gpu->container-0-request-1"}},
      {"zero and fractions are skipped",
       "{containers: [{name: a, resources: {limits: {nvidia.com/gpu: 0}}}, {name: b, resources: "
       "{limits: {nvidia.com/gpu: 500m}}}, {name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}",
       {"container-2-request-0=gpu.nvidia.com:1"},
       {"c:nvidia.com/gpu->container-2-request-0"}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto got = extendedResourceClaim(
        pod("{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: " + row.spec + "}"), backed,
        {});
    CHECK(got.any);
    CHECK(got.unfit.empty());
    CHECK(requests(got) == row.requests);
    CHECK(mappings(got) == row.mappings);
  }
}

TEST_CASE("a node's device plugin or nothing at all", "[extended][unit]") {
  std::vector<api::DeviceClass> classes = {deviceClass("gpu.nvidia.com", "nvidia.com/gpu")};
  auto backed = extendedResourceClasses(classes);
  auto p =
      pod("{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: app, "
          "resources: {limits: "
          "{nvidia.com/gpu: 1, example.com/fpga: 1}}}]}}");
  // The node has the GPUs as a device plugin's: DRA allocates nothing there.
  auto plugin =
      extendedResourceClaim(p, backed, {{"nvidia.com/gpu", "4"}, {"example.com/fpga", "1"}});
  CHECK(plugin.spec.requests.empty());
  CHECK(plugin.device_plugin == std::vector<std::string>{"example.com/fpga", "nvidia.com/gpu"});
  CHECK(plugin.unfit.empty());
  // An allocatable of 0 leaves the resource to DRA; a resource nothing serves keeps the pod off.
  auto none = extendedResourceClaim(p, backed, {{"nvidia.com/gpu", "0"}});
  CHECK(requests(none) == std::vector<std::string>{"container-0-request-1=gpu.nvidia.com:1"});
  CHECK(none.unfit ==
        "cannot fit resource example.com/fpga: no DeviceClass backs it and the node's allocatable "
        "does not have it");
  // An allocatable smaller than the pod's request: NodeResourcesFit keeps the pod off the node.
  auto small =
      extendedResourceClaim(p, backed, {{"nvidia.com/gpu", "4"}, {"example.com/fpga", "0"}});
  CHECK(small.unfit ==
        "Insufficient example.com/fpga: the node's allocatable has 0, the pod asks for 1");
  // A quantity that does not parse is named.
  auto bad = extendedResourceClaim(
      pod("{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, resources: {limits: "
          "{nvidia.com/gpu: 1x}}}]}}"),
      backed, {});
  CHECK_THAT(bad.invalid, Catch::StartsWith("container a: nvidia.com/gpu: "));
  // A pod asking for nothing a class backs: the scheduler makes no claim.
  auto other = extendedResourceClaim(
      pod("{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, resources: "
          "{limits: {example.com/fpga: 1}}}]}}"),
      backed, {});
  CHECK_FALSE(other.any);
  CHECK(other.spec.requests.empty());
}

TEST_CASE("which class backs an extended resource", "[extended][unit]") {
  std::vector<api::DeviceClass> classes = {
      deviceClass("old", "example.com/nic", "2026-01-01T00:00:00Z"),
      deviceClass("new", "example.com/nic", "2026-02-01T00:00:00Z"),
      deviceClass("b-tie", "example.com/tie"), deviceClass("a-tie", "example.com/tie")};
  auto backed = extendedResourceClasses(classes);
  CHECK(backed.at("example.com/nic")->metadata.name == "new");
  CHECK(backed.at("example.com/tie")->metadata.name == "a-tie");
  CHECK(backed.at("deviceclass.resource.kubernetes.io/old")->metadata.name == "old");
  for (const auto& [name, want] :
       std::vector<std::pair<std::string, bool>>{{"nvidia.com/gpu", true},
                                                 {"deviceclass.resource.kubernetes.io/vf", true},
                                                 {"cpu", false},
                                                 {"kubernetes.io/batch", false},
                                                 {"example.kubernetes.io/thing", false},
                                                 {"requests.example.com/x", false},
                                                 {"example.com/a/b", false},
                                                 {"example.com/-bad", false}}) {
    INFO(name);
    CHECK(scheduling::isDraExtendedResourceName(name) == want);
  }
}

TEST_CASE("a workload's pod template is read like a pod", "[extended][unit]") {
  for (const auto& [kind, spec] : std::vector<std::pair<std::string, std::string>>{
           {"apps/v1, kind: Deployment",
            "{template: {spec: {containers: [{name: app, resources: {limits: "
            "{nvidia.com/gpu: 1}}}], resourceClaims: [{name: nic}]}}}"},
           {"batch/v1, kind: CronJob",
            "{jobTemplate: {spec: {template: {spec: {containers: [{name: app, "
            "resources: {limits: {nvidia.com/gpu: 1}}}], resourceClaims: [{name: "
            "nic}]}}}}}"}}) {
    INFO(kind);
    auto p =
        pod("{apiVersion: " + kind + ", metadata: {name: w, namespace: ns}, spec: " + spec + "}");
    CHECK(p.metadata.namespace_ == "ns");
    REQUIRE(p.containers.size() == 1);
    CHECK(p.containers[0].requests == std::map<std::string, std::string>{{"nvidia.com/gpu", "1"}});
    CHECK(p.claims == std::vector<std::string>{"nic"});
  }
  auto doc = testing::yamlObject(
      "{apiVersion: v1, kind: Pod, spec: {containers: [{name: a, resources: {limits: "
      "{nvidia.com/gpu: [1]}}}]}}");
  auto bad = api::PodResources::decode(doc);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "spec.containers[0].resources.limits.nvidia.com/gpu: expected a quantity");
}

TEST_CASE("a node keeps the extended resources of its allocatable", "[extended][unit]") {
  auto doc = testing::yamlObject(
      "{kind: Node, metadata: {name: n}, status: {allocatable: {cpu: '8', memory: 1Gi, "
      "nvidia.com/gpu: '4', example.com/fpga: 2, hugepages-2Mi: '0', "
      "example.kubernetes.io/thing: '1', deviceclass.resource.kubernetes.io/vf: '3'}}}");
  auto node = api::Node::decode(doc);
  REQUIRE(node.ok());
  CHECK(node->extended_allocatable ==
        std::map<std::string, std::string>{{"deviceclass.resource.kubernetes.io/vf", "3"},
                                           {"example.com/fpga", "2"},
                                           {"nvidia.com/gpu", "4"}});
  // Only Pods and the workloads of apps/v1 and batch/v1 hold a pod.
  auto other = testing::yamlObject("{apiVersion: batch.volcano.sh/v1alpha1, kind: Job}");
  CHECK_FALSE(api::PodResources::reads(other));
  CHECK_FALSE(api::PodResources::decode(other).ok());
}
