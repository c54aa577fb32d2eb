#include "support/gpu_kubelet_plugin.h"

#include <stdexcept>

#include "api/names.h"
#include "api/resource.h"
#include "support/dra_objects.h"
#include "support/poll.h"

namespace sriovdra::testing {

GpuKubeletPlugin::GpuKubeletPlugin(std::shared_ptr<kube::Client> client,
                                   const std::string& registry_dir, const std::string& plugins_dir)
    : client_(client), helper_(*this, std::move(client)) {
  auto served = kubelet_plugin::GrpcServer::start(
      helper_,
      {.driver_name = kGpuDriver, .registry_dir = registry_dir, .plugins_dir = plugins_dir});
  if (!served.ok()) throw std::runtime_error("GPU kubelet plugin: " + served.status().toString());
  server_ = std::move(*served);
}

GpuKubeletPlugin::~GpuKubeletPlugin() {
  keeper_ = {};
  server_->stop();
}

void GpuKubeletPlugin::keepPublished(const std::string& node, const std::vector<api::Gpu>& gpus) {
  keeper_ = std::jthread([this, node, gpus](const std::stop_token& stop) {
    // A failed publish (created meanwhile, the API server away) is printed; the next round
    // looks again.
    repeatUntilStopped(stop, std::chrono::milliseconds(500), "GPU slice keeper", [&] {
      auto got = client_->get(api::resources::kResourceSlices, "", gpuSliceName(node));
      if (!got.ok() && got.status().code() == Code::kNotFound)
        publishGpuSlice(*client_, node, gpus);
    });
  });
}

std::map<std::string, kubelet_plugin::PrepareResult> GpuKubeletPlugin::prepare(
    const std::vector<api::ResourceClaim>& claims) {
  std::map<std::string, kubelet_plugin::PrepareResult> out;
  for (const auto& claim : claims) {
    auto& result = out[claim.metadata.uid];
    for (const auto& r : claim.status.allocation->results) {
      if (r.driver == kGpuDriver) result.devices.push_back({{r.request}, r.pool, r.device, {}});
    }
  }
  return out;
}

std::map<std::string, std::string> GpuKubeletPlugin::unprepare(
    const std::vector<kubelet_plugin::ClaimRef>& claims) {
  std::map<std::string, std::string> out;
  for (const auto& ref : claims) out[ref.uid] = "";
  return out;
}

}  // namespace sriovdra::testing
