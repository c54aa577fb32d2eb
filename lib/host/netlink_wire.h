#pragma once
// The netlink messages the agent sends and reads, as bytes (pure: no sockets, no globals).
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
//   vfGuidRequest       RTM_SETLINK of a netdev by name: IFLA_VFINFO_LIST > IFLA_VF_INFO >
//                       IFLA_VF_IB_NODE_GUID and IFLA_VF_IB_PORT_GUID (struct ifla_vf_guid)
// Every other request asks for an acknowledgement (NLM_F_REQUEST | NLM_F_ACK).
// The parsers take what the kernel answered (one recv() buffer, possibly several messages) and
// never read past it: a truncated or malformed buffer is a kInvalidArgument, a netlink error
// message a Status with the kernel's errno (fromErrno), e.g. ENODEV for a missing device.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "host/netlink.h"

namespace sriovdra::host::netlink {

std::string linkDumpRequest(uint32_t seq);
std::string familyRequest(uint32_t seq, std::string_view family);
std::string eswitchGetRequest(uint16_t devlink_family, uint32_t seq, std::string_view pci_address);
// mode: "legacy" or "switchdev" (anything else: kInvalidArgument).
Result<std::string> eswitchSetRequest(uint16_t devlink_family, uint32_t seq,
                                      std::string_view pci_address, std::string_view mode);

std::string vfInfoRequest(uint32_t seq, std::string_view name);
std::string vfGuidRequest(uint32_t seq, std::string_view name, int32_t vf, uint64_t node_guid,
                          uint64_t port_guid);

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
// From an RTM_NEWLINK payload with VF information: the VFs that carry InfiniBand GUIDs.
Result<std::vector<VfGuids>> vfGuidsOf(std::string_view newlink_payload);
// From a CTRL_CMD_NEWFAMILY payload: CTRL_ATTR_FAMILY_ID.
Result<uint16_t> familyIdOf(std::string_view payload);
// From a DEVLINK_CMD_ESWITCH_GET answer payload: "legacy" or "switchdev".
Result<std::string> eswitchModeOf(std::string_view payload);

}  // namespace sriovdra::host::netlink
