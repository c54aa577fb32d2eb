#pragma once
// resource.k8s.io objects that tests write in the place of other actors:
// * the GPU side of the reference cluster, published the way the NVIDIA GPU DRA driver does
//   (driver gpu.nvidia.com, pool = node name, devices gpu-<index> with type, uuid, productName,
//   driverVersion, resource.kubernetes.io/pciBusID and pcieRoot, 80Gi of memory), and the
//   gpu.nvidia.com DeviceClass that selects them;
// * a ResourceClaim allocated by hand the way kube-scheduler writes one (results, node selector,
//   reservedFor), for tests of the tools and the kubelet plugin that need an exact allocation;
// * a pod bound to a node, as kube-scheduler leaves it.
// Every helper throws std::runtime_error with the API server's answer when a write fails.
#include <set>
#include <string>
#include <vector>

#include "api/node_state.h"
#include "api/resource.h"
#include "kube/client.h"

namespace sriovdra::testing {

inline constexpr const char* kGpuDriver = "gpu.nvidia.com";

// Creates the gpu.nvidia.com DeviceClass (kept if it exists), whole GPUs, backing the extended
// resource nvidia.com/gpu as the NVIDIA driver's chart does.
void createGpuDeviceClass(kube::Client& client);

struct PublishedGpu {
  std::string device;     // gpu-<index>
  std::string pcie_root;  // pci0000:b9
};

// The name of node's GPU ResourceSlice.
std::string gpuSliceName(const std::string& node);
// Publishes node's GPU ResourceSlice from the GPUs its agent discovered (only those on `roots`,
// when given; device names keep the index among all GPUs). Returns what was published.
std::vector<PublishedGpu> publishGpuSlice(kube::Client& client, const std::string& node,
                                          const std::vector<api::Gpu>& gpus,
                                          const std::set<std::string>& roots = {});

// Creates the ResourceSlice `name` with `spec` through our codec, as `client`; the API server's
// answer (not thrown: tests also check refusals).
Result<json::Document> createSlice(kube::Client& client, const std::string& name,
                                   const api::ResourceSliceSpec& spec);

struct DeviceResult {
  std::string request;
  std::string driver;
  std::string device;
};

struct AllocatedClaim {
  std::string ns;
  std::string name;
  std::string node;  // pool and node selector (node-local pools: pool name = node name)
  std::vector<DeviceResult> results;
  // Opaque VfConfig parameters for request "vf" after apiVersion and kind, as JSON members
  // ("\"ifName\":\"net1\""); empty = no config.
  std::string vf_config;
  std::string pod_name;
  std::string pod_uid;
  // Made by kube-scheduler for a container's extended resource (annotated so, as it does).
  bool extended_resource = false;
};

// Creates the claim (one request per distinct result request, from the class named like the
// result's driver) and writes its allocation. Returns the claim's uid.
std::string createAllocatedClaim(kube::Client& client, const AllocatedClaim& claim);

// What Kubernetes' resourceclaim controller writes once the claim's pod is gone: reservedFor
// emptied and the allocation removed.
void releaseClaim(kube::Client& client, const std::string& ns, const std::string& name);

// A pod bound to `node` (spec.nodeName; one pause container, labels as given), as kube-scheduler
// leaves it; no kubelet runs it. Retried while the namespace's default ServiceAccount does not
// exist yet (it appears shortly after the namespace). Returns the pod's uid.
std::string createPod(kube::Client& client, const std::string& ns, const std::string& name,
                      const std::string& node, const std::string& labels_json = "{}");

}  // namespace sriovdra::testing
