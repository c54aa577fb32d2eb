#pragma once
// The NVIDIA GPU DRA driver's kubelet plugin, as much of it as a real node needs for the tests: a
// kubelet asks every driver of a pod's claim to prepare it, and there is no GPU (or its driver)
// here. Registers as gpu.nvidia.com with the kubelet's plugin registry and prepares a claim's
// gpu.nvidia.com devices as allocated (its helper read the claims), with no CDI edits; unprepare
// does nothing. The GPUs' side in the API (ResourceSlices, DeviceClass) is dra_objects.h; with
// keepPublished() the plugin publishes its node's slice again when it is gone, as the driver's
// ResourceSlice controller does (a kubelet deletes its node's slices when it starts).
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/node_state.h"
#include "kube/client.h"
#include "node/kubelet_plugin/dra_driver.h"
#include "node/kubelet_plugin/grpc_server.h"

namespace sriovdra::testing {

class GpuKubeletPlugin : public kubelet_plugin::DraDriver {
 public:
  // Serves <plugins_dir>/gpu.nvidia.com/dra.sock and registers in registry_dir; throws on failure.
  GpuKubeletPlugin(std::shared_ptr<kube::Client> client, const std::string& registry_dir,
                   const std::string& plugins_dir);
  ~GpuKubeletPlugin() override;

  std::map<std::string, kubelet_plugin::PrepareResult> prepare(
      const std::vector<api::ResourceClaim>& claims) override;
  std::map<std::string, std::string> unprepare(
      const std::vector<kubelet_plugin::ClaimRef>& claims) override;

  // From now on (every 500 ms until the plugin goes), publishes node's GPU slice of `gpus`
  // (dra_objects.h) again when the API server has none.
  void keepPublished(const std::string& node, const std::vector<api::Gpu>& gpus);

 private:
  std::shared_ptr<kube::Client> client_;
  kubelet_plugin::Helper helper_;
  std::unique_ptr<kubelet_plugin::GrpcServer> server_;
  std::jthread keeper_;
};

}  // namespace sriovdra::testing
