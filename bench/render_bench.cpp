// Cost of render(): one node with 8 PFs x 8 VFs (64 VFs) and 20 policies (10 node policies
// splitting the PFs into VF ranges, 5 resource policies, 5 DeviceAttributes), and a full pass
// over 1,000 such nodes, with heap allocations counted.
#include <atomic>
#include <cstdlib>
#include <new>

#include <benchmark/benchmark.h>

#include "policy/policy_set.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;

namespace {

std::atomic<int64_t> g_allocations{0};

struct Policies {
  std::vector<api::SriovNetworkNodePolicy> np;
  std::vector<api::SriovResourcePolicy> rp;
  std::vector<api::DeviceAttributes> da;
  policy::Policies view() const {
    policy::Policies v;
    for (const auto& p : np) v.node_policies.push_back(&p);
    for (const auto& p : rp) v.resource_policies.push_back(&p);
    for (const auto& d : da) v.device_attributes.push_back(&d);
    return v;
  }
};

Policies twentyPolicies() {
  Policies out;
  for (int i = 0; i < 10; ++i) {
    api::SriovNetworkNodePolicy p;
    p.metadata.name = "np-" + std::to_string(i);
    p.spec.resource_name = "res_" + std::to_string(i % 5);
    p.spec.priority = 10 + i;
    p.spec.num_vfs = 8;
    p.spec.node_selector = {{"sriov", "true"}};
    int pf = i % 8;
    p.spec.nic_selector.pf_names = {"ens" + std::to_string(pf) + (i < 8 ? "#0-3" : "#4-7")};
    out.np.push_back(std::move(p));
  }
  for (int i = 0; i < 5; ++i) {
    api::SriovResourcePolicy p;
    p.metadata.name = "rp-" + std::to_string(i);
    api::ResourcePolicyConfig c;
    c.device_attributes_selector = api::LabelSelector{{{"pool", "p" + std::to_string(i)}}, {}};
    c.resource_filters = {{.pf_names = {"ens" + std::to_string(i), "ens" + std::to_string(i + 3)}}};
    p.configs.push_back(std::move(c));
    out.rp.push_back(std::move(p));
    api::DeviceAttributes d;
    d.metadata.name = "da-" + std::to_string(i);
    d.metadata.labels = {{"pool", "p" + std::to_string(i)}};
    d.attributes = {{"example.com/tier", api::AttributeValue::ofString("t" + std::to_string(i))},
                    {"example.com/rail", api::AttributeValue::ofInt(i)}};
    out.da.push_back(std::move(d));
  }
  return out;
}

void BM_RenderOneNode(benchmark::State& state) {  // NOLINT(readability-identifier-naming)
  auto status = testing::fixture::ethernetStatus(8, 8);
  auto policies = twentyPolicies();
  auto validated = policy::validatePolicies(policies.view());
  api::Node node;
  node.metadata.name = "n";
  node.metadata.labels = {{"sriov", "true"}};
  int64_t before = g_allocations.load();
  for (auto _ : state) {
    auto r = policy::render(node, validated.valid, status, {});
    benchmark::DoNotOptimize(r);
  }
  state.counters["allocs/render"] = benchmark::Counter(
      static_cast<double>(g_allocations.load() - before) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_RenderOneNode);

void BM_Render1000Nodes(benchmark::State& state) {  // NOLINT(readability-identifier-naming)
  auto status = testing::fixture::ethernetStatus(8, 8);
  auto policies = twentyPolicies();
  std::vector<api::Node> nodes(1000);
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].metadata.name = "node-" + std::to_string(i);
    nodes[i].metadata.labels = {{"sriov", "true"}};
  }
  for (auto _ : state) {
    auto validated = policy::validatePolicies(policies.view());  // once per policy change
    int64_t devices = 0;
    for (const auto& n : nodes) {
      devices +=
          static_cast<int64_t>(policy::render(n, validated.valid, status, {}).spec.devices.size());
    }
    benchmark::DoNotOptimize(devices);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 1000);
}
BENCHMARK(BM_Render1000Nodes)->Unit(benchmark::kMillisecond);

}  // namespace

// Counting allocations: operator new and delete replaced by malloc/free for the whole program.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

BENCHMARK_MAIN();
