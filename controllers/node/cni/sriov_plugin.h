#pragma once
// The `sriov` CNI plugin's commands, as upstream's k8snetworkplumbingwg/sriov-cni does them (its
// configuration keys, cache files, error texts; docs/cni.md), on lib/host's sysfs, netlink and
// namespace code. What differs from upstream, on purpose:
//   * a failed ADD puts back everything it changed (the netdev, the VF's settings, IPAM), where
//     upstream leaves a VF configured when one of its settings fails (its issue 119);
//   * DEL succeeds when the VF is gone (VFs were recreated), logging why, where upstream fails
//     once; a DPDK VF's DEL does not look for a netdev (its mode is cached, and checked again from
//     the VF's driver for caches upstream wrote);
//   * waits are bounded for a runtime's budget: the VF lock (PluginHost::lock_timeout), the MAC
//     read-back (5 tries, 20 ms apart), the IPv6 settle (5 s, only with an IPv6 gateway);
//   * IPv6 addresses never wait for DAD where /proc/sys is read-only (ipam.h).
// ADD: the VF from "deviceID" (its PF and index from sysfs), locked; its original state read from
// the PF; VLAN, MAC, rates, spoofchk, trust and link state set through the PF; in kernel mode the
// netdev moved through a temporary namespace into the pod's, renamed to CNI_IFNAME, its MAC set,
// up; IPAM delegated and applied; the cache and allocation written; GARP/NA sent. The result has
// the interface (name, MAC, MTU, sandbox) and the IPAM plugin's addresses and routes, in the
// configuration's CNI version.
// DEL: from the cache: IPAM released, the VF's settings restored through the PF, the netdev put
// back in the host namespace under its old name with its MAC and MTU; cache and allocation removed.
#include <string>

#include "base/status.h"
#include "cni/skel.h"
#include "node/cni/plugin_host.h"

namespace sriovdra::cni_plugin {

class SriovPlugin {
 public:
  explicit SriovPlugin(PluginHost host);
  // The result's JSON text; errors carry upstream's message.
  Result<std::string> add(const cni::CmdArgs& args);
  Status del(const cni::CmdArgs& args);

 private:
  PluginHost host_;
};

}  // namespace sriovdra::cni_plugin
