#include "study/simulate.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <set>

#include "api/names.h"

namespace sriovdra::study {
namespace {

constexpr std::string_view kGpuDriver = "gpu.nvidia.com";

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string nodeName(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "node-%04d", i);
  return buf;
}

// Free devices per node, by index into the server's lists.
struct NodeState {
  std::vector<bool> gpu_used;
  std::vector<bool> vf_used;
};

std::vector<size_t> freeOf(const std::vector<bool>& used, const std::vector<SimDevice>& devices,
                           std::optional<int64_t> numa) {
  std::vector<size_t> out;
  for (size_t i = 0; i < used.size(); ++i) {
    if (!used[i] && (!numa || devices[i].numa == *numa)) out.push_back(i);
  }
  return out;
}

enum class Strategy { kDevicePlugins, kTopologyManager, kDra };

std::string strategyName(Strategy s) {
  switch (s) {
    case Strategy::kDevicePlugins:
      return "device-plugins";
    case Strategy::kTopologyManager:
      return "topology-manager";
    case Strategy::kDra:
      break;
  }
  return "dra-pcieRoot";
}

// A device of the simulated server; both devices of a pod sit on the same server.
scheduling::DevicePlacement placementOf(const SimDevice& d, const std::string& kind) {
  scheduling::DevicePlacement p;
  p.kind = kind;
  p.node = "server";
  p.pcie_root = d.pcie_root;
  p.pcie_switch = d.pcie_switch;
  p.numa = d.numa;
  return p;
}

class Study {
 public:
  explicit Study(const SimulationInput& in) : in_(in) {}

  StrategyResult run(Strategy strategy) {
    StrategyResult r;
    r.name = strategyName(strategy);
    for (scheduling::PairAlignment a : scheduling::kAllAlignments) r.pairs[a] = 0;
    std::mt19937_64 rng(in_.seed);
    std::vector<NodeState> nodes(static_cast<size_t>(in_.nodes),
                                 NodeState{std::vector<bool>(in_.server.gpus.size()),
                                           std::vector<bool>(in_.server.vfs.size())});
    std::unique_ptr<scheduling::Allocator> allocator;
    std::set<scheduling::DeviceId> in_use;
    if (strategy == Strategy::kDra) allocator = makeAllocator();
    std::vector<size_t> order(nodes.size());
    std::iota(order.begin(), order.end(), 0);
    for (int pod = 0; pod < in_.pods; ++pod) {
      std::shuffle(order.begin(), order.end(), rng);
      std::optional<std::pair<size_t, size_t>> placed;  // gpu, vf
      for (size_t n : order) {
        placed = allocator ? viaAllocator(*allocator, n, in_use)
                           : viaPlugins(strategy == Strategy::kTopologyManager, nodes[n], rng);
        if (!placed) continue;
        nodes[n].gpu_used[placed->first] = true;
        nodes[n].vf_used[placed->second] = true;
        break;
      }
      if (!placed) {
        ++r.pending;
        continue;
      }
      ++r.scheduled;
      scheduling::PairAlignment a =
          scheduling::classify(placementOf(in_.server.gpus[placed->first], "gpu"),
                               placementOf(in_.server.vfs[placed->second], "vf"));
      ++r.pairs[a];
      r.mean_gbps += in_.figures.gbps(a);
      r.mean_kv_ms += in_.figures.kvMs(a);
    }
    if (r.scheduled > 0) {
      r.mean_gbps /= static_cast<double>(r.scheduled);
      r.mean_kv_ms /= static_cast<double>(r.scheduled);
    }
    return r;
  }

 private:
  // Device plugins pick independently at random; with the topology manager, within the lowest
  // NUMA node that has both a free GPU and a free VF.
  std::optional<std::pair<size_t, size_t>> viaPlugins(bool single_numa_node, const NodeState& node,
                                                      std::mt19937_64& rng) const {
    std::optional<int64_t> numa;
    if (single_numa_node) {
      std::set<int64_t> numas;
      for (const auto& g : in_.server.gpus) numas.insert(g.numa);
      for (int64_t n : numas) {
        if (!freeOf(node.gpu_used, in_.server.gpus, n).empty() &&
            !freeOf(node.vf_used, in_.server.vfs, n).empty()) {
          numa = n;
          break;
        }
      }
      if (!numa) return std::nullopt;
    }
    auto gpus = freeOf(node.gpu_used, in_.server.gpus, numa);
    auto vfs = freeOf(node.vf_used, in_.server.vfs, numa);
    if (gpus.empty() || vfs.empty()) return std::nullopt;
    auto pick = [&](const std::vector<size_t>& v) {
      return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
    };
    size_t g = pick(gpus);
    return std::make_pair(g, pick(vfs));
  }

  std::unique_ptr<scheduling::Allocator> makeAllocator() {
    std::vector<api::ResourceSlice> slices;
    for (int n = 0; n < in_.nodes; ++n) {
      for (bool gpu : {true, false}) {
        api::ResourceSlice s;
        s.spec.driver = std::string(gpu ? kGpuDriver : api::kDriverName);
        s.metadata.name = nodeName(n) + "-" + s.spec.driver;
        s.spec.node_name = nodeName(n);
        s.spec.pool = {nodeName(n), 0, 1};
        const auto& devices = gpu ? in_.server.gpus : in_.server.vfs;
        for (const auto& d : devices) {
          api::SliceDevice sd{d.name, {}, {}};
          sd.attributes[std::string(api::attr::kPcieRoot)] =
              api::AttributeValue::ofString(d.pcie_root);
          if (gpu) {
            sd.attributes["type"] = api::AttributeValue::ofString("gpu");
          } else {
            sd.attributes[std::string(api::attr::kNumaNode)] = api::AttributeValue::ofInt(d.numa);
          }
          s.spec.devices.push_back(std::move(sd));
        }
        slices.push_back(std::move(s));
      }
    }
    api::DeviceClass gpu_class, vf_class;
    gpu_class.metadata.name = std::string(kGpuDriver);
    gpu_class.spec.cel_selectors = {
        "device.driver == 'gpu.nvidia.com' && "
        "device.attributes['gpu.nvidia.com'].type == 'gpu'"};
    vf_class.metadata.name = std::string(api::kDriverName);
    vf_class.spec.cel_selectors = {"device.driver == '" + std::string(api::kDriverName) + "'"};
    claim_.requests = {{"gpu", api::DeviceSubRequest{"", gpu_class.metadata.name, {}}, false, {}},
                       {"vf", api::DeviceSubRequest{"", vf_class.metadata.name, {}}, false, {}}};
    claim_.constraints = {{{"gpu", "vf"}, std::string(api::attr::kPcieRoot), ""}};
    for (size_t i = 0; i < in_.server.gpus.size(); ++i) gpu_index_[in_.server.gpus[i].name] = i;
    for (size_t i = 0; i < in_.server.vfs.size(); ++i) vf_index_[in_.server.vfs[i].name] = i;
    return std::make_unique<scheduling::Allocator>(
        std::move(slices), std::vector<api::DeviceClass>{gpu_class, vf_class});
  }

  std::optional<std::pair<size_t, size_t>> viaAllocator(scheduling::Allocator& a, size_t n,
                                                        std::set<scheduling::DeviceId>& in_use) {
    auto got = a.allocate(claim_, {nodeName(static_cast<int>(n)), {}}, in_use);
    if (!got.fits) return std::nullopt;
    size_t g = 0, v = 0;
    for (const auto& d : got.devices) {
      in_use.insert(d.id);
      (d.request == "gpu" ? g : v) = (d.request == "gpu" ? gpu_index_ : vf_index_).at(d.id.device);
    }
    return std::make_pair(g, v);
  }

  const SimulationInput& in_;
  api::ResourceClaimSpec claim_;
  std::map<std::string, size_t> gpu_index_, vf_index_;
};

}  // namespace

double Figures::gbps(scheduling::PairAlignment a) const {
  switch (a) {
    case scheduling::PairAlignment::kSameSwitch:
    case scheduling::PairAlignment::kSameRoot:
      return gbps_aligned;
    case scheduling::PairAlignment::kSameNuma:
      return gbps_same_numa;
    default:
      return gbps_cross_numa;
  }
}

double Figures::kvMs(scheduling::PairAlignment a) const {
  switch (a) {
    case scheduling::PairAlignment::kSameSwitch:
    case scheduling::PairAlignment::kSameRoot:
      return kv_ms_aligned;
    case scheduling::PairAlignment::kSameNuma:
      return kv_ms_same_numa.value_or(kv_ms_aligned * gbps_aligned / gbps_same_numa);
    default:
      return kv_ms_cross_numa;
  }
}

SimServer serverFromTopology(const host::Topology& topology, int vfs_per_pf) {
  SimServer s;
  for (const auto& g : topology.gpus) {
    s.gpus.push_back(
        {"gpu-" + std::to_string(s.gpus.size()), g.pcie_root, g.pcie_switch, g.numa_node});
  }
  for (const auto& pf : topology.pfs) {
    if (pf.total_vfs == 0) continue;
    for (int v = 0; v < vfs_per_pf && v < pf.total_vfs; ++v) {
      s.vfs.push_back(
          {pf.name + "-vf" + std::to_string(v), pf.pcie_root, pf.pcie_switch, pf.numa_node});
    }
  }
  return s;
}

std::vector<StrategyResult> simulate(const SimulationInput& input) {
  std::vector<StrategyResult> out;
  for (Strategy s : {Strategy::kDevicePlugins, Strategy::kTopologyManager, Strategy::kDra}) {
    Study study(input);
    out.push_back(study.run(s));
  }
  return out;
}

std::string markdownTable(const SimulationInput& input,
                          const std::vector<StrategyResult>& results) {
  std::string out = "| strategy | scheduled | pending |";
  std::string rule = "|---|---:|---:|";
  for (scheduling::PairAlignment a : scheduling::kAllAlignments) {
    out += " " + std::string(scheduling::alignmentName(a)) + " |";
    rule += "---:|";
  }
  out += " RDMA Gbit/s per pod | KV transfer ms (" + fixed(input.figures.kv_mb, 2) + " MB) |\n";
  out += rule + "---:|---:|\n";
  for (const auto& r : results) {
    out += "| " + r.name + " | " + std::to_string(r.scheduled) + " | " + std::to_string(r.pending) +
           " |";
    for (scheduling::PairAlignment a : scheduling::kAllAlignments) {
      double share = r.scheduled > 0 ? 100.0 * static_cast<double>(r.pairs.at(a)) /
                                           static_cast<double>(r.scheduled)
                                     : 0;
      out += " " + fixed(share, 1) + " % |";
    }
    out += " " + fixed(r.mean_gbps, 1) + " | " + fixed(r.mean_kv_ms, 2) + " |\n";
  }
  return out;
}

std::string csvTable(const std::vector<StrategyResult>& results) {
  std::string out = "strategy,scheduled,pending";
  for (scheduling::PairAlignment a : scheduling::kAllAlignments)
    out += "," + std::string(scheduling::alignmentLabel(a));
  out += ",mean_gbps,mean_kv_ms\n";
  for (const auto& r : results) {
    out += r.name + "," + std::to_string(r.scheduled) + "," + std::to_string(r.pending);
    for (scheduling::PairAlignment a : scheduling::kAllAlignments)
      out += "," + std::to_string(r.pairs.at(a));
    out += "," + fixed(r.mean_gbps, 2) + "," + fixed(r.mean_kv_ms, 2) + "\n";
  }
  return out;
}

}  // namespace sriovdra::study
