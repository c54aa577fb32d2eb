#pragma once
// The plugin's side of CNI, pure: what the reference skeleton (containernetworking/cni
// pkg/skel, v1.3) checks before a plugin's own code runs, and how a plugin answers. A plugin built
// on it behaves as one built on the Go skeleton, errors and codes included, so runtimes, Multus
// and people reading logs see no difference:
//   * CNI_COMMAND is required; CNI_CONTAINERID (validated: [a-zA-Z0-9][a-zA-Z0-9_.-]*) and
//     CNI_IFNAME (at most 15 bytes, no '/', ':' or whitespace, not "." or "..") for ADD, CHECK and
//     DEL; CNI_NETNS for ADD and CHECK; CNI_PATH for everything but VERSION. Missing ones: code 4
//     "required env variables [A,B] missing"; an invalid container id or interface name: code 4.
//   * stdin (not read for VERSION) must be JSON with a valid network name (code 6 when it does not
//     decode, 7 for the name) and a cniVersion (absent: 0.1.0) the plugin supports (code 1
//     "incompatible CNI versions", details naming both). CHECK needs 0.4.0 or later, STATUS and
//     GC 1.1.0 (code 1 "config version does not allow CHECK").
//   * An unknown command: code 4 "unknown CNI_COMMAND: X".
// Errors go to stdout as {"code", "msg", "details"} indented by four spaces, without a trailing
// newline, '<', '>' and '&' escaped as Go's encoding/json escapes them; the exit status is 1. A
// plugin's own failures are code 999.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sriovdra::cni {

inline constexpr uint32_t kErrIncompatibleVersion = 1;
inline constexpr uint32_t kErrUnknownContainer = 3;
inline constexpr uint32_t kErrInvalidEnvironment = 4;
inline constexpr uint32_t kErrIoFailure = 5;
inline constexpr uint32_t kErrDecodingFailure = 6;
inline constexpr uint32_t kErrInvalidNetworkConfig = 7;
inline constexpr uint32_t kErrInvalidNetNs = 8;
inline constexpr uint32_t kErrTryAgainLater = 11;
inline constexpr uint32_t kErrInternal = 999;

struct PluginError {
  uint32_t code = kErrInternal;
  std::string msg;
  std::string details;
  bool operator==(const PluginError&) const = default;
};
std::string errorJson(const PluginError& error);

enum class PluginCommand { kAdd, kDel, kCheck, kStatus, kGc, kVersion };

// What a command runs with: the environment's values and stdin, checked as above.
struct CmdArgs {
  PluginCommand command = PluginCommand::kVersion;
  std::string container_id;
  std::string netns;
  std::string if_name;
  std::string args;  // CNI_ARGS
  std::string path;  // CNI_PATH
  std::string netns_override;
  std::string stdin_data;
  std::string cni_version;  // of the configuration ("0.1.0" when it names none)
  // Whether CNI_NETNS_OVERRIDE lifts the check that the plugin's namespace is not CNI_NETNS.
  bool netnsOverridden() const;
};

// The versions the SR-IOV CNIs support, oldest first.
const std::vector<std::string>& supportedVersions();
// VERSION's answer: {"cniVersion":"1.1.0","supportedVersions":[...]} and a newline.
std::string versionJson();

// The environment variable's value, "" when it is unset.
using Getenv = std::function<std::string(std::string_view)>;
// The command's arguments, or the skeleton's error. `stdin_data` is ignored for VERSION.
std::variant<CmdArgs, PluginError> prepareCommand(const Getenv& env, std::string stdin_data);

// The checks the skeleton makes of each name it was given (nullopt-like: code 0 when valid). An
// empty container id is code 3 "missing containerID", as upstream's function says; the skeleton
// never asks, having reported the variable missing (code 4).
PluginError validateContainerId(std::string_view id);
PluginError validateInterfaceName(std::string_view name);
PluginError validateNetworkName(std::string_view name);

}  // namespace sriovdra::cni
