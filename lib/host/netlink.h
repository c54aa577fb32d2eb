#pragma once
// Everything the agent asks the kernel over netlink goes through Netlink, as sysfs goes through
// Sysfs: the one seam to that part of the kernel.
//   links()                    rtnetlink RTM_GETLINK dump: every interface of the network
//                              namespace in one answer, statistics left out (LinkInfo), so
//                              discovery reads no netdev attribute file per VF.
//   eswitchMode(pci)           devlink DEVLINK_CMD_ESWITCH_GET on "pci/<address>":
//                              "legacy" or "switchdev".
//   setEswitchMode(pci, mode)  devlink DEVLINK_CMD_ESWITCH_SET (needs CAP_NET_ADMIN).
//   vfGuids(pf)                rtnetlink RTM_GETLINK of the PF netdev with RTEXT_FILTER_VF: the
//                              InfiniBand node and port GUID of each VF (IFLA_VF_IB_NODE_GUID /
//                              IFLA_VF_IB_PORT_GUID), from drivers that report them (mlx5 IPoIB
//                              ports); an empty list from others.
//   setVfGuids(pf, vf, n, p)   RTM_SETLINK of the PF with both GUIDs of VF `vf` (CAP_NET_ADMIN).
//                              A VF's driver reads its GUIDs when it binds: rebind a VF for a
//                              new GUID to take effect.
// Errors keep the kernel's errno (Status::sysErrno()): ENODEV no such interface or device, or
// (devlink) a driver that registers no devlink instance, such as igb; EOPNOTSUPP a devlink
// instance without an eSwitch (e.g. an InfiniBand port), or (GUIDs) a PF whose driver has no
// VF GUIDs (any Ethernet port); EBUSY the driver refuses the
// change while VFs exist; EINVAL a mode it does not know; EPERM without CAP_NET_ADMIN; ENOENT
// (Code::kNotFound) when the kernel has no devlink generic netlink family at all.
// Thread-safety: KernelNetlink opens a socket per call and may be used from any thread;
// SimulatedKernel (simulated_kernel.h) serializes calls with its writes.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sriovdra::host {

// One network interface as RTM_NEWLINK describes it.
struct LinkInfo {
  int32_t index = 0;
  std::string name;                    // IFLA_IFNAME
  std::string mac;                     // IFLA_ADDRESS as sysfs shows it: "3c:fd:fe:a0:00:01"
  int64_t mtu = 0;                     // IFLA_MTU
  uint32_t flags = 0;                  // ifi_flags: IFF_UP when administratively up
  uint16_t type = 0;                   // ifi_type: ARPHRD_ETHER 1, ARPHRD_INFINIBAND 32
  std::string parent_bus;              // IFLA_PARENT_DEV_BUS_NAME: "pci" for a NIC's netdev
  std::string parent_device;           // IFLA_PARENT_DEV_NAME: its PCI address ("" from kernels
                                       // that do not report parents, and for virtual links)
  std::vector<std::string> alt_names;  // IFLA_PROP_LIST / IFLA_ALT_IFNAME, in kernel order
  bool operator==(const LinkInfo&) const = default;
};

// A VF's InfiniBand GUIDs as the PF's driver reports them (0: none assigned).
struct VfGuids {
  int32_t vf = 0;
  uint64_t node_guid = 0;
  uint64_t port_guid = 0;
  bool operator==(const VfGuids&) const = default;
};

// "02:11:22:33:44:55:66:77", the first byte the most significant (as ip-link(8) writes GUIDs).
std::string guidText(uint64_t guid);
// kInvalidArgument unless eight hex bytes separated by colons.
Result<uint64_t> parseGuid(std::string_view text);

class Netlink {
 public:
  virtual ~Netlink() = default;
  virtual Result<std::vector<LinkInfo>> links() const = 0;
  virtual Result<std::string> eswitchMode(std::string_view pci_address) const = 0;
  virtual Status setEswitchMode(std::string_view pci_address, std::string_view mode) = 0;
  virtual Result<std::vector<VfGuids>> vfGuids(std::string_view pf) const = 0;
  virtual Status setVfGuids(std::string_view pf, int32_t vf, uint64_t node_guid,
                            uint64_t port_guid) = 0;
};

// The running kernel's netlink (NETLINK_ROUTE and NETLINK_GENERIC sockets of the calling
// thread's network namespace). Each call waits at most `timeout` for the kernel's answer.
class KernelNetlink : public Netlink {
 public:
  explicit KernelNetlink(std::chrono::milliseconds timeout = std::chrono::seconds(5))
      : timeout_(timeout) {}
  Result<std::vector<LinkInfo>> links() const override;
  Result<std::string> eswitchMode(std::string_view pci_address) const override;
  Status setEswitchMode(std::string_view pci_address, std::string_view mode) override;
  Result<std::vector<VfGuids>> vfGuids(std::string_view pf) const override;
  Status setVfGuids(std::string_view pf, int32_t vf, uint64_t node_guid,
                    uint64_t port_guid) override;

 private:
  std::chrono::milliseconds timeout_;
};

}  // namespace sriovdra::host
