#pragma once
// What the agent and the CNI plugins ask the kernel over netlink about PFs and their VFs goes
// through Netlink, as sysfs goes through Sysfs: the seam where the simulated kernel stands in.
// (The netdevs a CNI plugin moves into pods are netdev.h's, always the running kernel's.)
//   links()                    rtnetlink RTM_GETLINK dump: every interface of the network
//                              namespace in one answer, statistics left out (LinkInfo), so
//                              discovery reads no netdev attribute file per VF.
//   eswitchMode(pci)           devlink DEVLINK_CMD_ESWITCH_GET on "pci/<address>":
//                              "legacy" or "switchdev".
//   setEswitchMode(pci, mode)  devlink DEVLINK_CMD_ESWITCH_SET (needs CAP_NET_ADMIN).
//   vfs(pf)                    RTM_GETLINK of the PF netdev with RTEXT_FILTER_VF: every VF as its
//                              PF's driver reports it (MAC, VLAN, rates, spoofchk, trust, link
//                              state, and the InfiniBand node and port GUIDs from drivers that
//                              report them: mlx5 IPoIB ports), what `ip link show <pf>` prints as
//                              "vf N ...". vfGuids(pf): those of them with GUIDs.
//   vfStats(pf)                the same request with statistics (no RTEXT_FILTER_SKIP_STATS):
//                              each VF's IFLA_VF_STATS, the counters `ip -s link show <pf>`
//                              prints per VF. Drivers without ndo_get_vf_stats (igb, for one:
//                              tests/kernel) report them all zero.
//   setVfGuids(pf, vf, n, p)   RTM_SETLINK of the PF with both GUIDs of VF `vf` (CAP_NET_ADMIN).
//                              A VF's driver reads its GUIDs when it binds: rebind a VF for a
//                              new GUID to take effect.
//   setUp(netdev, up)          RTM_NEWLINK of the netdev with IFF_UP set or cleared, as
//                              `ip link set <netdev> up|down` (CAP_NET_ADMIN); drivers such as igb
//                              take VF rate limits only while the PF is up with a link.
//   setVf(pf, setting)         one RTM_SETLINK of the PF with one setting of one VF, as
//                              `ip link set <pf> vf N ...` sends it (CAP_NET_ADMIN). Drivers refuse
//                              what they cannot do with their own errno: igb, for one, answers
//                              EOPNOTSUPP to a link state, EPROTONOSUPPORT to 802.1ad and EINVAL
//                              to a minimum rate (tests/kernel).
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

// One VF as its PF's driver reports it in IFLA_VFINFO_LIST (RTM_NEWLINK with RTEXT_FILTER_VF).
struct VfInfo {
  int32_t vf = 0;
  std::string mac = "00:00:00:00:00:00";  // IFLA_VF_MAC: the administrative MAC, zero when unset
  int32_t vlan = 0;                       // IFLA_VF_VLAN_LIST (or IFLA_VF_VLAN from old kernels)
  int32_t qos = 0;
  uint16_t vlan_proto = 0x8100;  // ETH_P_8021Q, or ETH_P_8021AD (0x88a8); host byte order
  uint32_t min_tx_rate = 0;      // IFLA_VF_RATE, Mbps; 0: no limit
  uint32_t max_tx_rate = 0;
  bool spoofchk = false;    // IFLA_VF_SPOOFCHK (a driver that does not say reports it on)
  bool trust = false;       // IFLA_VF_TRUST (ditto)
  uint32_t link_state = 0;  // IFLA_VF_LINK_STATE: 0 auto, 1 enable, 2 disable
  uint64_t node_guid = 0;   // IFLA_VF_IB_NODE_GUID (InfiniBand PFs; 0: none)
  uint64_t port_guid = 0;   // IFLA_VF_IB_PORT_GUID
  bool has_guids = false;   // the driver reported GUIDs
  bool operator==(const VfInfo&) const = default;
};

// One VF's counters as its PF's driver reports them (IFLA_VF_STATS, include/uapi/linux/if_link.h).
// Packets and bytes seen by the PF's switch for the VF; broadcast and multicast are received ones.
struct VfStats {
  int32_t vf = 0;
  uint64_t rx_packets = 0;
  uint64_t tx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
  uint64_t broadcast = 0;
  uint64_t multicast = 0;
  uint64_t rx_dropped = 0;  // IFLA_VF_STATS_RX_DROPPED (0 from kernels that do not send it)
  uint64_t tx_dropped = 0;
  bool operator==(const VfStats&) const = default;
};

// One setting of one VF: what one RTM_SETLINK of its PF carries (IFLA_VFINFO_LIST > IFLA_VF_INFO >
// the attribute of `kind`).
struct VfSetting {
  enum class Kind { kMac, kVlan, kRate, kSpoofchk, kTrust, kLinkState };
  Kind kind = Kind::kMac;
  int32_t vf = 0;
  std::string mac;                            // kMac (IFLA_VF_MAC)
  int32_t vlan = 0;                           // kVlan (IFLA_VF_VLAN_LIST)
  int32_t qos = 0;                            // kVlan
  uint16_t vlan_proto = 0x8100;               // kVlan
  uint32_t min_tx_rate = 0, max_tx_rate = 0;  // kRate (IFLA_VF_RATE)
  bool on = false;                            // kSpoofchk, kTrust
  uint32_t link_state = 0;                    // kLinkState
  // In ip-link(8)'s words: "vf 3 vlan 100 qos 2 proto 802.1Q", "vf 1 trust on".
  std::string text() const;
  bool operator==(const VfSetting&) const = default;
};
inline constexpr uint16_t kVlanProto8021Q = 0x8100;
inline constexpr uint16_t kVlanProto8021AD = 0x88a8;
// "802.1Q", "802.1ad", else the number in hex.
std::string vlanProtoText(uint16_t proto);

// "3c:fd:fe:a0:00:01" for six bytes (any length: each byte as two lower-case hex digits).
std::string macText(std::string_view bytes);
// The bytes of a MAC written as ip-link(8) and Go's net.ParseMAC read them: six hex octets
// separated by ':' or '-' ("3C-FD-FE-A0-00-01"), or three groups of four hex digits separated by
// '.' ("3cfd.fea0.0001"). kInvalidArgument "address <text>: invalid MAC address" (Go's words).
Result<std::string> parseMac(std::string_view text);

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
  // The VFs of vfs(pf) that carry GUIDs.
  Result<std::vector<VfGuids>> vfGuids(std::string_view pf) const;
  virtual Status setVfGuids(std::string_view pf, int32_t vf, uint64_t node_guid,
                            uint64_t port_guid) = 0;
  virtual Result<std::vector<VfInfo>> vfs(std::string_view pf) const = 0;
  virtual Result<std::vector<VfStats>> vfStats(std::string_view pf) const = 0;
  virtual Status setVf(std::string_view pf, const VfSetting& setting) = 0;
  virtual Status setUp(std::string_view netdev, bool up) = 0;
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
  Status setVfGuids(std::string_view pf, int32_t vf, uint64_t node_guid,
                    uint64_t port_guid) override;
  Result<std::vector<VfInfo>> vfs(std::string_view pf) const override;
  Result<std::vector<VfStats>> vfStats(std::string_view pf) const override;
  Status setVf(std::string_view pf, const VfSetting& setting) override;
  Status setUp(std::string_view netdev, bool up) override;

 private:
  std::chrono::milliseconds timeout_;
};

}  // namespace sriovdra::host
