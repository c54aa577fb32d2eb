// SimulatedKernel: the VF counters its PF drivers report (simulated_kernel.h).
#include <cerrno>
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
  auto of = vfsOf(pf);
  if (!of.ok()) return of.status();
  const auto& [pf_dir, count] = *of;
  std::vector<VfStats> out;
  out.reserve(static_cast<size_t>(count));
  for (int32_t vf = 0; vf < count; ++vf) out.push_back(vfStatsOf(pf_dir, vf));
  return out;
}

Status SimulatedKernel::addVfTraffic(std::string_view pf, const VfStats& traffic) {
  std::lock_guard lock(mu_);
  auto of = vfsOf(pf);
  if (!of.ok()) return of.status();
  const auto& [pf_dir, count] = *of;
  if (traffic.vf < 0 || traffic.vf >= count) {
    return Status::fromErrno(EINVAL, std::string(pf) + " has no VF " + std::to_string(traffic.vf));
  }
  VfStats now = vfStatsOf(pf_dir, traffic.vf);
  std::string text;
  for (const auto& [name, counter] : kCounters) {
    text += std::string(name) + "=" + std::to_string(now.*counter + traffic.*counter) + "\n";
  }
  return tree_.file(kVfStatsDir + baseName(pf_dir) + "/" + std::to_string(traffic.vf), text);
}

}  // namespace sriovdra::host
