#include "policy/operator_config.h"

#include <algorithm>
#include <charconv>

#include "base/strings.h"

namespace sriovdra::policy {
namespace {

bool isKnownGate(const std::string& name) {
  return std::find(std::begin(kKnownFeatureGates), std::end(kKnownFeatureGates), name) !=
         std::end(kKnownFeatureGates);
}

}  // namespace

namespace {

// Why a gate upstream defines changes nothing here, for the warning when it is set to true.
std::string inactiveGateReason(std::string_view gate) {
  if (gate == "parallelNicConfig") return "the agent configures a node's NICs one after another";
  if (gate == "resourceInjectorMatchCondition") {
    return "there is no network resources injector (pods ask for VFs with ResourceClaims)";
  }
  if (gate == "metricsExporter") {
    return "no exporter DaemonSet is deployed: every agent's /metrics serves the exporter's "
           "per-VF families (sriov_vf_*, sriov_kubepoddevice) either way (agent flag "
           "--vf-metrics)";
  }
  if (gate == "blockDevicePluginUntilConfigured") {
    return "there is no device plugin; the agent publishes a node's ResourceSlices with only the "
           "VFs that exist once it has configured them";
  }
  if (gate == "mellanoxFirmwareReset") {
    return "the agent never runs mstfwreset; a firmware change takes effect at the reboot the "
           "operator grants";
  }
  return "it is not implemented";
}

}  // namespace

Findings validateOperatorConfig(const api::SriovOperatorConfig& c,
                                const std::string& operator_namespace) {
  Findings f;
  const auto& s = c.spec;
  if (c.metadata.name != api::kDefaultOperatorConfigName ||
      c.metadata.namespace_ != operator_namespace) {
    // Upstream's words first, so scripts that match them keep matching.
    f.errors.push_back("only default SriovOperatorConfig in " + operator_namespace +
                       " namespace is used; name it \"default\" and create it in namespace \"" +
                       operator_namespace + "\"");
  }
  if (s.log_level && (*s.log_level < 0 || *s.log_level > 2)) {
    f.errors.push_back("spec.logLevel must be 0, 1 or 2");
  }
  if (s.enable_injector.value_or(false)) {
    f.errors.push_back(
        "spec.enableInjector: there is no network resources injector here: pods ask for VFs "
        "with ResourceClaims; set it to false or remove it");
  }
  if (s.enable_operator_webhook && !*s.enable_operator_webhook) {
    f.errors.push_back(
        "spec.enableOperatorWebhook: the admission webhook is part of the install "
        "(config/webhook, failurePolicy Ignore) and cannot be switched off here; set it to true "
        "or remove it");
  }
  if (s.enable_ovs_offload.value_or(false)) {
    f.errors.push_back(
        "spec.enableOvsOffload: OVS hardware offload is not supported by sriov-dra-operator; "
        "set it to false or remove it");
  }
  if (!s.configuration_mode.empty() && s.configuration_mode != "daemon") {
    f.errors.push_back("spec.configurationMode \"" + s.configuration_mode +
                       "\": the agent runs as a DaemonSet only; use \"daemon\" or remove it");
  }
  if (!s.config_daemon_env_vars.empty()) {
    f.errors.push_back(
        "spec.configDaemonEnvVars: the agent is configured by the flags of its DaemonSet "
        "(docs/agent.md), not by environment variables; remove it");
  }
  for (const auto& p : s.disable_plugins) {
    if (p != "mellanox") f.errors.push_back("spec.disablePlugins: unknown plugin \"" + p + "\"");
  }
  for (const auto& [gate, on] : s.feature_gates) {
    if (!isKnownGate(gate)) {
      f.warnings.push_back("spec.featureGates: \"" + gate + "\" is not a feature gate of the " +
                           "SR-IOV network operator; it is ignored");
    } else if (gate == "manageSoftwareBridges" && on) {
      f.errors.push_back(
          "spec.featureGates.manageSoftwareBridges: OVS software bridges are not supported by "
          "sriov-dra-operator; set it to false or remove it");
    } else if (on) {
      f.warnings.push_back("spec.featureGates." + gate +
                           ": has no effect here: " + inactiveGateReason(gate));
    }
  }
  if (s.use_cdi && !*s.use_cdi) {
    f.warnings.push_back(
        "spec.useCDI: false has no effect: DRA always hands VFs to containers through CDI");
  }
  if (s.disable_drain) {
    f.warnings.push_back(
        "spec.disableDrain: nodes are not drained: a change that recreates VFs in use waits until "
        "the pods using them are gone");
  }
  return f;
}

Findings validatePoolConfig(const api::SriovNetworkPoolConfig& p) {
  Findings f;
  const auto& s = p.spec;
  if (!s.ovs_hardware_offload_config_name.empty()) {
    f.errors.push_back(
        "spec.ovsHardwareOffloadConfig: OVS hardware offload is not supported by "
        "sriov-dra-operator; remove it");
  }
  if (!s.rdma_mode.empty() && s.rdma_mode != "shared" && s.rdma_mode != "exclusive") {
    f.errors.push_back("spec.rdmaMode: \"" + s.rdma_mode + "\" is neither shared nor exclusive");
  }
  if (s.node_selector) {
    auto problems = api::validateLabelSelector(*s.node_selector, "spec.nodeSelector");
    f.errors.insert(f.errors.end(), problems.begin(), problems.end());
  }
  if (auto m = maxUnavailable(s.max_unavailable, 0); !m.ok()) {
    f.errors.push_back("SriovNetworkPoolConfig invalid maxUnavailable: " + m.status().message() +
                       "; give an integer >= 0 or a percentage from \"1%\" to \"100%\"");
  }
  return f;
}

std::string refuseDrainDisable(const api::SriovOperatorConfig* previous,
                               const api::SriovOperatorConfig& next,
                               const std::vector<std::string>& nodes_in_progress) {
  if (!next.spec.disable_drain || previous == nullptr || previous->spec.disable_drain) return "";
  if (nodes_in_progress.empty()) return "";
  return "can't set Spec.DisableDrain = true while node[" + nodes_in_progress.front() +
         "] is updating; wait until its SriovNodeState reports Succeeded or Failed";
}

OperatorSettings operatorSettings(const api::SriovOperatorConfig* config,
                                  const api::LabelSelector& flag_node_selector) {
  OperatorSettings out;
  out.agent_node_selector = flag_node_selector;
  if (config == nullptr) return out;
  // Both must select the node: the flag is the install's limit, the config narrows it.
  for (const auto& [k, v] : config->spec.config_daemon_node_selector) {
    auto [it, added] = out.agent_node_selector.match_labels.emplace(k, v);
    if (!added && it->second != v) {
      out.agent_node_selector.match_expressions.push_back({k, "In", {v}});
    }
  }
  if (config->spec.log_level) out.log_level = static_cast<int>(*config->spec.log_level);
  out.drain = !config->spec.disable_drain;
  const auto& plugins = config->spec.disable_plugins;
  out.firmware = std::find(plugins.begin(), plugins.end(), "mellanox") == plugins.end();
  return out;
}

OperatorSettings validSettings(const api::SriovOperatorConfig* config,
                               const std::string& operator_namespace) {
  bool valid = config != nullptr && validateOperatorConfig(*config, operator_namespace).ok();
  return operatorSettings(valid ? config : nullptr, {});
}

int logVerbosity(const api::SriovOperatorConfig* config, const std::string& operator_namespace,
                 int flag) {
  return validSettings(config, operator_namespace).log_level.value_or(flag);
}

Result<int> maxUnavailable(const std::optional<api::IntOrString>& value, int pool_nodes) {
  if (!value) return -1;
  if (!value->is_string) {
    if (value->int_value < 0)
      return Status(Code::kInvalidArgument, "negative number is not allowed");
    return static_cast<int>(std::min<int64_t>(value->int_value, INT32_MAX));
  }
  const std::string& s = value->string_value;
  if (s.empty() || s.back() != '%') {
    return Status(Code::kInvalidArgument, "invalid type: strings needs to be a percentage");
  }
  int percent = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size() - 1, percent);
  if (ec != std::errc() || end != s.data() + s.size() - 1) {
    return Status(Code::kInvalidArgument, "invalid value \"" + s + "\": not a whole percentage");
  }
  if (percent < 1 || percent > 100) {
    return Status(Code::kInvalidArgument,
                  "invalid value: percentage needs to be between 1 and 100");
  }
  return static_cast<int>(static_cast<int64_t>(pool_nodes) * percent / 100);  // rounded down
}

std::vector<const api::SriovNetworkPoolConfig*> poolsOf(
    const api::Labels& node_labels, const std::vector<const api::SriovNetworkPoolConfig*>& pools) {
  std::vector<const api::SriovNetworkPoolConfig*> out;
  for (const auto* p : pools) {
    if (!p->spec.ovs_hardware_offload_config_name.empty()) continue;
    if (!p->spec.node_selector || api::matchesLabelSelector(*p->spec.node_selector, node_labels)) {
      out.push_back(p);
    }
  }
  return out;
}

RdmaModeChoice rdmaModeFor(const std::vector<const api::SriovNetworkPoolConfig*>& pools,
                           const std::string& current) {
  if (pools.empty()) return {};
  std::vector<std::string> described;
  bool agree = true;
  for (const auto* p : pools) {
    agree = agree && p->spec.rdma_mode == pools[0]->spec.rdma_mode;
    described.push_back(p->metadata.name + " (" +
                        (p->spec.rdma_mode.empty() ? "none" : p->spec.rdma_mode) + ")");
  }
  if (agree) return {pools[0]->spec.rdma_mode, ""};
  std::sort(described.begin(), described.end());
  return {current, "the node is in the SriovNetworkPoolConfigs " + join(described, ", ") +
                       " whose rdmaMode differ: it keeps " + (current.empty() ? "none" : current) +
                       " until their nodeSelectors put it in pools that agree"};
}

}  // namespace sriovdra::policy
