#pragma once
// What a NetworkAttachmentDefinition may make the agent run as root on its node, pure.
//
// A NAD is written by whoever may create one in a claim's namespace (or a SriovNetwork that the
// operator renders into it), yet the agent runs its plugins as root in the host's network
// namespace with the node's filesystems mounted. So, before a configuration runs:
//   * every plugin's "type" must be one the administrator allows (`plugins`; by default the
//     SR-IOV CNIs alone: a host-device meta plugin would move any host interface into the pod);
//   * every plugin's "ipam"."type" must be an allowed IPAM plugin (`ipam`): the main plugin
//     runs it as root with the whole configuration, so it is as powerful as a plugin;
//   * no plugin names a device ("deviceID", "runtimeConfig"): the agent sets them to the claim's
//     VF, and a second plugin of a list naming another VF would hand out someone else's VF;
//   * every host path in the configuration (the value of a key that names a file, such as
//     "logFile", "dataDir", "resolvConf", "kubeconfig", or any string starting with '/') is an
//     absolute path below a directory the administrator allows (`host_paths`; none by default):
//     a log file under the CDI or checkpoint directory would let a tenant write host state.
// Refusals are kForbidden naming the plugin, the field and the agent flag that allows it.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cni/config.h"

namespace sriovdra::cni {

struct AllowList {
  std::set<std::string> plugins = {"sriov", "ib-sriov"};
  // The IPAM plugins that work where the agent runs them, from its container: dhcp needs its
  // daemon's socket (/run/cni/dhcp.sock) and whereabouts its configuration and kubeconfig
  // (/etc/cni/net.d/whereabouts.d) mounted there, so they are opt-in (docs/install.md).
  std::set<std::string> ipam = {"host-local", "static"};
  std::vector<std::string> host_paths;  // absolute directories
};

Status checkAllowed(const NetworkConfig& config, const AllowList& allowed);

// True for an absolute path without "." or ".." components (what --cni-host-paths takes).
bool isCleanAbsolutePath(std::string_view path);

}  // namespace sriovdra::cni
