// ib-sriov: the InfiniBand SR-IOV CNI plugin (compatible with k8snetworkplumbingwg/ib-sriov-cni),
// on this machine's kernel. Installed into the node's CNI bin directory by the agent's init
// container.
#include "host/netlink.h"
#include "host/rdma.h"
#include "host/sysfs.h"
#include "node/cni/entry_points.h"

int main() {
  sriovdra::host::RealSysfs sysfs("/");
  sriovdra::host::KernelNetlink netlink;
  sriovdra::host::KernelRdma rdma;
  return sriovdra::cni_plugin::ibSriovMain(sysfs, netlink, rdma);
}
