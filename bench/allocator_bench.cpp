// Allocator throughput for the aligned GPU + VF claim (aligned-resourceclaimtemplate.yaml) on
// 500 nodes x (8 GPUs + 64 VFs; 4 PCIe roots, each with 2 GPUs and 16 VFs), with 0 %, 50 % and
// 95 % of the GPUs already allocated (each with a VF on its root). Two figures per fill level:
//   FirstFit  nodes tried in order from a rotating start until one fits (one claim placed);
//   AllNodes  every node evaluated, as the scheduler's Filter does for each pending pod.
// The cluster state is not changed by the measured claims, so the fill level stays fixed.
#include <algorithm>
#include <random>

#include <benchmark/benchmark.h>

#include "api/names.h"
#include "scheduling/allocator.h"

using namespace sriovdra;

namespace {

constexpr int kNodes = 500;
constexpr int kGpusPerNode = 8;
constexpr int kVfsPerNode = 64;
constexpr int kRoots = 4;
const std::string kGpuDriver = "gpu.nvidia.com";
const std::string kVfDriver(api::kDriverName);
const std::string kRootAttr(api::attr::kPcieRoot);

std::string nodeName(int n) { return "node-" + std::to_string(n); }
std::string rootOf(int index, int per_root) {
  static const char* kNames[kRoots] = {"pci0000:00", "pci0000:3a", "pci0000:80", "pci0000:b9"};
  return kNames[index / per_root];
}

struct Cluster {
  std::unique_ptr<scheduling::Allocator> allocator;
  std::vector<scheduling::ClusterNode> nodes;
  std::set<scheduling::DeviceId> in_use;
  api::ResourceClaimSpec claim;
};

Cluster build(int percent_allocated) {
  Cluster c;
  std::vector<api::ResourceSlice> slices;
  for (int n = 0; n < kNodes; ++n) {
    c.nodes.push_back({nodeName(n), {}});
    for (bool gpu : {true, false}) {
      api::ResourceSlice s;
      s.spec.driver = gpu ? kGpuDriver : kVfDriver;
      s.metadata.name = nodeName(n) + "-" + s.spec.driver;
      s.spec.node_name = nodeName(n);
      s.spec.pool = {nodeName(n), 1, 1};
      int count = gpu ? kGpusPerNode : kVfsPerNode;
      for (int i = 0; i < count; ++i) {
        api::SliceDevice d{(gpu ? "gpu-" : "vf-") + std::to_string(i), {}, {}};
        d.attributes[kRootAttr] = api::AttributeValue::ofString(rootOf(i, count / kRoots));
        if (gpu) {
          d.attributes["type"] = api::AttributeValue::ofString("gpu");
          d.attributes["productName"] = api::AttributeValue::ofString("NVIDIA A100-SXM4-80GB");
          d.capacity["memory"] = "80Gi";
        } else {
          d.attributes[kVfDriver + "/resourceName"] = api::AttributeValue::ofString("cx6_vfs");
          d.attributes[kVfDriver + "/PFName"] =
              api::AttributeValue::ofString("ibp" + std::to_string(i / 8));
          d.attributes[std::string(api::attr::kNumaNode)] =
              api::AttributeValue::ofInt(i < kVfsPerNode / 2 ? 0 : 1);
        }
        s.spec.devices.push_back(std::move(d));
      }
      slices.push_back(std::move(s));
    }
  }
  api::DeviceClass gpu_class, vf_class;
  gpu_class.metadata.name = kGpuDriver;
  gpu_class.spec.cel_selectors = {
      "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"};
  vf_class.metadata.name = kVfDriver;
  vf_class.spec.cel_selectors = {"device.driver == '" + kVfDriver + "'"};
  c.allocator = std::make_unique<scheduling::Allocator>(
      std::move(slices), std::vector<api::DeviceClass>{gpu_class, vf_class});

  api::DeviceSubRequest vf_req{"", kVfDriver, {}};
  vf_req.selectors = {"device.attributes[\"" + kVfDriver + "\"].resourceName == \"cx6_vfs\""};
  c.claim.requests = {{"gpu", api::DeviceSubRequest{"", kGpuDriver, {}}, false, {}},
                      {"vf", vf_req, false, {}}};
  c.claim.constraints = {{{"gpu", "vf"}, kRootAttr, ""}};

  // Allocate GPU/VF pairs on random nodes until the fill level is reached.
  int64_t pairs = static_cast<int64_t>(kNodes) * kGpusPerNode * percent_allocated / 100;
  std::mt19937_64 rng(42);
  std::vector<int> order;
  for (int n = 0; n < kNodes; ++n) {
    for (int g = 0; g < kGpusPerNode; ++g) order.push_back(n * kGpusPerNode + g);
  }
  std::shuffle(order.begin(), order.end(), rng);
  for (int64_t k = 0; k < pairs; ++k) {
    int n = order[static_cast<size_t>(k)] / kGpusPerNode;
    int g = order[static_cast<size_t>(k)] % kGpusPerNode;
    c.in_use.insert({kGpuDriver, nodeName(n), "gpu-" + std::to_string(g)});
    // The VF partner: the first free VF on the GPU's root.
    int per_root = kVfsPerNode / kRoots, root = g / (kGpusPerNode / kRoots);
    for (int v = root * per_root; v < (root + 1) * per_root; ++v) {
      if (c.in_use.insert({kVfDriver, nodeName(n), "vf-" + std::to_string(v)}).second) break;
    }
  }
  return c;
}

void BM_FirstFit(benchmark::State& state) {  // NOLINT(readability-identifier-naming)
  Cluster c = build(static_cast<int>(state.range(0)));
  size_t start = 0, tried = 0;
  int64_t placed = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark's idiom
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      ++tried;
      auto got = c.allocator->allocate(c.claim, c.nodes[(start + i) % c.nodes.size()], c.in_use);
      if (got.fits) {
        ++placed;
        break;
      }
    }
    start = (start + 1) % c.nodes.size();
  }
  state.counters["claims/s"] =
      benchmark::Counter(static_cast<double>(placed), benchmark::Counter::kIsRate);
  state.counters["nodes_tried/claim"] =
      static_cast<double>(tried) / static_cast<double>(std::max<int64_t>(1, state.iterations()));
}

void BM_AllNodes(benchmark::State& state) {  // NOLINT(readability-identifier-naming)
  Cluster c = build(static_cast<int>(state.range(0)));
  int64_t fitting = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark's idiom
    fitting = 0;
    for (const auto& node : c.nodes) fitting += c.allocator->allocate(c.claim, node, c.in_use).fits;
  }
  state.counters["claims/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["nodes/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kNodes,
                                                 benchmark::Counter::kIsRate);
  state.counters["fitting_nodes"] = static_cast<double>(fitting);
}

}  // namespace

BENCHMARK(BM_FirstFit)
    ->Arg(0)
    ->Arg(50)
    ->Arg(95)
    ->ArgName("allocated_pct")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AllNodes)
    ->Arg(0)
    ->Arg(50)
    ->Arg(95)
    ->ArgName("allocated_pct")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
