// Discovery time on a node with 16 PFs x 256 VFs (4,096 VFs), through the simulated kernel's
// tree on disk, and the cost of building its ResourceSlices.
#include <filesystem>

#include <benchmark/benchmark.h>

#include "api/names.h"
#include "dra/slices.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"

using namespace sriovdra;

namespace {

struct Node {
  std::string root;
  Node() {
    root = (std::filesystem::temp_directory_path() / "sriov-dra-bench-many-pfs").string();
    std::filesystem::remove_all(root);
    if (!host::writeFixture("many-pfs", root).isOk()) std::abort();
    host::SimulatedKernel k(root);
    auto t = host::discover(k, k);
    for (const auto& pf : t->pfs) {
      if (!k.write("sys/bus/pci/devices/" + pf.pci_address + "/sriov_numvfs", "256").isOk())
        std::abort();
    }
  }
  ~Node() { std::filesystem::remove_all(root); }
};

Node& node() {
  static Node n;
  return n;
}

void BM_Discover16x256(benchmark::State& state) {  // NOLINT(readability-identifier-naming)
  host::SimulatedKernel fs(node().root);
  size_t vfs = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark's idiom
    auto t = host::discover(fs, fs);
    vfs = 0;
    for (const auto& pf : t->pfs) vfs += pf.vfs.size();
    benchmark::DoNotOptimize(t);
  }
  state.counters["VFs"] = static_cast<double>(vfs);
}
BENCHMARK(BM_Discover16x256)->Unit(benchmark::kMillisecond);

void BM_BuildSlices4096(benchmark::State& state) {  // NOLINT(readability-identifier-naming)
  host::SimulatedKernel fs(node().root);
  auto t = host::discover(fs, fs);
  std::vector<api::Device> devices;
  for (const auto& pf : t->pfs) {
    for (const auto& vf : pf.vfs) {
      devices.push_back(
          {api::deviceName(vf.pci_address),
           vf.pci_address,
           {{std::string(api::attr::kResourceName), api::AttributeValue::ofString("e810")}}});
    }
  }
  auto first = dra::buildSlices("n", devices, t->pfs, {});
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark's idiom
    auto set = dra::buildSlices("n", devices, t->pfs, first.slices);
    benchmark::DoNotOptimize(set);
  }
  state.counters["slices"] = static_cast<double>(first.slices.size());
}
BENCHMARK(BM_BuildSlices4096)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
