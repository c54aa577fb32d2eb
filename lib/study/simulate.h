#pragma once
// The placement study: a cluster of identical servers filled with pods that each want one GPU
// and one VF, placed three ways, and what that costs in RDMA bandwidth. Pure and deterministic
// for a seed.
//   device-plugins   GPU and VF picked independently at random (two device plugins);
//   topology-manager GPU and VF from one NUMA node (single-numa-node policy: the lowest NUMA
//                    node with both free), each picked at random within it;
//   dra-pcieRoot     the structured allocator (scheduling/allocator.h) with the aligned claim
//                    (matchAttribute resource.kubernetes.io/pcieRoot) on published slices.
// Each pod goes to a node chosen uniformly among those where its strategy can place it; a pod
// no node can take is pending. Bandwidth and KV-cache transfer time per pod come from the
// alignment class of its pair and the measured figures (parameters, with the published values
// as defaults; the same-NUMA transfer time, never measured, is scaled from bandwidth).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/model.h"
#include "scheduling/alignment.h"

namespace sriovdra::study {

struct SimDevice {
  std::string name;
  std::string pcie_root;
  std::string pcie_switch;
  int64_t numa = -1;
};

// One server: its GPUs and VFs.
struct SimServer {
  std::vector<SimDevice> gpus;
  std::vector<SimDevice> vfs;
};

// The server a discovered topology describes, with `vfs_per_pf` VFs on every SR-IOV PF.
SimServer serverFromTopology(const host::Topology& topology, int vfs_per_pf);

struct Figures {
  double gbps_aligned = 194.6;  // ib_write_bw, same PCIe root (switch)
  double gbps_same_numa = 127.1;
  double gbps_cross_numa = 110.0;
  double kv_mb = 1175.81;  // one prefill->decode KV-cache transfer
  double kv_ms_aligned = 56.78;
  double kv_ms_cross_numa = 122.32;
  std::optional<double> kv_ms_same_numa;  // default: kv_ms_aligned * gbps_aligned / gbps_same_numa

  double gbps(scheduling::PairAlignment a) const;
  double kvMs(scheduling::PairAlignment a) const;
};

struct SimulationInput {
  SimServer server;
  int nodes = 1;
  int pods = 8;
  uint64_t seed = 1;
  Figures figures;
};

struct StrategyResult {
  std::string name;
  int64_t scheduled = 0;
  int64_t pending = 0;
  std::map<scheduling::PairAlignment, int64_t>
      pairs;             // scheduled pods by the alignment of their pair
  double mean_gbps = 0;  // over scheduled pods
  double mean_kv_ms = 0;
};

std::vector<StrategyResult> simulate(const SimulationInput& input);

// The results as a Markdown table (shares in percent) and as CSV (counts).
std::string markdownTable(const SimulationInput& input, const std::vector<StrategyResult>& results);
std::string csvTable(const std::vector<StrategyResult>& results);

}  // namespace sriovdra::study
