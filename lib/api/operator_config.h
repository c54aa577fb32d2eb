#pragma once
// The upstream SR-IOV network operator's own configuration kinds (sriovnetwork.openshift.io/v1),
// with their JSON codecs, field for field as its CRDs define them:
//   SriovOperatorConfig: the operator's settings; only "default" in the operator's namespace
//   counts; SriovNetworkPoolConfig: a set of nodes (label selector) and how many of them may be
//     reconfigured at once.
// What this operator does with each field (honour or refuse) is policy/operator_config.h.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "kube/object_meta.h"

namespace sriovdra::api {

inline constexpr const char* kDefaultOperatorConfigName = "default";

// A Kubernetes IntOrString: 3 or "30%".
struct IntOrString {
  bool is_string = false;
  int64_t int_value = 0;
  std::string string_value;
  bool operator==(const IntOrString&) const = default;
  std::string toString() const { return is_string ? string_value : std::to_string(int_value); }
};

struct SriovOperatorConfigSpec {
  std::map<std::string, std::string> config_daemon_node_selector;
  // Unset and false differ: upstream's defaults are written into most objects users keep.
  std::optional<bool> enable_injector;
  std::optional<bool> enable_operator_webhook;
  std::optional<int64_t> log_level;  // 0..2
  bool disable_drain = false;
  std::optional<bool> enable_ovs_offload;
  std::string configuration_mode;  // "daemon" (default) or "systemd"
  std::optional<bool> use_cdi;
  std::vector<std::string> disable_plugins;  // "mellanox"
  std::map<std::string, bool> feature_gates;
  std::map<std::string, std::string> config_daemon_env_vars;
  bool operator==(const SriovOperatorConfigSpec&) const = default;
};

struct SriovOperatorConfigStatus {
  std::vector<Condition> conditions;  // Ready
  bool operator==(const SriovOperatorConfigStatus&) const = default;
};

struct SriovOperatorConfig {
  kube::ObjectMeta metadata;
  SriovOperatorConfigSpec spec;
  SriovOperatorConfigStatus status;
  static Result<SriovOperatorConfig> decode(const json::Value& v);
};

struct SriovNetworkPoolConfigSpec {
  std::optional<LabelSelector> node_selector;  // unset selects every node, as upstream
  std::optional<IntOrString> max_unavailable;  // unset = no limit, as upstream
  std::string rdma_mode;                       // "shared", "exclusive" or ""
  std::string ovs_hardware_offload_config_name;
  bool operator==(const SriovNetworkPoolConfigSpec&) const = default;
};

struct SriovNetworkPoolConfig {
  kube::ObjectMeta metadata;
  SriovNetworkPoolConfigSpec spec;
  static Result<SriovNetworkPoolConfig> decode(const json::Value& v);
};

}  // namespace sriovdra::api
