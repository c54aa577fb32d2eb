#pragma once
// The netlink messages the agent and the CNI plugins send and read, as bytes (pure: no sockets,
// no globals).
// Layouts are the kernel's UAPI (<linux/netlink.h>, <linux/rtnetlink.h>, <linux/genetlink.h>,
// <linux/devlink.h>): a 16-byte nlmsghdr, a family header (ifinfomsg 16 bytes, genlmsghdr 4),
// then attributes (2-byte length, 2-byte type, value, padded to 4 bytes).
//   linkDumpRequest     RTM_GETLINK of every interface (NLM_F_DUMP), statistics left out
//                       (IFLA_EXT_MASK RTEXT_FILTER_SKIP_STATS); answered by RTM_NEWLINKs, then
//                       NLMSG_DONE
//   familyRequest       CTRL_CMD_GETFAMILY for a generic netlink family by name
//   eswitchGetRequest   DEVLINK_CMD_ESWITCH_GET for bus "pci", device <address>
//   eswitchSetRequest   DEVLINK_CMD_ESWITCH_SET with DEVLINK_ATTR_ESWITCH_MODE (u16)
//   vfInfoRequest       RTM_GETLINK of one netdev by name (IFLA_IFNAME) with the VF information
//                       (IFLA_EXT_MASK RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS)
//   vfStatsRequest      the same with statistics (IFLA_EXT_MASK RTEXT_FILTER_VF)
//   vfGuidRequest       RTM_SETLINK of a netdev by name: IFLA_VFINFO_LIST > IFLA_VF_INFO >
//                       IFLA_VF_IB_NODE_GUID and IFLA_VF_IB_PORT_GUID (struct ifla_vf_guid)
//   vfSetRequest        RTM_SETLINK of a netdev by name: IFLA_VFINFO_LIST > IFLA_VF_INFO > one
//                       of IFLA_VF_MAC, IFLA_VF_VLAN_LIST > IFLA_VF_VLAN_INFO (the protocol in
//                       network order), IFLA_VF_RATE, IFLA_VF_SPOOFCHK, IFLA_VF_TRUST,
//                       IFLA_VF_LINK_STATE
//   linkRequest         RTM_GETLINK of one netdev by name, statistics left out
//   linkUpRequest       RTM_NEWLINK of one netdev by name: IFF_UP in ifi_flags and ifi_change
//   linkChangeRequest   RTM_NEWLINK of a netdev by index with what LinkChange sets: IFLA_IFNAME,
//                       IFLA_ADDRESS, IFLA_MTU, IFF_UP in ifi_flags/ifi_change, IFLA_NET_NS_FD
//   altNameDeleteRequest RTM_DELLINKPROP: IFLA_PROP_LIST > IFLA_ALT_IFNAME
//   addressAddRequest   RTM_NEWADDR (NLM_F_CREATE | NLM_F_EXCL): IFA_LOCAL, IFA_ADDRESS, IFA_FLAGS
//                       and, for IPv4, IFA_BROADCAST (the prefix's last address)
//   routeAddRequest     RTM_NEWROUTE (NLM_F_CREATE | NLM_F_EXCL) in the main table: RTA_DST,
//                       RTA_GATEWAY, RTA_OIF; scope link without a gateway
//   addressDumpRequest  RTM_GETADDR of every address of one family (NLM_F_DUMP)
// Every other request asks for an acknowledgement (NLM_F_REQUEST | NLM_F_ACK).
// The parsers take what the kernel answered (one recv() buffer, possibly several messages) and
// never read past it: a truncated or malformed buffer is a kInvalidArgument, a netlink error
// message a Status with the kernel's errno (fromErrno), e.g. ENODEV for a missing device.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/ip.h"
#include "base/status.h"
#include "host/netlink.h"

namespace sriovdra::host::netlink {

// kInvalidArgument unless `name` is a name Linux gives an interface (dev_valid_name: 1 to 15
// bytes, not "." or "..", no '/', ':' or whitespace), or an alternative name (`alt`: up to 127
// bytes). Every request that carries a name checks it first: names also come from files.
Status checkIfName(std::string_view name, bool alt = false);

std::string linkDumpRequest(uint32_t seq);
std::string familyRequest(uint32_t seq, std::string_view family);
std::string eswitchGetRequest(uint16_t devlink_family, uint32_t seq, std::string_view pci_address);
// mode: "legacy" or "switchdev" (anything else: kInvalidArgument).
Result<std::string> eswitchSetRequest(uint16_t devlink_family, uint32_t seq,
                                      std::string_view pci_address, std::string_view mode);

std::string vfInfoRequest(uint32_t seq, std::string_view name);
std::string vfStatsRequest(uint32_t seq, std::string_view name);
std::string vfGuidRequest(uint32_t seq, std::string_view name, int32_t vf, uint64_t node_guid,
                          uint64_t port_guid);
// kInvalidArgument for a MAC that parseMac refuses.
Result<std::string> vfSetRequest(uint32_t seq, std::string_view name, const VfSetting& setting);

std::string linkRequest(uint32_t seq, std::string_view name);
// RTM_NEWLINK of a netdev by name, IFF_UP set (up) or cleared.
std::string linkUpRequest(uint32_t seq, std::string_view name, bool up);

// What one RTM_NEWLINK changes on a netdev (unset: unchanged).
struct LinkChange {
  std::optional<std::string> name;
  std::optional<std::string> mac;  // as parseMac reads it
  std::optional<uint32_t> mtu;
  std::optional<bool> up;
  std::optional<int> netns_fd;  // moves the netdev into that network namespace
};
// kInvalidArgument for a MAC that parseMac refuses.
Result<std::string> linkChangeRequest(uint32_t seq, int32_t index, const LinkChange& change);
std::string altNameDeleteRequest(uint32_t seq, int32_t index, std::string_view alt_name);
// IFA_F_* flags, e.g. IFA_F_NODAD.
std::string addressAddRequest(uint32_t seq, int32_t index, const IpPrefix& address, uint32_t flags);
// `destination`'s host bits are cleared; no gateway: a route on the link.
std::string routeAddRequest(uint32_t seq, int32_t index, const IpPrefix& destination,
                            const std::optional<IpAddress>& gateway);
// family: AF_INET or AF_INET6.
std::string addressDumpRequest(uint32_t seq, int family);

// One address of an RTM_NEWADDR message.
struct AddressInfo {
  int32_t index = 0;
  IpPrefix prefix;
  uint32_t flags = 0;  // IFA_FLAGS, else ifa_flags: IFA_F_TENTATIVE, IFA_F_DADFAILED, ...
  bool operator==(const AddressInfo&) const = default;
};
Result<AddressInfo> addressOf(std::string_view newaddr_payload);

// What one answer buffer holds for the request with sequence number `seq`.
struct Reply {
  bool acked = false;                 // NLMSG_ERROR with error 0 (or NLMSG_DONE)
  bool interrupted = false;           // NLM_F_DUMP_INTR: the dump changed while sent; ask again
  std::vector<std::string> payloads;  // the data messages, each without its nlmsghdr
};
// kernel errors (NLMSG_ERROR < 0) become Status::fromErrno(errno, what).
Result<Reply> parseReply(std::string_view buffer, uint32_t seq, std::string_view what);

// An RTM_NEWLINK payload (ifinfomsg, then attributes) as a LinkInfo.
Result<LinkInfo> linkOf(std::string_view newlink_payload);
// From an RTM_NEWLINK payload with VF information: every VF it lists, in its order (the MAC as
// long as the link's own IFLA_ADDRESS, six bytes when it has none).
Result<std::vector<VfInfo>> vfInfosOf(std::string_view newlink_payload);
// From an RTM_NEWLINK payload with VF statistics: every VF's counters, in its order (the VF's
// index from its IFLA_VF_MAC, which the kernel always sends; all zero without IFLA_VF_STATS).
// kTooLarge when fewer VFs decode than IFLA_NUM_VF says: the list overflowed its 16-bit length
// (with counters, PFs with some 200 VFs or more).
Result<std::vector<VfStats>> vfStatsOf(std::string_view newlink_payload);
// From a CTRL_CMD_NEWFAMILY payload: CTRL_ATTR_FAMILY_ID.
Result<uint16_t> familyIdOf(std::string_view payload);
// From a DEVLINK_CMD_ESWITCH_GET answer payload: "legacy" or "switchdev".
Result<std::string> eswitchModeOf(std::string_view payload);

}  // namespace sriovdra::host::netlink
