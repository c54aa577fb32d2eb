#pragma once
// Everything the agent asks the kernel over netlink goes through Netlink, as sysfs goes through
// Sysfs: the one seam to that part of the kernel.
//   altNames(ifname)           rtnetlink RTM_GETLINK: the interface's alternative names
//                              (IFLA_PROP_LIST / IFLA_ALT_IFNAME), in the kernel's order.
//   eswitchMode(pci)           devlink DEVLINK_CMD_ESWITCH_GET on "pci/<address>":
//                              "legacy" or "switchdev".
//   setEswitchMode(pci, mode)  devlink DEVLINK_CMD_ESWITCH_SET (needs CAP_NET_ADMIN).
// Errors keep the kernel's errno (Status::sysErrno()): ENODEV no such interface or device;
// EOPNOTSUPP the driver has no eSwitch (e.g. an InfiniBand port); EBUSY the driver refuses the
// change while VFs exist; EINVAL a mode it does not know; EPERM without CAP_NET_ADMIN; ENOENT
// (Code::kNotFound) when the kernel has no devlink generic netlink family at all.
// Thread-safety: KernelNetlink opens a socket per call and may be used from any thread;
// SimulatedKernel (simulated_kernel.h) serializes calls with its writes.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sriovdra::host {

class Netlink {
 public:
  virtual ~Netlink() = default;
  virtual Result<std::vector<std::string>> altNames(std::string_view ifname) const = 0;
  virtual Result<std::string> eswitchMode(std::string_view pci_address) const = 0;
  virtual Status setEswitchMode(std::string_view pci_address, std::string_view mode) = 0;
};

// The running kernel's netlink (NETLINK_ROUTE and NETLINK_GENERIC sockets of the calling
// thread's network namespace). Each call waits at most `timeout` for the kernel's answer.
class KernelNetlink : public Netlink {
 public:
  explicit KernelNetlink(std::chrono::milliseconds timeout = std::chrono::seconds(5))
      : timeout_(timeout) {}
  Result<std::vector<std::string>> altNames(std::string_view ifname) const override;
  Result<std::string> eswitchMode(std::string_view pci_address) const override;
  Status setEswitchMode(std::string_view pci_address, std::string_view mode) override;

 private:
  std::chrono::milliseconds timeout_;
};

}  // namespace sriovdra::host
