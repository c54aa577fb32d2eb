#include "support/scale_policies.h"

namespace sriovdra::bench {
namespace {

// Node policy i configures PF pfs[i % 8]: the first half of its VFs for i < 8, the second half
// for i >= 8 (so the first two PFs carry two VF groups).
std::string nodePolicyYaml(int i, const std::vector<std::string>& pfs, int vfs_per_pf) {
  int half = vfs_per_pf / 2;
  std::string range = i < 8 ? "#0-" + std::to_string(half - 1)
                            : "#" + std::to_string(half) + "-" + std::to_string(vfs_per_pf - 1);
  std::string pf = pfs[static_cast<size_t>(i % 8)] + range;
  return "---\napiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkNodePolicy\nmetadata: "
         "{name: np-" +
         std::to_string(i) + "}\nspec: {resourceName: res_" + std::to_string(i % 5) +
         ", priority: " + std::to_string(10 + i) + ", numVfs: " + std::to_string(vfs_per_pf) +
         ", nodeSelector: {sriov: \"true\"}, nicSelector: {pfNames: [\"" + pf + "\"]}}\n";
}

// Resource policy i advertises the VFs of four PFs; together the five cover all 16 (two of
// them twice, so resource policies conflict as they do in clusters).
std::string resourcePolicyYaml(int i, const std::vector<std::string>& pfs) {
  std::string n = std::to_string(i);
  auto pf = [&](int k) { return pfs[static_cast<size_t>(k)]; };
  return "---\napiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: "
         "SriovResourcePolicy\nmetadata: {name: rp-" +
         n + "}\nspec: {configs: [{deviceAttributesSelector: {matchLabels: {pool: p" + n +
         "}}, resourceFilters: [{pfNames: [" + pf(i) + ", " + pf(i + 3) + ", " + pf(i + 8) + ", " +
         pf(i + 11) + "]}]}]}\n";
}

std::string deviceAttributesYaml(int i, const std::string& tier) {
  std::string n = std::to_string(i);
  return "---\napiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1\nkind: "
         "DeviceAttributes\nmetadata: {name: da-" +
         n + ", labels: {pool: p" + n +
         "}}\nspec: {attributes: {example.com/tier: {string: " + tier +
         "}, example.com/rail: {int: " + n + "}}}\n";
}

}  // namespace

std::string nodePoliciesYaml(const std::vector<std::string>& pfs, int vfs_per_pf) {
  std::string y;
  for (int i = 0; i < 10; ++i) y += nodePolicyYaml(i, pfs, vfs_per_pf);
  for (int i = 0; i < 5; ++i) y += resourcePolicyYaml(i, pfs);
  return y;
}

std::string attributesYaml(const std::string& tier) {
  std::string y;
  for (int i = 0; i < 5; ++i) y += deviceAttributesYaml(i, tier);
  return y;
}

}  // namespace sriovdra::bench
