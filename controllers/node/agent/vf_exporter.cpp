#include "node/agent/vf_exporter.h"

#include <algorithm>
#include <utility>

#include "base/log.h"
#include "node/state/local_state.h"

namespace sriovdra::agent {
namespace {

using Label = prometheus::ClientMetric::Label;

// Upstream's names for the counters of host::VfStats (its netlink reader's), bytes first.
constexpr std::pair<const char*, uint64_t host::VfStats::*> kStats[] = {
    {"rx_bytes", &host::VfStats::rx_bytes},      {"tx_bytes", &host::VfStats::tx_bytes},
    {"rx_packets", &host::VfStats::rx_packets},  {"tx_packets", &host::VfStats::tx_packets},
    {"rx_dropped", &host::VfStats::rx_dropped},  {"tx_dropped", &host::VfStats::tx_dropped},
    {"rx_broadcast", &host::VfStats::broadcast}, {"rx_multicast", &host::VfStats::multicast},
};

prometheus::ClientMetric sample(std::vector<Label> labels, double value) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = value;
  return m;
}

}  // namespace

std::vector<prometheus::MetricFamily> vfFamilies(
    const std::vector<api::InterfaceExt>& pfs,
    const std::map<std::string, std::vector<host::VfStats>>& stats,
    const dra::Checkpoint& checkpoint) {
  std::vector<prometheus::MetricFamily> out;
  for (const auto& [stat, counter] : kStats) {
    out.push_back({.name = std::string("sriov_vf_") + stat,
                   .help = std::string("Statistic ") + stat + ".",
                   .type = prometheus::MetricType::Counter});
  }
  for (const auto& pf : pfs) {
    auto read = stats.find(pf.name);
    if (pf.name.empty() || read == stats.end()) continue;
    std::string numa = pf.numa_node >= 0 ? std::to_string(pf.numa_node) : "";
    for (const auto& vf : pf.vfs) {
      auto counters = std::find_if(read->second.begin(), read->second.end(),
                                   [&](const host::VfStats& s) { return s.vf == vf.vf_id; });
      if (counters == read->second.end()) continue;
      std::vector<Label> labels{{"numa_node", numa},
                                {"pciAddr", vf.pci_address},
                                {"pf", pf.name},
                                {"vf", std::to_string(vf.vf_id)}};
      for (size_t i = 0; i < std::size(kStats); ++i) {
        out[i].metric.push_back(sample(labels, static_cast<double>((*counters).*kStats[i].second)));
      }
    }
  }
  prometheus::MetricFamily pods{.name = "sriov_kubepoddevice",
                                .help = "kubepoddevice",
                                .type = prometheus::MetricType::Counter};
  for (const auto& [uid, claim] : checkpoint.claims) {
    if (claim.state != dra::PreparedClaim::State::kPrepared) continue;
    for (const auto& d : claim.devices) {
      pods.metric.push_back(sample({{"container", ""},
                                    {"dev_type", d.resource_name},
                                    {"namespace", claim.namespace_},
                                    {"pciAddr", d.pci_address},
                                    {"pod", claim.pod_name}},
                                   1));
    }
  }
  out.push_back(std::move(pods));
  return out;
}

void VfExporter::refresh(const std::vector<api::InterfaceExt>& pfs) const {
  auto now = std::chrono::steady_clock::now();
  if (read_at_ && now - *read_at_ < kReuseFor) return;
  read_at_ = now;
  stats_.clear();
  for (const auto& pf : pfs) {
    if (pf.vfs.empty() || pf.name.empty()) continue;
    auto read = netlink_->vfStats(pf.name);
    if (read.ok()) {
      stats_[pf.name] = std::move(*read);
      if (failing_.erase(pf.name) != 0) {
        SDRA_LOG_INFO << "VF counters of " << pf.name << " are read again";
      }
    } else if (failing_.insert(pf.name).second) {
      SDRA_LOG_WARN << "VF counters of " << pf.name
                    << " left out of /metrics until they can be read: " << read.status().message();
    }
  }
}

std::vector<prometheus::MetricFamily> VfExporter::Collect() const {
  auto pfs = local_.discoveredPfs();
  std::map<std::string, std::vector<host::VfStats>> stats;
  {
    std::lock_guard lock(mu_);
    refresh(pfs);
    stats = stats_;
  }
  return vfFamilies(pfs, stats, local_.checkpoint());
}

}  // namespace sriovdra::agent
