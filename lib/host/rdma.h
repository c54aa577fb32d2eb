#pragma once
// What a CNI plugin asks of Linux's RDMA subsystem (rdmaIsolation: a VF's RDMA device into the
// pod), over the RDMA netlink family as rdma(8) does: the seam where the simulated kernel stands
// in, as netlink.h is for rtnetlink. Every call acts in the calling thread's network namespace
// (NetNamespace::run() reaches a pod's).
//   netnsMode()           RDMA_NLDEV_CMD_SYS_GET: "shared" (every network namespace sees every
//                         RDMA device; Linux's default) or "exclusive" (a device belongs to one
//                         namespace: ib_core.netns_mode=0 at boot, or `rdma system set netns
//                         exclusive` while no other namespace exists).
//   moveDevice(dev, ns)   RDMA_NLDEV_CMD_SET of the device named `dev` (found by a
//                         RDMA_NLDEV_CMD_GET dump of the devices this namespace sees) with
//                         RDMA_NLDEV_NET_NS_FD: the device into the namespace `ns`. ENODEV when
//                         this namespace sees no such device; EOPNOTSUPP in shared mode, and from
//                         a driver that cannot take back its user contexts (soft-RoCE's rxe:
//                         tests/kernel; mlx5 can); EPERM without CAP_NET_ADMIN over both
//                         namespaces. Linux recreates the device's upper netdevs (IPoIB) in the
//                         initial namespace on a move: move the RDMA device before the netdev.
// Errors keep the kernel's errno (Status::sysErrno()).
// Thread-safety: KernelRdma opens a socket per call and may be used from any thread;
// SimulatedKernel (simulated_kernel.h) serializes calls with its writes.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "host/netns.h"
#include "host/sysfs.h"

namespace sriovdra::host {

class Rdma {
 public:
  virtual ~Rdma() = default;
  virtual Result<std::string> netnsMode() const = 0;
  virtual Status moveDevice(std::string_view device, const NetNamespace& target) = 0;
};

class KernelRdma : public Rdma {
 public:
  explicit KernelRdma(std::chrono::milliseconds timeout = std::chrono::seconds(5))
      : timeout_(timeout) {}
  Result<std::string> netnsMode() const override;
  Status moveDevice(std::string_view device, const NetNamespace& target) override;
  // The index of the device named `device` in a RDMA_NLDEV_CMD_GET dump of what this namespace
  // sees; ENODEV when it is not there.
  Result<uint32_t> deviceIndex(std::string_view device) const;

 private:
  std::chrono::milliseconds timeout_;
};

// The RDMA devices of the PCI function `pci_address`, as its sysfs directory lists them
// (sys/bus/pci/devices/<address>/infiniband, as upstream's rdmamap reads it), sorted; none when
// the directory does not exist.
std::vector<std::string> rdmaDevicesOf(const Sysfs& sysfs, std::string_view pci_address);

}  // namespace sriovdra::host
