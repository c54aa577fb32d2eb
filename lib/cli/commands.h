#pragma once
// The offline subcommands of `sriov-dra`, each a function of its arguments and streams so it
// can be tested without a process. They return the process exit code.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "policy/render.h"

namespace sriovdra::cli {

struct Streams {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

struct RenderArgs {
  std::string node_file;
  std::string state_file;
  std::vector<std::string> policy_files;
  std::string output = "yaml";  // yaml | json
  std::string resource_prefix = policy::kDefaultResourcePrefix;
  bool advertise_node_policy_vfs = false;
  std::string namespace_;  // only policies in this namespace count ("" = all)
};
// Prints the SriovNodeState the operator would write for the node, with conflicts, warnings and
// invalid policies. Exit code 0, or 1 when the inputs cannot be read.
int runRender(const RenderArgs& args, Streams io);

struct ValidateArgs {
  std::vector<std::string> files;
  std::string output = "text";  // text | json
  // The operator's namespace; objects in the files without a namespace count as in it.
  std::string namespace_ = "sriov-dra";
};
// Applies the webhook's rules to every policy, network, operator and pool config in the files:
// for node policies those between them and against the Nodes and SriovNodeStates in the files
// too (the webhook's one function, policy::validateNodePolicyInCluster). Exit code 0 if all are
// valid, 1 otherwise.
int runValidate(const ValidateArgs& args, Streams io);

struct FixtureArgs {
  std::string topology;
  std::string out;
};
// Writes a fixture sysfs tree (see host/fixtures.h).
int runFixture(const FixtureArgs& args, Streams io);

struct DiscoverArgs {
  std::string sysfs_root = "/";
  std::string output = "yaml";
};
// Prints what the agent discovers under a sysfs root: PFs and VFs, GPUs, the PCIe tree.
int runDiscover(const DiscoverArgs& args, Streams io);

// The cluster commands read the API server like kubectl: --kubeconfig/--context, -n.
// Exit codes: 0 success, 1 a negative answer (explain: fits nowhere), 2 the inputs or the
// cluster could not be read.
struct ClusterArgs {
  std::string kubeconfig;
  std::string context;
  std::string namespace_;
  std::string output = "table";
};

struct TopologyArgs : ClusterArgs {
  std::string node;  // "" = every node with a SriovNodeState
};
// Per node: NUMA -> PCIe root -> switch -> GPUs and PFs (VFs advertised, allocated, free),
// marking GPUs with no VF under their root or switch. -o table|json|yaml|dot.
int runTopology(const TopologyArgs& args, Streams io);

struct ExplainArgs : ClusterArgs {
  std::string file;   // a ResourceClaim, ResourceClaimTemplate, Pod or workload
  std::string claim;  // NAMESPACE/NAME or NAME (with -n)
};
// Evaluates a claim against the live slices, classes and allocations: per node, the devices it
// would get or why not. Exit code 0 if some node fits. -o table|json|yaml. A claim from a file
// with adminAccess in a namespace without the admin-access label is refused as the API server
// refuses it; a Pod's (or workload's) extended resources are explained as the claim
// kube-scheduler makes for them on each node (scheduling/extended_resources.h).
int runExplain(const ExplainArgs& args, Streams io);

// Every allocated claim with our devices: pod, node, GPUs, VFs, PFs, roots, NUMA nodes and the
// alignment of each GPU/VF pair, then a summary. -o table|json|yaml.
int runReport(const ClusterArgs& args, Streams io);

struct SimulateArgs {
  std::string topology = "a100-reference";
  int nodes = 16;
  int pods = 128;
  uint64_t seed = 1;
  int vfs_per_pf = 1;
  std::string output = "markdown";  // markdown | csv
  double gbps_aligned = 194.6, gbps_same_numa = 127.1, gbps_cross_numa = 110.0;
  double kv_mb = 1175.81, kv_ms_aligned = 56.78, kv_ms_cross_numa = 122.32;
  double kv_ms_same_numa = 0;  // 0 = scaled from bandwidth
};
// The placement study (study/simulate.h) on a fixture topology.
int runSimulate(const SimulateArgs& args, Streams io);

}  // namespace sriovdra::cli
