#include "support/mig_gpus.h"

#include <algorithm>
#include <map>

namespace sriovdra::testing {
namespace {

constexpr int kMemorySlices = 8;
constexpr int kGiPerSlice = 5;
const char* const kProduct = "NVIDIA A100-SXM4-40GB";

using Counters = std::map<std::string, std::string>;

// What a profile takes of its GPU's counters, without the memory slices.
Counters engines(const MigProfile& p) {
  return {{"multiprocessors", std::to_string(p.multiprocessors)},
          {"copy-engines", std::to_string(p.copy_engines)},
          {"decoders", std::to_string(p.decoders)},
          {"encoders", "0"},
          {"jpeg-engines", std::to_string(p.jpeg_engines)},
          {"ofa-engines", std::to_string(p.ofa_engines)},
          {"memory", std::to_string(kGiPerSlice * p.memory_slices) + "Gi"}};
}

// The largest profile's counters and every memory slice: a GPU's counter set, and what the GPU
// whole consumes.
Counters wholeGpu() {
  Counters c = engines(a100MigProfiles().back());
  for (int k = 0; k < kMemorySlices; ++k) c["memory-slice-" + std::to_string(k)] = "1";
  return c;
}

api::SliceDevice device(const std::string& node, const std::string& name, const std::string& type,
                        const api::Gpu& gpu, const std::string& gpu_uuid) {
  api::SliceDevice d{name, {}, {}};
  auto text = [](const std::string& s) { return api::AttributeValue::ofString(s); };
  d.attributes["type"] = text(type);
  d.attributes["uuid"] = text(node + "-" + name);
  d.attributes["productName"] = text(kProduct);
  d.attributes["resource.kubernetes.io/pciBusID"] = text(gpu.pci_address);
  d.attributes["resource.kubernetes.io/pcieRoot"] = text(gpu.pcie_root);
  if (type == "mig") d.attributes["parentUUID"] = text(gpu_uuid);
  return d;
}

}  // namespace

const std::vector<MigProfile>& a100MigProfiles() {
  static const std::vector<MigProfile> kProfiles = {
      {"1g.5gb", 19, 1, {0, 1, 2, 3, 4, 5, 6}, 14, 1, 0, 0, 0},
      {"2g.10gb", 14, 2, {0, 2, 4}, 28, 2, 1, 0, 0},
      {"3g.20gb", 9, 4, {0, 4}, 42, 3, 2, 0, 0},
      {"4g.20gb", 5, 4, {0}, 56, 4, 2, 0, 0},
      {"7g.40gb", 0, 8, {0}, 98, 7, 5, 1, 1}};
  return kProfiles;
}

std::string migDeviceName(size_t gpu, const MigProfile& p, int start) {
  std::string profile = p.name;
  profile.erase(std::remove(profile.begin(), profile.end(), '.'), profile.end());
  return "gpu-" + std::to_string(gpu) + "-mig-" + profile + "-" + std::to_string(p.gi_profile_id) +
         "-" + std::to_string(start);
}

std::vector<std::pair<std::string, api::ResourceSliceSpec>> migGpuSlices(
    const std::string& node, const std::vector<api::Gpu>& gpus, const std::string& prefix) {
  api::ResourceSliceSpec counters;
  counters.driver = "gpu.nvidia.com";
  counters.node_name = node;
  counters.pool = {node, 1, static_cast<int64_t>(gpus.size() + 1)};
  std::vector<std::pair<std::string, api::ResourceSliceSpec>> out;
  for (size_t g = 0; g < gpus.size(); ++g) {
    std::string gpu = "gpu-" + std::to_string(g);
    std::string set = gpu + "-counter-set";
    counters.shared_counters.push_back({set, wholeGpu()});
    api::ResourceSliceSpec devices = counters;
    devices.shared_counters.clear();
    std::string uuid = "GPU-" + node + "-" + gpu;
    auto whole = device(node, gpu, "gpu", gpus[g], uuid);
    whole.consumes_counters.push_back({set, wholeGpu()});
    devices.devices.push_back(std::move(whole));
    for (const auto& p : a100MigProfiles()) {
      for (int start : p.placements) {
        auto d = device(node, migDeviceName(g, p, start), "mig", gpus[g], uuid);
        d.attributes["profile"] = api::AttributeValue::ofString(p.name);
        Counters taken = engines(p);
        for (int k = start; k < start + p.memory_slices; ++k) {
          taken["memory-slice-" + std::to_string(k)] = "1";
        }
        d.consumes_counters.push_back({set, std::move(taken)});
        devices.devices.push_back(std::move(d));
      }
    }
    out.emplace_back(prefix + node + "-" + gpu, std::move(devices));
  }
  out.insert(out.begin(), {prefix + node + "-counters", counters});
  return out;
}

}  // namespace sriovdra::testing
