// The VF messages of netlink_wire.h: requests that read and set a PF's VFs and the decoders of
// its answers (IFLA_VFINFO_LIST), apart from the links', addresses' and devlink's.
#include <algorithm>
#include <cstring>
#include <optional>

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "host/netlink_encoding.h"
#include "host/netlink_wire.h"

namespace sriovdra::host::netlink {
namespace {

using namespace encoding;

// RTM_SETLINK of the netdev `name` with IFLA_VFINFO_LIST > IFLA_VF_INFO > `vf_info`.
std::string setVfInfo(uint32_t seq, std::string_view name, const std::string& vf_info) {
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

// RTM_GETLINK of the netdev `name` with IFLA_EXT_MASK `mask`.
std::string vfRequest(uint32_t seq, std::string_view name, uint32_t mask) {
  ifinfomsg info{};
  info.ifi_family = AF_UNSPEC;
  std::string body;
  put(body, info);
  stringAttribute(body, IFLA_IFNAME, name);
  attribute(body, IFLA_EXT_MASK,
            std::string_view(reinterpret_cast<const char*>(&mask), sizeof mask));
  return message(RTM_GETLINK, seq, body);
}

// Calls `each` with the attributes of every IFLA_VF_INFO of an RTM_NEWLINK payload, in order.
template <typename Each>
Status eachVfInfo(std::string_view payload, Each&& each) {
  if (payload.size() < sizeof(ifinfomsg)) return malformed("short RTM_NEWLINK");
  auto attrs = attributes(payload.substr(sizeof(ifinfomsg)));
  if (!attrs.ok()) return attrs.status();
  for (const auto& a : *attrs) {
    if (a.type != IFLA_VFINFO_LIST) continue;
    auto vfs = attributes(a.value);
    if (!vfs.ok()) return vfs.status();
    for (const auto& info : *vfs) {
      if (info.type != IFLA_VF_INFO) continue;
      auto fields = attributes(info.value);
      if (!fields.ok()) return fields.status();
      SDRA_RETURN_IF_ERROR(each(*fields));
    }
  }
  return Status::ok();
}

// The counter of `stats` an IFLA_VF_STATS_* attribute holds; null for others (the padding).
uint64_t* counterOf(VfStats& stats, uint16_t type) {
  switch (type) {
    case IFLA_VF_STATS_RX_PACKETS:
      return &stats.rx_packets;
    case IFLA_VF_STATS_TX_PACKETS:
      return &stats.tx_packets;
    case IFLA_VF_STATS_RX_BYTES:
      return &stats.rx_bytes;
    case IFLA_VF_STATS_TX_BYTES:
      return &stats.tx_bytes;
    case IFLA_VF_STATS_BROADCAST:
      return &stats.broadcast;
    case IFLA_VF_STATS_MULTICAST:
      return &stats.multicast;
    case IFLA_VF_STATS_RX_DROPPED:
      return &stats.rx_dropped;
    case IFLA_VF_STATS_TX_DROPPED:
      return &stats.tx_dropped;
    default:
      return nullptr;
  }
}

// IFLA_NUM_VF of an RTM_NEWLINK payload, read attribute by attribute up to it (the kernel puts
// it before IFLA_VFINFO_LIST, which may be broken); nullopt when it is not there.
std::optional<uint32_t> numVfsOf(std::string_view payload) {
  if (payload.size() < sizeof(ifinfomsg)) return std::nullopt;
  std::string_view in = payload.substr(sizeof(ifinfomsg));
  size_t at = 0;
  while (in.size() - at >= kAttrHeader) {
    auto a = get<nlattr>(in, at);
    if (a.nla_len < kAttrHeader || a.nla_len > in.size() - at) return std::nullopt;
    if ((a.nla_type & NLA_TYPE_MASK) == IFLA_NUM_VF && a.nla_len >= kAttrHeader + 4) {
      return get<uint32_t>(in, at + kAttrHeader);
    }
    at += align4(a.nla_len);
  }
  return std::nullopt;
}

}  // namespace

std::string vfInfoRequest(uint32_t seq, std::string_view name) {
  return vfRequest(seq, name, RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS);
}

std::string vfStatsRequest(uint32_t seq, std::string_view name) {
  return vfRequest(seq, name, RTEXT_FILTER_VF);
}

std::string vfGuidRequest(uint32_t seq, std::string_view name, int32_t vf, uint64_t node_guid,
                          uint64_t port_guid) {
  auto guid = [&](uint64_t value) {
    ifla_vf_guid g{};
    g.vf = static_cast<uint32_t>(vf);
    g.guid = value;
    return raw(g);
  };
  std::string vf_info;
  attribute(vf_info, IFLA_VF_IB_NODE_GUID, guid(node_guid));
  attribute(vf_info, IFLA_VF_IB_PORT_GUID, guid(port_guid));
  return setVfInfo(seq, name, vf_info);
}

Result<std::string> vfSetRequest(uint32_t seq, std::string_view name, const VfSetting& s) {
  const auto vf = static_cast<uint32_t>(s.vf);
  std::string vf_info;
  switch (s.kind) {
    case VfSetting::Kind::kMac: {
      auto mac = parseMac(s.mac);
      if (!mac.ok()) return mac.status();
      ifla_vf_mac m{};
      m.vf = vf;
      std::memcpy(m.mac, mac->data(), std::min(mac->size(), sizeof m.mac));
      attribute(vf_info, IFLA_VF_MAC, raw(m));
      break;
    }
    case VfSetting::Kind::kVlan: {
      ifla_vf_vlan_info v{};
      v.vf = vf;
      v.vlan = static_cast<uint32_t>(s.vlan);
      v.qos = static_cast<uint32_t>(s.qos);
      v.vlan_proto = htons(s.vlan_proto);
      std::string list;
      attribute(list, IFLA_VF_VLAN_INFO, raw(v));
      attribute(vf_info, IFLA_VF_VLAN_LIST | NLA_F_NESTED, list);
      break;
    }
    case VfSetting::Kind::kRate: {
      ifla_vf_rate r{vf, s.min_tx_rate, s.max_tx_rate};
      attribute(vf_info, IFLA_VF_RATE, raw(r));
      break;
    }
    case VfSetting::Kind::kSpoofchk: {
      ifla_vf_spoofchk c{vf, s.on ? 1u : 0u};
      attribute(vf_info, IFLA_VF_SPOOFCHK, raw(c));
      break;
    }
    case VfSetting::Kind::kTrust: {
      ifla_vf_trust t{vf, s.on ? 1u : 0u};
      attribute(vf_info, IFLA_VF_TRUST, raw(t));
      break;
    }
    case VfSetting::Kind::kLinkState: {
      ifla_vf_link_state l{vf, s.link_state};
      attribute(vf_info, IFLA_VF_LINK_STATE, raw(l));
      break;
    }
  }
  return setVfInfo(seq, name, vf_info);
}

// Long on purpose: one decode of IFLA_VFINFO_LIST, attribute by attribute as the kernel nests
// them (include/uapi/linux/if_link.h), so it reads beside the kernel's encoder.
// NOLINTNEXTLINE(readability-function-size)
Result<std::vector<VfInfo>> vfInfosOf(std::string_view payload) {
  if (payload.size() < sizeof(ifinfomsg)) return malformed("short RTM_NEWLINK");
  auto attrs = attributes(payload.substr(sizeof(ifinfomsg)));
  if (!attrs.ok()) return attrs.status();
  size_t mac_length = 6;
  for (const auto& a : *attrs) {
    if (a.type == IFLA_ADDRESS && !a.value.empty())
      mac_length = std::min<size_t>(a.value.size(), 32);
  }
  std::vector<VfInfo> out;
  SDRA_RETURN_IF_ERROR(eachVfInfo(payload, [&](const std::vector<Attribute>& fields) -> Status {
    VfInfo vf;
    // Each field carries the VF's index first (u32); a later VLAN list wins over IFLA_VF_VLAN.
    auto need = [](std::string_view v, size_t n, const char* what) {
      return v.size() < n ? malformed(std::string("short ") + what) : Status::ok();
    };
    for (const auto& f : fields) {
      switch (f.type) {
        case IFLA_VF_MAC: {
          SDRA_RETURN_IF_ERROR(need(f.value, sizeof(ifla_vf_mac), "IFLA_VF_MAC"));
          auto m = get<ifla_vf_mac>(f.value, 0);
          vf.vf = static_cast<int32_t>(m.vf);
          vf.mac = macText(std::string_view(reinterpret_cast<const char*>(m.mac), mac_length));
          break;
        }
        case IFLA_VF_VLAN: {
          SDRA_RETURN_IF_ERROR(need(f.value, sizeof(ifla_vf_vlan), "IFLA_VF_VLAN"));
          auto v = get<ifla_vf_vlan>(f.value, 0);
          vf.vlan = static_cast<int32_t>(v.vlan);
          vf.qos = static_cast<int32_t>(v.qos);
          break;
        }
        case IFLA_VF_VLAN_LIST: {
          auto list = attributes(f.value);
          if (!list.ok()) return list.status();
          for (const auto& item : *list) {
            if (item.type != IFLA_VF_VLAN_INFO) continue;
            SDRA_RETURN_IF_ERROR(need(item.value, sizeof(ifla_vf_vlan_info), "IFLA_VF_VLAN_INFO"));
            auto v = get<ifla_vf_vlan_info>(item.value, 0);
            vf.vlan = static_cast<int32_t>(v.vlan);
            vf.qos = static_cast<int32_t>(v.qos);
            vf.vlan_proto = ntohs(v.vlan_proto);
            break;  // the first entry: the VF's VLAN (the kernel lists one)
          }
          break;
        }
        case IFLA_VF_RATE: {
          SDRA_RETURN_IF_ERROR(need(f.value, sizeof(ifla_vf_rate), "IFLA_VF_RATE"));
          auto r = get<ifla_vf_rate>(f.value, 0);
          vf.min_tx_rate = r.min_tx_rate;
          vf.max_tx_rate = r.max_tx_rate;
          break;
        }
        case IFLA_VF_SPOOFCHK: {
          SDRA_RETURN_IF_ERROR(need(f.value, sizeof(ifla_vf_spoofchk), "IFLA_VF_SPOOFCHK"));
          vf.spoofchk = get<ifla_vf_spoofchk>(f.value, 0).setting != 0;
          break;
        }
        case IFLA_VF_TRUST: {
          SDRA_RETURN_IF_ERROR(need(f.value, sizeof(ifla_vf_trust), "IFLA_VF_TRUST"));
          vf.trust = get<ifla_vf_trust>(f.value, 0).setting != 0;
          break;
        }
        case IFLA_VF_LINK_STATE: {
          SDRA_RETURN_IF_ERROR(need(f.value, sizeof(ifla_vf_link_state), "IFLA_VF_LINK_STATE"));
          vf.link_state = get<ifla_vf_link_state>(f.value, 0).link_state;
          break;
        }
        case IFLA_VF_IB_NODE_GUID:
        case IFLA_VF_IB_PORT_GUID: {
          SDRA_RETURN_IF_ERROR(need(f.value, sizeof(ifla_vf_guid), "VF GUID"));
          auto g = get<ifla_vf_guid>(f.value, 0);
          vf.vf = static_cast<int32_t>(g.vf);
          (f.type == IFLA_VF_IB_NODE_GUID ? vf.node_guid : vf.port_guid) = g.guid;
          vf.has_guids = true;
          break;
        }
        default:
          break;
      }
    }
    out.push_back(std::move(vf));
    return Status::ok();
  }));
  return out;
}

Result<std::vector<VfStats>> vfStatsOf(std::string_view payload) {
  std::vector<VfStats> out;
  Status decoded = eachVfInfo(payload, [&](const std::vector<Attribute>& fields) -> Status {
    VfStats vf;
    bool indexed = false;
    for (const auto& f : fields) {
      if (f.type == IFLA_VF_MAC && f.value.size() >= sizeof(ifla_vf_mac)) {
        vf.vf = static_cast<int32_t>(get<ifla_vf_mac>(f.value, 0).vf);
        indexed = true;
      }
      if (f.type != IFLA_VF_STATS) continue;
      auto counters = attributes(f.value);
      if (!counters.ok()) return counters.status();
      for (const auto& c : *counters) {
        uint64_t* counter = counterOf(vf, c.type);
        if (counter == nullptr) continue;
        if (c.value.size() < sizeof(uint64_t)) return malformed("short IFLA_VF_STATS counter");
        *counter = get<uint64_t>(c.value, 0);
      }
    }
    if (!indexed) return malformed("IFLA_VF_INFO without IFLA_VF_MAC");
    out.push_back(vf);
    return Status::ok();
  });
  // IFLA_VFINFO_LIST's length is 16 bits: with counters (about 300 bytes a VF) a PF with some
  // 200 VFs or more overflows it, and the list reads short or broken.
  auto listed = numVfsOf(payload);
  if (listed && *listed > out.size()) {
    return Status(Code::kTooLarge,
                  std::to_string(*listed) +
                      " VFs with their counters exceed the 64 KiB netlink attribute Linux sends "
                      "them in (IFLA_VFINFO_LIST), so the kernel cannot report them this way");
  }
  SDRA_RETURN_IF_ERROR(decoded);
  return out;
}

}  // namespace sriovdra::host::netlink
