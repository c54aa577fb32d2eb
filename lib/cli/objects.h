#pragma once
// Objects read from YAML/JSON files given on the command line ("-" is standard input, a
// directory means its *.yaml/*.yml/*.json files), decoded
// into the typed kinds the offline commands understand. Other kinds are listed in `skipped`.
#include <iosfwd>
#include <string>
#include <vector>

#include "api/networks.h"
#include "api/node_state.h"
#include "api/objects.h"
#include "api/operator_config.h"
#include "api/pod_resources.h"
#include "api/policies.h"
#include "api/resource.h"
#include "kube/client.h"

namespace sriovdra::cli {

struct ObjectBundle {
  std::vector<api::SriovNetworkNodePolicy> node_policies;
  std::vector<api::SriovResourcePolicy> resource_policies;
  std::vector<api::DeviceAttributes> device_attributes;
  std::vector<api::Network> networks;  // SriovNetwork and SriovIBNetwork
  std::vector<api::SriovOperatorConfig> operator_configs;
  std::vector<api::SriovNetworkPoolConfig> pool_configs;
  std::vector<api::Node> nodes;
  std::vector<api::SriovNodeState> node_states;     // also upstream SriovNetworkNodeState
  std::vector<api::ResourceSlice> resource_slices;  // with the DeviceTaintRules' taints applied
  std::vector<api::DeviceTaintRule> device_taint_rules;
  std::vector<api::DeviceClass> device_classes;
  std::vector<api::ResourceClaim> resource_claims;
  std::vector<api::ResourceClaimTemplate> resource_claim_templates;
  std::vector<api::PodResources> pods;  // Pods and workloads' pod templates (with_pods only)
  std::vector<std::string> skipped;     // "ConfigMap/foo (file.yaml)"
};

// Reads every document of every file; an undecodable object is an error naming file and field.
// The DeviceTaintRules among them taint the slices among them, as kube-scheduler applies them.
// Pods and workloads are read into `pods` only `with_pods` (explain); else they are skipped.
Result<ObjectBundle> loadObjects(const std::vector<std::string>& paths, std::istream& stdin_stream,
                                 bool with_pods = false);

// What the cluster tools read from the API server: Nodes, SriovNodeStates (all namespaces),
// ResourceSlices (tainted by the DeviceTaintRules), DeviceClasses and ResourceClaims. Objects
// that do not decode are skipped with a line in `skipped` (one bad object never hides the rest of
// the cluster), as are DeviceTaintRules an API server does not serve or the user may not list.
Result<ObjectBundle> loadCluster(kube::Client& client);

}  // namespace sriovdra::cli
