#pragma once
// The `ib-sriov` CNI plugin's commands, as upstream's k8snetworkplumbingwg/ib-sriov-cni does them
// (its keys, cache files and error texts; docs/cni.md), on lib/host's sysfs, netlink and
// namespace code. The VF's GUID comes from runtimeConfig.infinibandGUID or args.cni.guid: set on
// the VF through its PF's netlink (node and port GUID), the VF rebound so its driver reads it,
// restored on DEL; without one, the VF's own GUID must be valid (the agent assigns one). The
// link state is set through the PF and back to auto on DEL. In vfio-pci mode (auto-detected)
// nothing is moved and no IPAM runs. What differs from upstream, on purpose:
//   * ADD and DEL of all VFs of the node are serialized by a lock under the state directory
//     (/var/lib/cni/ib-sriov/cni.lock, which the agent's container has), waited for at most
//     PluginHost::lock_timeout, where upstream waits without end on /var/run/cni;
//   * a failed ADD also puts back the link state and the GUID it set;
//   * DEL whose pod namespace is gone still resets the VF (link state, GUID, its host name);
//   * rdmaIsolation is refused with a message: moving the RDMA device is not built yet.
#include "base/status.h"
#include "cni/skel.h"
#include "cni_plugin/sriov_plugin.h"

namespace sriovdra::cni_plugin {

class IbSriovPlugin {
 public:
  // host.state_dir: the plugin's own (/var/lib/cni/ib-sriov).
  explicit IbSriovPlugin(PluginHost host) : host_(std::move(host)) {}
  Result<std::string> add(const cni::CmdArgs& args);
  Status del(const cni::CmdArgs& args);

 private:
  PluginHost host_;
};

}  // namespace sriovdra::cni_plugin
