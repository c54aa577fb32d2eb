#pragma once
// CNI as its specification (1.0.0, "CNI Plugin Protocol", "Execution of Network
// Configurations") defines it for a runtime, pure: what to run for a network configuration, and
// what the plugins answered. Running them is exec.h.
//   * A NetworkAttachmentDefinition's config is a single plugin configuration ("type" at the
//     top) or a list ("plugins": [...], with the list's "cniVersion" and "name").
//   * ADD runs the plugins in order, each with "cniVersion" and "name" of the list and the
//     previous plugin's result as "prevResult"; the last result is the network's. DEL runs them
//     in reverse order with the cached ADD result as "prevResult".
//   * Environment: CNI_COMMAND, CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, CNI_ARGS, CNI_PATH.
//   * A plugin's "type" names its binary in the CNI bin directories; a type that is not a plain
//     file name (a path, "..", a hidden file) is refused: a NetworkAttachmentDefinition's author
//     must not make the agent run an arbitrary program as root.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace sriovdra::cni {

struct NetworkConfig {
  std::string cni_version;
  std::string name;
  // Each plugin's configuration as the list holds it (compact JSON, "type" checked).
  std::vector<std::string> plugins;
  std::vector<std::string> types;  // plugins[i]'s "type"
  bool list = false;               // written as a list ("plugins": [...])
};

// A plugin type is a binary's file name: letters, digits, '-', '_', '.', not starting with '.'.
bool isPluginType(std::string_view type);

// kInvalidArgument naming the problem (not JSON, no plugin, a plugin without a valid "type").
Result<NetworkConfig> parseNetworkConfig(std::string_view config);

// What the runtime passes a network's plugins for one attachment (CNI's capability arguments).
struct RuntimeConfig {
  std::string device_id;  // the VF's PCI address
  // From the pod's network selection (as Multus passes them); empty: not given.
  std::string mac;
  std::vector<std::string> ips;
  std::string infiniband_guid;
};

// The config with "deviceID" set to the VF's PCI address: at the top (as the reference driver
// records it) and, in a list, in the first plugin too (where the SR-IOV CNI reads it, as Multus
// puts it); and, by CNI's conventions, in "runtimeConfig" of every plugin that declares the
// capability: "deviceID" (host-device reads it there), "mac", "ips", "infinibandGUID" (the SR-IOV
// and InfiniBand SR-IOV CNIs read these). `config` must parse.
Result<std::string> withRuntimeConfig(std::string_view config, const RuntimeConfig& values);

enum class Command { kAdd, kDel };

struct RuntimeArgs {
  std::string container_id;  // the pod sandbox's ID
  std::string netns;         // path of the pod's network namespace
  std::string if_name;
  std::string pod_namespace;
  std::string pod_name;
  std::string pod_uid;
  std::vector<std::string> bin_dirs;  // CNI_PATH
};

// "IgnoreUnknown=true;K8S_POD_NAMESPACE=..;K8S_POD_NAME=..;K8S_POD_INFRA_CONTAINER_ID=..;
// K8S_POD_UID=..", as the reference driver and kubelet's CNI pass them.
std::string cniArgs(const RuntimeArgs& args);
std::vector<std::pair<std::string, std::string>> environment(Command command,
                                                             const RuntimeArgs& args);

// The stdin of plugin `index`: its configuration with the list's cniVersion and name, and
// `prev_result` ("" = none) as prevResult.
std::string pluginInput(const NetworkConfig& config, size_t index, std::string_view prev_result);

// A plugin's ADD result as the CNI specification and the claim status it feeds allow: a JSON
// object with a "cniVersion"; "ips" (at most 16, what status.devices[].networkData holds) of
// objects whose "address" is an IPv4 or IPv6 CIDR; "interfaces" of objects whose "name" has at
// most 256 characters and "mac" at most 128. kInvalidArgument naming the first problem.
Status checkResult(std::string_view result);

// What a CNI 1.0 result says about the pod's side: the interface with a sandbox (else the one
// named if_name, else the first), its MAC, and every IP as CIDR.
struct NetworkData {
  std::string interface_name;
  std::vector<std::string> ips;
  std::string hardware_address;
  bool operator==(const NetworkData&) const = default;
};
// kInvalidArgument when the result is not a JSON object.
Result<NetworkData> networkDataOf(std::string_view result, std::string_view if_name);

// The message of a failed plugin: the CNI error's "msg" (and "details") from stdout when it
// sent one, else stderr, else the exit code.
std::string failureMessage(std::string_view type, int exit_code, std::string_view out,
                           std::string_view err);

}  // namespace sriovdra::cni
