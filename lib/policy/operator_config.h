#pragma once
// What this operator does with the upstream operator's configuration kinds (pure, no I/O).
//
// SriovOperatorConfig "default" in the operator's namespace (any other is refused, as upstream):
//   field                        | here
//   configDaemonNodeSelector     | honoured: the nodes the agent configures (a SriovNodeState each)
//                                |   are those it and --agent-node-selector both select
//   logLevel 0..2                | honoured: the operator's log verbosity, and every agent's
//                                |   (each watches the object)
//   disableDrain                 | honoured: false = nodes are drained before VFs are recreated
//                                |   (controllers/operator/rollout.h), true = changes wait for
//                                |   the pods
//   disablePlugins [mellanox]    | accepted: the agent changes no firmware
//   useCDI                       | accepted: DRA always hands VFs over through CDI
//   featureGates                 | the gates below; unknown gates are admitted with a warning
//   enableInjector: true         | refused: pods ask for VFs with ResourceClaims, no injector
//   enableOperatorWebhook: false | refused: the webhook is part of the install (config/webhook)
//   enableOvsOffload: true       | refused: no OVS hardware offload (policies' bridge neither)
//   configurationMode: systemd   | refused: the agent is a DaemonSet only
//   configDaemonEnvVars          | refused: the agent takes flags (config/agent)
// Without a SriovOperatorConfig the operator's flags decide (--agent-node-selector, --v), and
// nodes are not drained.
//
// SriovNetworkPoolConfig (every one in the operator's namespace; nodes by label selector, unset
// selects all): maxUnavailable is honoured as upstream computes it (an integer >= 0, or "1%" to
// "100%" of the pool's nodes rounded down; unset = no limit); nodes in no pool form the default
// pool with --max-unavailable (default 1, upstream's); a node in two pools is not reconfigured
// (say which). rdmaMode ("shared" or "exclusive") goes to the spec of its nodes' SriovNodeStates
// (system.rdmaMode), which the agent applies as ib_core's netns_mode at the next boot (a reboot
// it asks for: host/rdma_mode.h). ovsHardwareOffloadConfig is refused.
#include <optional>
#include <string>
#include <vector>

#include "api/objects.h"
#include "api/operator_config.h"
#include "api/selectors.h"
#include "policy/validate.h"

namespace sriovdra::policy {

// The gates upstream defines; their values change nothing here: manageSoftwareBridges: true is
// refused, any other set to true admitted with a warning that says why it has no effect.
inline constexpr const char* kKnownFeatureGates[] = {
    "parallelNicConfig",     "resourceInjectorMatchCondition",   "metricsExporter",
    "manageSoftwareBridges", "blockDevicePluginUntilConfigured", "mellanoxFirmwareReset"};

Findings validateOperatorConfig(const api::SriovOperatorConfig& c,
                                const std::string& operator_namespace);
Findings validatePoolConfig(const api::SriovNetworkPoolConfig& p);

// Upstream's refusal of disableDrain false -> true while a node is being reconfigured (it would
// stay cordoned): the message, or "" when the change is fine.
std::string refuseDrainDisable(const api::SriovOperatorConfig* previous,
                               const api::SriovOperatorConfig& next,
                               const std::vector<std::string>& nodes_in_progress);

// What the operator applies; `config` is SriovOperatorConfig/default or null.
struct OperatorSettings {
  api::LabelSelector agent_node_selector;
  std::optional<int> log_level;  // unset: the --v flag
  bool drain = false;
  bool firmware = true;  // agents change Mellanox firmware; disablePlugins: [mellanox] turns it off
};
OperatorSettings operatorSettings(const api::SriovOperatorConfig* config,
                                  const api::LabelSelector& flag_node_selector);

// The settings of a config that passes validation (else of none), as every agent applies them.
OperatorSettings validSettings(const api::SriovOperatorConfig* config,
                               const std::string& operator_namespace);

// The log verbosity of the operator and of every agent: a valid config's logLevel, else `flag`.
int logVerbosity(const api::SriovOperatorConfig* config, const std::string& operator_namespace,
                 int flag);

// The most nodes of a pool of `pool_nodes` that may be reconfigured at once: -1 for no limit.
Result<int> maxUnavailable(const std::optional<api::IntOrString>& value, int pool_nodes);

// The pools whose nodeSelector selects these labels (pools with ovsHardwareOffloadConfig are
// skipped, as upstream does); more than one is an error the caller reports.
std::vector<const api::SriovNetworkPoolConfig*> poolsOf(
    const api::Labels& node_labels, const std::vector<const api::SriovNetworkPoolConfig*>& pools);

// The RDMA namespace mode of a node from the pools that select it (poolsOf): none, "";
// pools that agree (a pool without rdmaMode asks for none), their mode; pools that disagree, the
// mode the node has (`current`: exclusive mode isolates, and dropping it for a relabel would let
// the next boot expose every RDMA device to every pod), with `conflict` saying so.
struct RdmaModeChoice {
  std::string mode;
  std::string conflict;  // "" when the pools agree
};
RdmaModeChoice rdmaModeFor(const std::vector<const api::SriovNetworkPoolConfig*>& pools,
                           const std::string& current);

}  // namespace sriovdra::policy
