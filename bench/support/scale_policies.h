#pragma once
// The 20 policies of operator_scale's cluster, as YAML: 10 SriovNetworkNodePolicies and 5
// SriovResourcePolicies over the 16 PFs of the many-pfs fixture, and 5 DeviceAttributes whose
// tier the bench changes (each change touches every VF of every node).
#include <string>
#include <vector>

namespace sriovdra::bench {

// 10 node policies and 5 resource policies over the PFs (16, by name).
std::string nodePoliciesYaml(const std::vector<std::string>& pfs, int vfs_per_pf);
// 5 DeviceAttributes, each with the tier and its rail.
std::string attributesYaml(const std::string& tier);

}  // namespace sriovdra::bench
