#include "host/netlink_wire.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <arpa/inet.h>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "host/netlink_encoding.h"

namespace sriovdra::host::netlink {
namespace {

using namespace encoding;

std::string genlHeader(uint8_t cmd, uint8_t version) {
  genlmsghdr g{};
  g.cmd = cmd;
  g.version = version;
  std::string out;
  put(out, g);
  return out;
}

std::string devlinkBody(uint8_t cmd, std::string_view pci_address) {
  std::string body = genlHeader(cmd, DEVLINK_GENL_VERSION);
  stringAttribute(body, DEVLINK_ATTR_BUS_NAME, "pci");
  stringAttribute(body, DEVLINK_ATTR_DEV_NAME, pci_address);
  return body;
}

}  // namespace

Status checkIfName(std::string_view name, bool alt) {
  bool ok = !name.empty() && name.size() <= (alt ? 127u : 15u) && name != "." && name != "..";
  for (char c : name) {
    if (c == '/' || c == ':' || c == '\0' || std::isspace(static_cast<unsigned char>(c)) != 0) {
      ok = false;
    }
  }
  if (ok) return Status::ok();
  return Status(Code::kInvalidArgument,
                "\"" + std::string(name.substr(0, 64)) + "\" is not an interface name (1 to " +
                    (alt ? "127" : "15") + " bytes, no '/', ':' or whitespace)");
}

std::string linkDumpRequest(uint32_t seq) {
  ifinfomsg info{};
  info.ifi_family = AF_UNSPEC;
  std::string body;
  put(body, info);
  uint32_t mask = RTEXT_FILTER_SKIP_STATS;
  attribute(body, IFLA_EXT_MASK,
            std::string_view(reinterpret_cast<const char*>(&mask), sizeof mask));
  return message(RTM_GETLINK, seq, body, NLM_F_REQUEST | NLM_F_DUMP);
}

std::string linkRequest(uint32_t seq, std::string_view name) {
  ifinfomsg info{};
  info.ifi_family = AF_UNSPEC;
  std::string body;
  put(body, info);
  stringAttribute(body, IFLA_IFNAME, name);
  uint32_t mask = RTEXT_FILTER_SKIP_STATS;
  attribute(body, IFLA_EXT_MASK, raw(mask));
  return message(RTM_GETLINK, seq, body);
}

std::string linkUpRequest(uint32_t seq, std::string_view name, bool up) {
  ifinfomsg info{};
  info.ifi_family = AF_UNSPEC;
  info.ifi_flags = up ? IFF_UP : 0;
  info.ifi_change = IFF_UP;
  std::string body;
  put(body, info);
  stringAttribute(body, IFLA_IFNAME, name);
  return message(RTM_NEWLINK, seq, body);
}

Result<std::string> linkChangeRequest(uint32_t seq, int32_t index, const LinkChange& change) {
  ifinfomsg info{};
  info.ifi_family = AF_UNSPEC;
  info.ifi_index = index;
  if (change.up) {
    info.ifi_flags = *change.up ? IFF_UP : 0;
    info.ifi_change = IFF_UP;
  }
  std::string body;
  put(body, info);
  if (change.name) stringAttribute(body, IFLA_IFNAME, *change.name);
  if (change.mac) {
    auto mac = parseMac(*change.mac);
    if (!mac.ok()) return mac.status();
    attribute(body, IFLA_ADDRESS, *mac);
  }
  if (change.mtu) attribute(body, IFLA_MTU, raw(*change.mtu));
  if (change.netns_fd)
    attribute(body, IFLA_NET_NS_FD, raw(static_cast<uint32_t>(*change.netns_fd)));
  return message(RTM_NEWLINK, seq, body);
}

std::string altNameDeleteRequest(uint32_t seq, int32_t index, std::string_view alt_name) {
  ifinfomsg info{};
  info.ifi_family = AF_UNSPEC;
  info.ifi_index = index;
  std::string body;
  put(body, info);
  std::string props;
  stringAttribute(props, IFLA_ALT_IFNAME, alt_name);
  attribute(body, IFLA_PROP_LIST | NLA_F_NESTED, props);
  return message(RTM_DELLINKPROP, seq, body);
}

namespace {

std::string addressBytes(const IpAddress& a) {
  return std::string(reinterpret_cast<const char*>(a.bytes.data()), a.size());
}

// The address with every bit past `length` set (set: true) or cleared.
IpAddress hostBits(IpAddress a, int length, bool set) {
  for (size_t bit = static_cast<size_t>(length); bit < a.size() * 8; ++bit) {
    auto mask = static_cast<uint8_t>(0x80u >> (bit % 8));
    a.bytes[bit / 8] =
        static_cast<uint8_t>(set ? (a.bytes[bit / 8] | mask) : (a.bytes[bit / 8] & ~mask));
  }
  return a;
}

}  // namespace

std::string addressAddRequest(uint32_t seq, int32_t index, const IpPrefix& address,
                              uint32_t flags) {
  ifaddrmsg a{};
  a.ifa_family = static_cast<uint8_t>(address.address.family);
  a.ifa_prefixlen = static_cast<uint8_t>(address.length);
  a.ifa_flags = static_cast<uint8_t>(flags & 0xffu);
  a.ifa_scope = RT_SCOPE_UNIVERSE;
  a.ifa_index = static_cast<uint32_t>(index);
  std::string body;
  put(body, a);
  attribute(body, IFA_LOCAL, addressBytes(address.address));
  attribute(body, IFA_ADDRESS, addressBytes(address.address));
  if (address.address.isV4() && address.length < 31) {
    attribute(body, IFA_BROADCAST, addressBytes(hostBits(address.address, address.length, true)));
  }
  attribute(body, IFA_FLAGS, raw(flags));
  return message(RTM_NEWADDR, seq, body, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
}

std::string routeAddRequest(uint32_t seq, int32_t index, const IpPrefix& destination,
                            const std::optional<IpAddress>& gateway) {
  rtmsg r{};
  r.rtm_family = static_cast<uint8_t>(destination.address.family);
  r.rtm_dst_len = static_cast<uint8_t>(destination.length);
  r.rtm_table = RT_TABLE_MAIN;
  r.rtm_protocol = RTPROT_BOOT;
  r.rtm_scope = gateway ? RT_SCOPE_UNIVERSE : RT_SCOPE_LINK;
  r.rtm_type = RTN_UNICAST;
  std::string body;
  put(body, r);
  if (destination.length > 0) {
    attribute(body, RTA_DST,
              addressBytes(hostBits(destination.address, destination.length, false)));
  }
  if (gateway) attribute(body, RTA_GATEWAY, addressBytes(*gateway));
  attribute(body, RTA_OIF, raw(static_cast<uint32_t>(index)));
  return message(RTM_NEWROUTE, seq, body, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
}

std::string addressDumpRequest(uint32_t seq, int family) {
  ifaddrmsg a{};
  a.ifa_family = static_cast<uint8_t>(family);
  std::string body;
  put(body, a);
  return message(RTM_GETADDR, seq, body, NLM_F_REQUEST | NLM_F_DUMP);
}

Result<AddressInfo> addressOf(std::string_view payload) {
  if (payload.size() < sizeof(ifaddrmsg)) return malformed("short RTM_NEWADDR");
  auto a = get<ifaddrmsg>(payload, 0);
  AddressInfo out;
  out.index = static_cast<int32_t>(a.ifa_index);
  out.flags = a.ifa_flags;
  out.prefix.length = a.ifa_prefixlen;
  out.prefix.address.family = a.ifa_family;
  size_t size = a.ifa_family == AF_INET ? 4 : a.ifa_family == AF_INET6 ? 16 : 0;
  if (size == 0) return malformed("address family " + std::to_string(a.ifa_family));
  auto attrs = attributes(payload.substr(sizeof(ifaddrmsg)));
  if (!attrs.ok()) return attrs.status();
  bool local = false;
  for (const auto& attr : *attrs) {
    if (attr.type == IFA_FLAGS && attr.value.size() >= sizeof(uint32_t)) {
      out.flags = get<uint32_t>(attr.value, 0);
    }
    // IFA_LOCAL is the interface's address where both are sent (point-to-point links differ).
    if ((attr.type == IFA_LOCAL || (attr.type == IFA_ADDRESS && !local)) &&
        attr.value.size() >= size) {
      std::memcpy(out.prefix.address.bytes.data(), attr.value.data(), size);
      local = local || attr.type == IFA_LOCAL;
    }
  }
  return out;
}

std::string familyRequest(uint32_t seq, std::string_view family) {
  std::string body = genlHeader(CTRL_CMD_GETFAMILY, 1);
  stringAttribute(body, CTRL_ATTR_FAMILY_NAME, family);
  return message(GENL_ID_CTRL, seq, body);
}

std::string eswitchGetRequest(uint16_t devlink_family, uint32_t seq, std::string_view pci_address) {
  return message(devlink_family, seq, devlinkBody(DEVLINK_CMD_ESWITCH_GET, pci_address));
}

Result<std::string> eswitchSetRequest(uint16_t devlink_family, uint32_t seq,
                                      std::string_view pci_address, std::string_view mode) {
  uint16_t value = 0;
  if (mode == "legacy") {
    value = DEVLINK_ESWITCH_MODE_LEGACY;
  } else if (mode == "switchdev") {
    value = DEVLINK_ESWITCH_MODE_SWITCHDEV;
  } else {
    return Status(Code::kInvalidArgument,
                  "eSwitch mode \"" + std::string(mode) + "\" must be legacy or switchdev");
  }
  std::string body = devlinkBody(DEVLINK_CMD_ESWITCH_SET, pci_address);
  attribute(body, DEVLINK_ATTR_ESWITCH_MODE,
            std::string_view(reinterpret_cast<const char*>(&value), sizeof value));
  return message(devlink_family, seq, body);
}

Result<Reply> parseReply(std::string_view buffer, uint32_t seq, std::string_view what) {
  Reply r;
  size_t at = 0;
  while (buffer.size() - at >= kHeader) {
    auto h = get<nlmsghdr>(buffer, at);
    if (h.nlmsg_len < kHeader || h.nlmsg_len > buffer.size() - at) {
      return malformed("message length " + std::to_string(h.nlmsg_len));
    }
    std::string_view payload = buffer.substr(at + kHeader, h.nlmsg_len - kHeader);
    at = std::min(buffer.size(), at + align4(h.nlmsg_len));  // the last padding may be cut off
    if (h.nlmsg_seq != seq || h.nlmsg_type == NLMSG_NOOP) continue;
    if ((h.nlmsg_flags & NLM_F_DUMP_INTR) != 0) r.interrupted = true;
    if (h.nlmsg_type == NLMSG_DONE) {
      r.acked = true;
      continue;
    }
    if (h.nlmsg_type != NLMSG_ERROR) {
      r.payloads.emplace_back(payload);
      continue;
    }
    if (payload.size() < sizeof(int)) return malformed("short error message");
    int error = get<int>(payload, 0);
    if (error == 0) {
      r.acked = true;
      continue;
    }
    // The kernel sends -errno; anything else (positive, or past the errno range) is not an error
    // it could have meant.
    if (error > 0 || error < -4095) return malformed("error code " + std::to_string(error));
    // With NETLINK_CAP_ACK the request is not echoed; extended-ack TLVs follow the header.
    std::string detail;
    if ((h.nlmsg_flags & NLM_F_ACK_TLVS) != 0) {
      size_t tlvs = sizeof(int) + kHeader;
      if ((h.nlmsg_flags & NLM_F_CAPPED) == 0 && payload.size() >= tlvs) {
        tlvs = sizeof(int) + align4(get<nlmsghdr>(payload, sizeof(int)).nlmsg_len);
      }
      if (tlvs <= payload.size()) {
        auto attrs = attributes(payload.substr(tlvs));
        if (attrs.ok()) {
          for (const auto& a : *attrs) {
            if (a.type == NLMSGERR_ATTR_MSG) detail = cString(a.value);
          }
        }
      }
    }
    std::string message(what);
    if (!detail.empty()) message += " (" + detail + ")";
    return Status::fromErrno(-error, message);
  }
  return r;
}

Result<LinkInfo> linkOf(std::string_view payload) {
  if (payload.size() < sizeof(ifinfomsg)) return malformed("short RTM_NEWLINK");
  auto info = get<ifinfomsg>(payload, 0);
  LinkInfo link;
  link.index = info.ifi_index;
  link.type = info.ifi_type;
  link.flags = info.ifi_flags;
  auto attrs = attributes(payload.substr(sizeof(ifinfomsg)));
  if (!attrs.ok()) return attrs.status();
  for (const auto& a : *attrs) {
    switch (a.type) {
      case IFLA_IFNAME:
        link.name = cString(a.value);
        break;
      case IFLA_ADDRESS:
        link.mac = macText(a.value);
        break;
      case IFLA_MTU:
        if (a.value.size() < sizeof(uint32_t)) return malformed("short IFLA_MTU");
        link.mtu = get<uint32_t>(a.value, 0);
        break;
      case IFLA_PARENT_DEV_NAME:
        link.parent_device = cString(a.value);
        break;
      case IFLA_PARENT_DEV_BUS_NAME:
        link.parent_bus = cString(a.value);
        break;
      case IFLA_PROP_LIST: {
        auto props = attributes(a.value);
        if (!props.ok()) return props.status();
        for (const auto& p : *props) {
          if (p.type == IFLA_ALT_IFNAME) link.alt_names.push_back(cString(p.value));
        }
        break;
      }
      default:
        break;
    }
  }
  return link;
}

Result<uint16_t> familyIdOf(std::string_view payload) {
  if (payload.size() < GENL_HDRLEN) return malformed("short generic netlink message");
  auto attrs = attributes(payload.substr(GENL_HDRLEN));
  if (!attrs.ok()) return attrs.status();
  for (const auto& a : *attrs) {
    if (a.type == CTRL_ATTR_FAMILY_ID && a.value.size() >= sizeof(uint16_t)) {
      return get<uint16_t>(a.value, 0);
    }
  }
  return malformed("no CTRL_ATTR_FAMILY_ID");
}

Result<std::string> eswitchModeOf(std::string_view payload) {
  if (payload.size() < GENL_HDRLEN) return malformed("short generic netlink message");
  auto attrs = attributes(payload.substr(GENL_HDRLEN));
  if (!attrs.ok()) return attrs.status();
  for (const auto& a : *attrs) {
    if (a.type != DEVLINK_ATTR_ESWITCH_MODE || a.value.size() < sizeof(uint16_t)) continue;
    switch (get<uint16_t>(a.value, 0)) {
      case DEVLINK_ESWITCH_MODE_LEGACY:
        return std::string("legacy");
      case DEVLINK_ESWITCH_MODE_SWITCHDEV:
        return std::string("switchdev");
      default:
        return malformed("eSwitch mode " + std::to_string(get<uint16_t>(a.value, 0)));
    }
  }
  return malformed("no DEVLINK_ATTR_ESWITCH_MODE");
}

}  // namespace sriovdra::host::netlink
