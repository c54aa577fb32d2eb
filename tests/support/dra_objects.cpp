#include "support/dra_objects.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "api/names.h"
#include "kube/object_meta.h"

namespace sriovdra::testing {
namespace {

json::Document parseOrThrow(const std::string& text) {
  auto doc = json::parse(text);
  if (!doc.ok()) throw std::runtime_error("test object: " + doc.status().toString());
  return std::move(*doc);
}

void check(const Result<json::Document>& written, const std::string& what) {
  if (!written.ok()) throw std::runtime_error(what + ": " + written.status().toString());
}

}  // namespace

void createGpuDeviceClass(kube::Client& client) {
  auto created = client.create(
      api::resources::kDeviceClasses, "",
      parseOrThrow(
          R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",)"
          R"("metadata":{"name":"gpu.nvidia.com"},"spec":{"selectors":[{"cel":{"expression":)"
          R"("device.driver == 'gpu.nvidia.com' && )"
          R"(device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],)"
          R"("extendedResourceName":"nvidia.com/gpu"}})"));
  if (created.ok() || created.status().code() == Code::kAlreadyExists) return;
  throw std::runtime_error("DeviceClass gpu.nvidia.com: " + created.status().toString());
}

std::string gpuSliceName(const std::string& node) { return "00000-gpu.nvidia.com-" + node; }

std::vector<PublishedGpu> publishGpuSlice(kube::Client& client, const std::string& node,
                                          const std::vector<api::Gpu>& gpus,
                                          const std::set<std::string>& roots) {
  std::vector<PublishedGpu> out;
  std::string devices;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const auto& g = gpus[i];
    if (!roots.empty() && roots.count(g.pcie_root) == 0) continue;
    std::string name = "gpu-" + std::to_string(i);
    out.push_back({name, g.pcie_root});
    if (!devices.empty()) devices += ",";
    devices.append(R"({"name":")").append(name);
    devices.append(R"(","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-)");
    devices.append(node.substr(0, 40)).append("-").append(name);
    devices.append(R"("},"productName":{"string":"NVIDIA A100-SXM4-80GB"},)");
    devices.append(R"("driverVersion":{"version":"595.71.5"},)");
    devices.append(R"("cudaComputeCapability":{"version":"8.0.0"},)");
    devices.append(R"("resource.kubernetes.io/pciBusID":{"string":")").append(g.pci_address);
    devices.append(R"("},"resource.kubernetes.io/pcieRoot":{"string":")").append(g.pcie_root);
    devices.append(R"("}},"capacity":{"memory":{"value":"80Gi"}}})");
  }
  auto slice =
      parseOrThrow(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",)"
                   R"("metadata":{"name":")" +
                   gpuSliceName(node) + R"("},"spec":{"driver":"gpu.nvidia.com","nodeName":")" +
                   node + R"(","pool":{"name":")" + node +
                   R"(","generation":1,"resourceSliceCount":1},"devices":[)" + devices + "]}}");
  check(client.create(api::resources::kResourceSlices, "", slice), "GPU slice of " + node);
  return out;
}

Result<json::Document> createSlice(kube::Client& client, const std::string& name,
                                   const api::ResourceSliceSpec& spec) {
  auto doc = kube::newObject(api::resources::kResourceSlices, "", name);
  spec.encode(api::Writer(doc, doc.GetAllocator()).object("spec"));
  return client.create(api::resources::kResourceSlices, "", doc);
}

std::string createAllocatedClaim(kube::Client& client, const AllocatedClaim& c) {
  std::string requests;
  std::set<std::string> named;
  for (const auto& r : c.results) {
    if (!named.insert(r.request).second) continue;
    if (!requests.empty()) requests += ",";
    requests +=
        R"({"name":")" + r.request + R"(","exactly":{"deviceClassName":")" + r.driver + R"("}})";
  }
  auto created = client.create(
      api::resources::kResourceClaims, c.ns,
      parseOrThrow(
          R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",)"
          R"("metadata":{"name":")" +
          c.name + "\"" +
          (c.extended_resource
               ? R"(,"annotations":{"resource.kubernetes.io/extended-resource-claim":"true"})"
               : "") +
          R"(},"spec":{"devices":{"requests":[)" + requests + "]}}}"));
  check(created, "ResourceClaim " + c.name);

  std::string results;
  for (const auto& r : c.results) {
    if (!results.empty()) results += ",";
    results += R"({"request":")" + r.request + R"(","driver":")" + r.driver + R"(","pool":")" +
               c.node + R"(","device":")" + r.device + R"("})";
  }
  std::string config;
  if (!c.vf_config.empty()) {
    config = R"(,"config":[{"source":"FromClaim","requests":["vf"],"opaque":{"driver":")" +
             std::string(api::kDriverName) +
             R"(","parameters":{"apiVersion":"sriovnetwork.k8snetworkplumbingwg.io/v1alpha1",)"
             R"("kind":"VfConfig",)" +
             c.vf_config + "}}}]";
  }
  std::string status =
      R"({"status":{"allocation":{"devices":{"results":[)" + results + "]" + config +
      R"(},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name",)"
      R"("operator":"In","values":[")" +
      c.node + R"("]}]}]}},"reservedFor":[{"resource":"pods","name":")" + c.pod_name +
      R"(","uid":")" + c.pod_uid + R"("}]}})";
  check(client.patch(api::resources::kResourceClaims, c.ns, c.name, kube::PatchType::kMerge, status,
                     {}, "status"),
        "allocating ResourceClaim " + c.name);
  return kube::ObjectMeta::decode(*created).uid;
}

void releaseClaim(kube::Client& client, const std::string& ns, const std::string& name) {
  check(client.patch(api::resources::kResourceClaims, ns, name, kube::PatchType::kMerge,
                     R"({"status":{"reservedFor":null,"allocation":null}})", {}, "status"),
        "releasing ResourceClaim " + name);
}

std::string createPod(kube::Client& client, const std::string& ns, const std::string& name,
                      const std::string& node, const std::string& labels_json) {
  json::Document pod =
      parseOrThrow(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                   R"(","labels":)" + labels_json + R"(},"spec":{"nodeName":")" + node +
                   R"(","containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}})");
  Result<json::Document> created = Status(Code::kUnavailable, "not tried");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(created = client.create(kube::resources::kPods, ns, pod)).ok() &&
         created.status().code() == Code::kForbidden &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  check(created, "Pod " + name);
  return kube::ObjectMeta::decode(*created).uid;
}

}  // namespace sriovdra::testing
