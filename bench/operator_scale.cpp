// Scale driver for the operator: a real control plane, the operator process, N simulated nodes
// (8 PFs x 8 VFs each, reported as an agent would) and 20 policies. Prints the time to converge
// and the API writes for the initial rollout and after one policy change, and the operator's
// resident memory.  Usage: operator_scale [nodes=1000]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "api/names.h"
#include "api/node_state.h"
#include "kube/informer.h"
#include "support/fixtures.h"
#include "support/operator_env.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;

namespace {

std::string policiesYaml(const std::string& tier) {
  std::string y;
  for (int i = 0; i < 10; ++i) {
    std::string pf = "ens" + std::to_string(i % 8) + (i < 8 ? "#0-3" : "#4-7");
    y += "---\napiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodePolicy\nmetadata: "
         "{name: np-" +
         std::to_string(i) + "}\nspec: {resourceName: res_" + std::to_string(i % 5) +
         ", priority: " + std::to_string(10 + i) +
         ", numVfs: 8, nodeSelector: {sriov: \"true\"}, "
         "nicSelector: {pfNames: [\"" +
         pf + "\"]}}\n";
  }
  for (int i = 0; i < 5; ++i) {
    std::string n = std::to_string(i);
    y += "---\napiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: "
         "SriovResourcePolicy\n"
         "metadata: {name: rp-" +
         n +
         "}\nspec: {configs: [{deviceAttributesSelector: {matchLabels: "
         "{pool: p" +
         n + "}}, resourceFilters: [{pfNames: [ens" + n + ", ens" + std::to_string(i + 3) +
         "]}]}]}\n---\napiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: "
         "DeviceAttributes\n"
         "metadata: {name: da-" +
         n + ", labels: {pool: p" + n +
         "}}\nspec: {attributes: "
         "{example.com/tier: {string: " +
         tier + "}, example.com/rail: {int: " + n + "}}}\n";
  }
  return y;
}

int operatorWrites(const testing::ControlPlane& cp) {
  int n = 0;
  for (const auto& e : cp.auditEvents())
    n += e.user == "operator" && e.isWrite() && e.resource != "leases";
  return n;
}

template <typename Fn>
void parallel(size_t n, Fn fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) fn(i);
    });
  }
  for (auto& t : threads) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::stoul(argv[1]) : 1000;
  log::setVerbosity(-1);
  testing::OperatorEnv env("scale");
  auto op = env.startOperator({.extra_args = {"--workers=8"}});
  std::printf("# operator scale: %zu nodes x 64 VFs, 20 policies\n\n", n);

  kube::Informer<api::SriovNodeState> states(env.cp().client(), api::resources::kSriovNodeStates,
                                             {.namespace_ = env.ns()});
  states.start();
  std::vector<std::string> names(n);
  auto t0 = Steady::now();
  parallel(n, [&](size_t i) {
    names[i] = env.createNode("n" + std::to_string(i), {{"sriov", "true"}});
  });
  env.cp().applyYaml(policiesYaml("gold"), env.ns());
  auto status = testing::fixture::ethernetStatus(8, 8);
  parallel(n, [&](size_t i) { env.reportStatus(names[i], status); });
  auto reported = Steady::now();

  auto convergedOn = [&](const std::string& tier) {
    if (states.size() < n) return false;
    for (const auto& s : states.list()) {
      if (s->spec.devices.size() != 64) return false;
      bool found = false;
      for (const auto& d : s->spec.devices) {
        auto it = d.attributes.find("example.com/tier");
        if (it != d.attributes.end()) {
          if (it->second.string_value != tier) return false;
          found = true;
        }
      }
      if (!found) return false;
    }
    return true;
  };
  auto waitFor = [&](const std::string& tier) {
    while (!convergedOn(tier)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return Steady::now();
  };
  auto initial = waitFor("gold");
  std::this_thread::sleep_for(std::chrono::seconds(3));  // let status writes land
  int writes_initial = operatorWrites(env.cp());
  std::printf(
      "initial: %zu nodes created and reported in %.1f s; operator converged %.1f s after the "
      "last report; %d API writes (%.2f per node)\n",
      n, std::chrono::duration<double>(reported - t0).count(),
      std::chrono::duration<double>(initial - reported).count(), writes_initial,
      static_cast<double>(writes_initial) / static_cast<double>(n));

  auto change = Steady::now();

  for (int i = 0; i < 5; ++i) {
    (void)env.admin().patch(api::resources::kDeviceAttributes, env.ns(), "da-" + std::to_string(i),
                            kube::PatchType::kMerge,
                            R"({"spec":{"attributes":{"example.com/tier":{"string":"silver"}}}})");
  }
  auto converged = waitFor("silver");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  int writes_change = operatorWrites(env.cp()) - writes_initial;
  std::printf(
      "one policy change (5 DeviceAttributes): converged in %.2f s with %d API writes "
      "(%.2f per node)\n",
      std::chrono::duration<double>(converged - change).count(), writes_change,
      static_cast<double>(writes_change) / static_cast<double>(n));
  std::printf("operator resident memory: %.1f MiB (%.1f KiB per node)\n",
              op->residentKiB() / 1024.0,
              static_cast<double>(op->residentKiB()) / static_cast<double>(n));
  states.stop();
  return 0;
}
