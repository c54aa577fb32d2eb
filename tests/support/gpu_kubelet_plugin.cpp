#include "support/gpu_kubelet_plugin.h"

#include <stdexcept>

#include "api/names.h"
#include "api/resource.h"
#include "support/dra_objects.h"

namespace sriovdra::testing {

GpuKubeletPlugin::GpuKubeletPlugin(std::shared_ptr<kube::Client> client,
                                   const std::string& registry_dir, const std::string& plugins_dir)
    : client_(std::move(client)) {
  auto served = kubelet_plugin::GrpcServer::start(
      *this, {.driver_name = kGpuDriver, .registry_dir = registry_dir, .plugins_dir = plugins_dir});
  if (!served.ok()) throw std::runtime_error("GPU kubelet plugin: " + served.status().toString());
  server_ = std::move(*served);
}

GpuKubeletPlugin::~GpuKubeletPlugin() { server_->stop(); }

std::map<std::string, kubelet_plugin::PrepareResult> GpuKubeletPlugin::prepare(
    const std::vector<kubelet_plugin::ClaimRef>& claims) {
  std::map<std::string, kubelet_plugin::PrepareResult> out;
  for (const auto& ref : claims) {
    auto& result = out[ref.uid];
    auto got = client_->get(api::resources::kResourceClaims, ref.namespace_, ref.name);
    auto claim =
        got.ok() ? api::ResourceClaim::decode(*got) : Result<api::ResourceClaim>(got.status());
    if (!claim.ok() || !claim->status.allocation) {
      result.error = "ResourceClaim " + ref.namespace_ + "/" + ref.name + " is not allocated";
      continue;
    }
    for (const auto& r : claim->status.allocation->results) {
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
