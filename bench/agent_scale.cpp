// Scale driver for the node agent: the real operator and agent on a simulated node with 16 PFs
// x N VFs (default 256: 4,096 VFs). Prints the time to create and publish everything, the API
// writes of the agent for the initial rollout and for one spec change (an attribute of every
// VF), and the agent's resident memory.  Usage: agent_scale [vfs-per-pf=256]
#include <chrono>
#include <cstdio>
#include <thread>

#include "api/names.h"
#include "api/resource.h"
#include "base/log.h"
#include "support/fixtures.h"
#include "support/operator_env.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;

namespace {

int agentWrites(const testing::OperatorEnv& env, const char* resource) {
  int n = 0;
  for (const auto& e : env.cp().auditEvents()) {
    n +=
        e.user == env.agentUser() && e.isWrite() && (resource == nullptr || e.resource == resource);
  }
  return n;
}

size_t published(const testing::OperatorEnv& env, const std::string& node,
                 const std::string& tier) {
  auto list =
      env.admin().list(api::resources::kResourceSlices, "",
                       {.label_selector = "sriovnetwork.k8snetworkplumbingwg.io/node=" + node});
  if (!list.ok()) return 0;
  size_t n = 0;
  for (const auto& item : (*list)["items"].GetArray()) {
    auto s = api::ResourceSlice::decode(item);
    if (!s.ok()) continue;
    for (const auto& d : s->spec.devices) {
      auto it = d.attributes.find("example.com/tier");
      n += tier.empty() || (it != d.attributes.end() && it->second.string_value == tier);
    }
  }
  return n;
}

// Waits until every VF is published with the tier; false after ten minutes.
bool waitPublished(const testing::OperatorEnv& env, const std::string& node,
                   const std::string& tier, size_t total) {
  auto deadline = Steady::now() + std::chrono::minutes(10);
  while (published(env, node, tier) < total) {
    if (Steady::now() > deadline) {
      std::printf(
          "gave up: %zu of %zu VFs published with tier %s after 10 minutes; see the "
          "operator and agent logs\n",
          published(env, node, tier), total, tier.c_str());
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int vfs = argc > 1 ? std::stoi(argv[1]) : 256;
  size_t total = 16 * static_cast<size_t>(vfs);
  log::setVerbosity(-1);
  testing::OperatorEnv env("agentscale");
  auto op = env.startOperator();
  std::string node = env.createNode("wide", {{"nic", "e810"}});
  auto agent = env.startAgent(node, "many-pfs");
  std::printf("# agent scale: 16 PFs x %d VFs (%zu VFs) on one node\n\n", vfs, total);
  auto t0 = Steady::now();
  env.cp().applyYaml(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodePolicy\nmetadata: {name: "
      "e810}\n"
      "spec: {resourceName: e810, numVfs: " +
          std::to_string(vfs) +
          ", nodeSelector: {nic: e810}, nicSelector: {vendor: \"8086\"}}\n---\n"
          "apiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: SriovResourcePolicy\n"
          "metadata: {name: all}\nspec: {configs: [{deviceAttributesSelector: {matchLabels: {set: "
          "tier}}}]}\n---\napiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: "
          "DeviceAttributes\nmetadata: {name: tier, labels: {set: tier}}\nspec: {attributes: "
          "{example.com/tier: {string: gold}}}\n",
      env.ns());
  if (!waitPublished(env, node, "gold", total)) return 1;
  double initial = std::chrono::duration<double>(Steady::now() - t0).count();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  int slices_initial = agentWrites(env, "resourceslices");
  int writes_initial = agentWrites(env, nullptr);
  std::printf(
      "initial: VFs created, discovered and published in %.1f s; agent API writes: %d "
      "(%d ResourceSlice writes)\n",
      initial, writes_initial, slices_initial);

  auto t1 = Steady::now();
  (void)env.admin().patch(api::resources::kDeviceAttributes, env.ns(), "tier",
                          kube::PatchType::kMerge,
                          R"({"spec":{"attributes":{"example.com/tier":{"string":"silver"}}}})");
  if (!waitPublished(env, node, "silver", total)) return 1;
  double change = std::chrono::duration<double>(Steady::now() - t1).count();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  std::printf(
      "one spec change (an attribute of every VF): published in %.1f s with %d agent API "
      "writes (%d ResourceSlice writes)\n",
      change, agentWrites(env, nullptr) - writes_initial,
      agentWrites(env, "resourceslices") - slices_initial);
  std::printf("agent resident memory: %.1f MiB\n",
              static_cast<double>(agent->residentKiB()) / 1024.0);
  return 0;
}
