// SimulatedKernel: the VF counters its PF drivers report (simulated_kernel.h).
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "base/strings.h"
#include "host/simulated_kernel.h"

namespace sriovdra::host {
namespace {

// The counters in the order of IFLA_VF_STATS_*, under the names the state files use.
constexpr std::pair<const char*, uint64_t VfStats::*> kCounters[] = {
    {"rx_packets", &VfStats::rx_packets}, {"tx_packets", &VfStats::tx_packets},
    {"rx_bytes", &VfStats::rx_bytes},     {"tx_bytes", &VfStats::tx_bytes},
    {"broadcast", &VfStats::broadcast},   {"multicast", &VfStats::multicast},
    {"rx_dropped", &VfStats::rx_dropped}, {"tx_dropped", &VfStats::tx_dropped},
};

}  // namespace

int32_t SimulatedKernel::numVfs(const std::string& pf_dir) const {
  return static_cast<int32_t>(
      std::strtol(fs_.read(pf_dir + "/sriov_numvfs").valueOr("0").c_str(), nullptr, 10));
}

VfStats SimulatedKernel::vfStatsOf(const std::string& pf_dir, int32_t vf) const {
  VfStats stats;
  stats.vf = vf;
  auto text = fs_.read(kVfStatsDir + baseName(pf_dir) + "/" + std::to_string(vf));
  if (!text.ok()) return stats;
  for (const auto& [key, value] : keyValueLines(*text)) {
    for (const auto& [name, counter] : kCounters) {
      if (key == name) stats.*counter = std::strtoull(value.c_str(), nullptr, 10);
    }
  }
  return stats;
}

Result<std::vector<VfStats>> SimulatedKernel::vfStats(std::string_view pf) const {
  std::lock_guard lock(mu_);
  auto pf_dir = vfPfDir(pf);
  if (!pf_dir.ok()) return pf_dir.status();
  std::vector<VfStats> out;
  if (fs_.exists(*pf_dir + "/physfn")) return out;  // a VF's netdev lists no VFs
  int32_t count = numVfs(*pf_dir);
  for (int32_t vf = 0; vf < count; ++vf) out.push_back(vfStatsOf(*pf_dir, vf));
  return out;
}

Status SimulatedKernel::addVfTraffic(std::string_view pf, const VfStats& traffic) {
  std::lock_guard lock(mu_);
  auto pf_dir = vfPfDir(pf);
  if (!pf_dir.ok()) return pf_dir.status();
  if (fs_.exists(*pf_dir + "/physfn") || traffic.vf < 0 || traffic.vf >= numVfs(*pf_dir)) {
    return Status::fromErrno(EINVAL, std::string(pf) + " has no VF " + std::to_string(traffic.vf));
  }
  VfStats now = vfStatsOf(*pf_dir, traffic.vf);
  std::string text;
  for (const auto& [name, counter] : kCounters) {
    text += std::string(name) + "=" + std::to_string(now.*counter + traffic.*counter) + "\n";
  }
  return tree_.file(kVfStatsDir + baseName(*pf_dir) + "/" + std::to_string(traffic.vf), text);
}

}  // namespace sriovdra::host
