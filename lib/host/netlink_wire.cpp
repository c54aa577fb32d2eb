#include "host/netlink_wire.h"

#include <algorithm>
#include <cstring>

#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

namespace sriovdra::host::netlink {
namespace {

constexpr size_t kHeader = sizeof(nlmsghdr);    // 16
constexpr size_t kAttrHeader = sizeof(nlattr);  // 4

size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

template <typename T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T>
T get(std::string_view in, size_t at) {
  T value{};
  std::memcpy(&value, in.data() + at, sizeof value);
  return value;
}

void attribute(std::string& out, uint16_t type, std::string_view value) {
  nlattr a{static_cast<uint16_t>(kAttrHeader + value.size()), type};
  put(out, a);
  out.append(value);
  out.append(align4(value.size()) - value.size(), '\0');
}

// A NUL-terminated string attribute, as the kernel's NLA_NUL_STRING/NLA_STRING policies take it.
void stringAttribute(std::string& out, uint16_t type, std::string_view value) {
  std::string with_nul(value);
  with_nul.push_back('\0');
  attribute(out, type, with_nul);
}

// Prepends the nlmsghdr for `body` (family header and attributes).
std::string message(uint16_t type, uint32_t seq, const std::string& body,
                    uint16_t flags = NLM_F_REQUEST | NLM_F_ACK) {
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(kHeader + body.size());
  h.nlmsg_type = type;
  h.nlmsg_flags = flags;
  h.nlmsg_seq = seq;
  std::string out;
  put(out, h);
  out += body;
  return out;
}

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

Status malformed(std::string_view what) {
  return Status(Code::kInvalidArgument, "malformed netlink answer: " + std::string(what));
}

// The attributes in `in`, type (without the nested/byte-order flags) -> value; a later
// duplicate wins. kInvalidArgument when a length runs past the buffer.
struct Attribute {
  uint16_t type;
  std::string_view value;
};
Result<std::vector<Attribute>> attributes(std::string_view in) {
  std::vector<Attribute> out;
  size_t at = 0;
  while (in.size() - at >= kAttrHeader) {
    auto a = get<nlattr>(in, at);
    if (a.nla_len < kAttrHeader || a.nla_len > in.size() - at) {
      return malformed("attribute length " + std::to_string(a.nla_len));
    }
    out.push_back({static_cast<uint16_t>(a.nla_type & NLA_TYPE_MASK),
                   in.substr(at + kAttrHeader, a.nla_len - kAttrHeader)});
    at = std::min(in.size(), at + align4(a.nla_len));  // the last padding may be cut off
  }
  return out;
}

std::string cString(std::string_view v) { return std::string(v.substr(0, v.find('\0'))); }

}  // namespace

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

std::string vfInfoRequest(uint32_t seq, std::string_view name) {
  ifinfomsg info{};
  info.ifi_family = AF_UNSPEC;
  std::string body;
  put(body, info);
  stringAttribute(body, IFLA_IFNAME, name);
  uint32_t mask = RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS;
  attribute(body, IFLA_EXT_MASK,
            std::string_view(reinterpret_cast<const char*>(&mask), sizeof mask));
  return message(RTM_GETLINK, seq, body);
}

std::string vfGuidRequest(uint32_t seq, std::string_view name, int32_t vf, uint64_t node_guid,
                          uint64_t port_guid) {
  auto guid = [&](uint64_t value) {
    ifla_vf_guid g{};
    g.vf = static_cast<uint32_t>(vf);
    g.guid = value;
    return std::string(reinterpret_cast<const char*>(&g), sizeof g);
  };
  std::string vf_info;
  attribute(vf_info, IFLA_VF_IB_NODE_GUID, guid(node_guid));
  attribute(vf_info, IFLA_VF_IB_PORT_GUID, guid(port_guid));
  std::string list;
  attribute(list, IFLA_VF_INFO | NLA_F_NESTED, vf_info);
  ifinfomsg info{};
  info.ifi_family = AF_UNSPEC;
  std::string body;
  put(body, info);
  stringAttribute(body, IFLA_IFNAME, name);
  attribute(body, IFLA_VFINFO_LIST | NLA_F_NESTED, list);
  return message(RTM_SETLINK, seq, body);
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
        for (size_t i = 0; i < a.value.size(); ++i) {
          static constexpr char kHex[] = "0123456789abcdef";
          auto byte = static_cast<unsigned char>(a.value[i]);
          if (i != 0) link.mac += ':';
          link.mac += kHex[byte >> 4];
          link.mac += kHex[byte & 0xf];
        }
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

Result<std::vector<VfGuids>> vfGuidsOf(std::string_view payload) {
  if (payload.size() < sizeof(ifinfomsg)) return malformed("short RTM_NEWLINK");
  auto attrs = attributes(payload.substr(sizeof(ifinfomsg)));
  if (!attrs.ok()) return attrs.status();
  std::vector<VfGuids> out;
  for (const auto& a : *attrs) {
    if (a.type != IFLA_VFINFO_LIST) continue;
    auto vfs = attributes(a.value);
    if (!vfs.ok()) return vfs.status();
    for (const auto& info : *vfs) {
      if (info.type != IFLA_VF_INFO) continue;
      auto fields = attributes(info.value);
      if (!fields.ok()) return fields.status();
      VfGuids vf;
      bool found = false;
      for (const auto& f : *fields) {
        if (f.type != IFLA_VF_IB_NODE_GUID && f.type != IFLA_VF_IB_PORT_GUID) continue;
        if (f.value.size() < sizeof(ifla_vf_guid)) return malformed("short VF GUID");
        auto g = get<ifla_vf_guid>(f.value, 0);
        vf.vf = static_cast<int32_t>(g.vf);
        (f.type == IFLA_VF_IB_NODE_GUID ? vf.node_guid : vf.port_guid) = g.guid;
        found = true;
      }
      if (found) out.push_back(vf);
    }
  }
  return out;
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
