#pragma once
// The `ib-sriov` CNI plugin's commands, as upstream's k8snetworkplumbingwg/ib-sriov-cni does them
// (its keys, cache files and error texts; docs/cni.md), on lib/host's sysfs, netlink and
// namespace code. The VF's GUID comes from runtimeConfig.infinibandGUID or args.cni.guid: set on
// the VF through its PF's netlink (node and port GUID), the VF rebound so its driver reads it,
// restored on DEL; without one, the VF's own GUID must be valid (the agent assigns one). The
// link state is set through the PF and back to auto on DEL. In vfio-pci mode (auto-detected)
// nothing is moved and no IPAM runs. With rdmaIsolation (the RDMA subsystem must be in exclusive
// namespace mode) the VF's only RDMA device moves into the pod before its netdev, and back on
// DEL after it. What differs from upstream, on purpose:
//   * ADD and DEL of all VFs of the node are serialized by a lock under the state directory
//     (/var/lib/cni/ib-sriov/cni.lock, which the agent's container has), waited for at most
//     PluginHost::lock_timeout, where upstream waits without end on /var/run/cni; ADD lets it go
//     before IPAM and takes it again to undo;
//   * the cache is written before the VF is touched (with the GUID it had), and a failed ADD puts
//     back all it did, the link state and the GUID included; a failed DEL keeps the cache for
//     the runtime's retry;
//   * DEL with an empty CNI_NETNS or the pod's namespace gone still releases IPAM and resets the
//     VF (link state, GUID, its host name), and leaves a VF whose PF or index changed alone;
//   * the pod's own interface of CNI_IFNAME's name is never touched (pod_netdev.h);
//   * the RDMA device's move is written to the cache before it happens, so a DEL after a killed
//     ADD brings it back; a device the pod no longer sees is not an error on DEL.
#include "base/status.h"
#include "cni/skel.h"
#include "node/cni/plugin_host.h"

namespace sriovdra::cni_plugin {

class IbSriovPlugin {
 public:
  explicit IbSriovPlugin(PluginHost host);
  Result<std::string> add(const cni::CmdArgs& args);
  Status del(const cni::CmdArgs& args);

 private:
  PluginHost host_;
};

}  // namespace sriovdra::cni_plugin
