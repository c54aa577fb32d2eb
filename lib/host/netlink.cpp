#include "host/netlink.h"

#include <cerrno>

#include <linux/netlink.h>

#include "host/netlink_socket.h"
#include "host/netlink_wire.h"

namespace sriovdra::host {
namespace {

Result<uint16_t> devlinkFamily(std::chrono::milliseconds timeout) {
  uint32_t seq = netlink::nextSeq();
  auto reply = netlink::transact(NETLINK_GENERIC, netlink::familyRequest(seq, "devlink"), seq,
                                 "resolving the devlink netlink family", timeout);
  if (!reply.ok()) {
    if (reply.status().sysErrno() == ENOENT) {
      return Status(Code::kNotFound,
                    "this kernel has no devlink (the generic netlink family \"devlink\" is not "
                    "registered): eSwitch modes cannot be read or changed")
          .withErrno(ENOENT);
    }
    return reply.status();
  }
  if (reply->payloads.empty()) {
    return Status(Code::kInvalidArgument, "the kernel answered the devlink lookup without data");
  }
  return netlink::familyIdOf(reply->payloads.front());
}

// devlink answers ENODEV for a handle it has no instance for: no such device, or (seen with igb
// on a real kernel) a driver that registers no devlink instance and so has no eSwitch.
Status noDevlinkInstance(const Status& st, std::string_view pci_address) {
  if (st.sysErrno() != ENODEV) return st;
  return Status(st.code(), st.message() + " (no devlink instance pci/" + std::string(pci_address) +
                               ": no such device, or its driver has no devlink and so no eSwitch; "
                               "leave eSwitchMode unset (legacy) for this NIC)")
      .withErrno(ENODEV);
}

}  // namespace

Result<std::vector<LinkInfo>> KernelNetlink::links() const {
  // A dump that interfaces changed under (NLM_F_DUMP_INTR) may miss or repeat one: ask again.
  constexpr int kAttempts = 3;
  Result<netlink::Reply> reply = Status(Code::kInternal, "no attempt");
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    uint32_t seq = netlink::nextSeq();
    reply = netlink::transact(NETLINK_ROUTE, netlink::linkDumpRequest(seq), seq,
                              "listing the network interfaces", timeout_);
    if (!reply.ok() || !reply->interrupted) break;
  }
  if (!reply.ok()) return reply.status();
  if (reply->interrupted) {
    return Status(Code::kUnavailable, "listing the network interfaces: they kept changing during " +
                                          std::to_string(kAttempts) + " dumps");
  }
  std::vector<LinkInfo> out;
  out.reserve(reply->payloads.size());
  for (const auto& payload : reply->payloads) {
    auto link = netlink::linkOf(payload);
    if (!link.ok()) return link.status();
    out.push_back(std::move(*link));
  }
  return out;
}

Result<std::string> KernelNetlink::eswitchMode(std::string_view pci_address) const {
  auto family = devlinkFamily(timeout_);
  if (!family.ok()) return family.status();
  uint32_t seq = netlink::nextSeq();
  std::string what = "reading the eSwitch mode of pci/" + std::string(pci_address);
  auto reply = netlink::transact(
      NETLINK_GENERIC, netlink::eswitchGetRequest(*family, seq, pci_address), seq, what, timeout_);
  if (!reply.ok()) return noDevlinkInstance(reply.status(), pci_address);
  if (reply->payloads.empty()) {
    return Status(Code::kInvalidArgument, what + ": the kernel sent no eSwitch");
  }
  return netlink::eswitchModeOf(reply->payloads.front());
}

Status KernelNetlink::setEswitchMode(std::string_view pci_address, std::string_view mode) {
  auto family = devlinkFamily(timeout_);
  if (!family.ok()) return family.status();
  uint32_t seq = netlink::nextSeq();
  auto request = netlink::eswitchSetRequest(*family, seq, pci_address, mode);
  if (!request.ok()) return request.status();
  auto reply = netlink::transact(
      NETLINK_GENERIC, *request, seq,
      "setting the eSwitch mode of pci/" + std::string(pci_address) + " to " + std::string(mode),
      timeout_);
  return reply.ok() ? Status::ok() : noDevlinkInstance(reply.status(), pci_address);
}

Result<std::vector<VfGuids>> Netlink::vfGuids(std::string_view pf) const {
  auto all = vfs(pf);
  if (!all.ok()) return all.status();
  std::vector<VfGuids> out;
  for (const auto& vf : *all) {
    if (vf.has_guids) out.push_back({vf.vf, vf.node_guid, vf.port_guid});
  }
  return out;
}

Status KernelNetlink::setVfGuids(std::string_view pf, int32_t vf, uint64_t node_guid,
                                 uint64_t port_guid) {
  SDRA_RETURN_IF_ERROR(netlink::checkIfName(pf));
  uint32_t seq = netlink::nextSeq();
  auto reply = netlink::transact(NETLINK_ROUTE,
                                 netlink::vfGuidRequest(seq, pf, vf, node_guid, port_guid), seq,
                                 "setting the GUIDs of VF " + std::to_string(vf) + " of " +
                                     std::string(pf) + " to " + guidText(port_guid),
                                 timeout_);
  return reply.ok() ? Status::ok() : reply.status();
}

namespace {

// The PF netdev's RTM_GETLINK built by `request` (with `seq`), decoded by `decode`; none for an
// answer without data.
template <typename T, typename Request, typename Decode>
Result<std::vector<T>> readVfs(std::string_view pf, Request request, Decode decode,
                               const std::string& what, std::chrono::milliseconds timeout) {
  SDRA_RETURN_IF_ERROR(netlink::checkIfName(pf));
  uint32_t seq = netlink::nextSeq();
  auto reply = netlink::transact(NETLINK_ROUTE, request(seq, pf), seq, what + std::string(pf),
                                 timeout, size_t{1} << 20);
  if (!reply.ok()) return reply.status();
  if (reply->payloads.empty()) return std::vector<T>{};
  return decode(reply->payloads.front());
}

}  // namespace

Result<std::vector<VfInfo>> KernelNetlink::vfs(std::string_view pf) const {
  return readVfs<VfInfo>(pf, netlink::vfInfoRequest, netlink::vfInfosOf, "reading the VFs of ",
                         timeout_);
}

Result<std::vector<VfStats>> KernelNetlink::vfStats(std::string_view pf) const {
  return readVfs<VfStats>(pf, netlink::vfStatsRequest, netlink::vfStatsOf,
                          "reading the VF counters of ", timeout_);
}

Status KernelNetlink::setVf(std::string_view pf, const VfSetting& setting) {
  SDRA_RETURN_IF_ERROR(netlink::checkIfName(pf));
  uint32_t seq = netlink::nextSeq();
  auto request = netlink::vfSetRequest(seq, pf, setting);
  if (!request.ok()) return request.status();
  auto reply = netlink::transact(NETLINK_ROUTE, *request, seq,
                                 "setting " + std::string(pf) + " " + setting.text(), timeout_);
  return reply.ok() ? Status::ok() : reply.status();
}

Status KernelNetlink::setUp(std::string_view netdev, bool up) {
  SDRA_RETURN_IF_ERROR(netlink::checkIfName(netdev));
  uint32_t seq = netlink::nextSeq();
  auto request = netlink::linkUpRequest(seq, netdev, up);
  auto reply = netlink::transact(
      NETLINK_ROUTE, request, seq,
      std::string(up ? "bringing up " : "bringing down ") + std::string(netdev), timeout_);
  return reply.ok() ? Status::ok() : reply.status();
}

std::string VfSetting::text() const {
  std::string out = "vf " + std::to_string(vf);
  switch (kind) {
    case Kind::kMac:
      return out + " mac " + mac;
    case Kind::kVlan:
      return out + " vlan " + std::to_string(vlan) + " qos " + std::to_string(qos) + " proto " +
             vlanProtoText(vlan_proto);
    case Kind::kRate:
      return out + " min_tx_rate " + std::to_string(min_tx_rate) + " max_tx_rate " +
             std::to_string(max_tx_rate);
    case Kind::kSpoofchk:
      return out + " spoofchk " + (on ? "on" : "off");
    case Kind::kTrust:
      return out + " trust " + (on ? "on" : "off");
    case Kind::kLinkState:
      return out + " state " +
             (link_state == 0   ? "auto"
              : link_state == 1 ? "enable"
              : link_state == 2 ? "disable"
                                : std::to_string(link_state));
  }
  return out;
}

std::string vlanProtoText(uint16_t proto) {
  if (proto == kVlanProto8021Q) return "802.1Q";
  if (proto == kVlanProto8021AD) return "802.1ad";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(proto >> shift) & 0xf];
  return out;
}

std::string macText(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto byte = static_cast<unsigned char>(bytes[i]);
    if (i != 0) out += ':';
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

namespace {

int hexDigit(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

}  // namespace

Result<std::string> parseMac(std::string_view text) {
  auto bad = [&] {
    return Status(Code::kInvalidArgument, "address " + std::string(text) + ": invalid MAC address");
  };
  std::string out;
  if (text.size() == 17 && (text[2] == ':' || text[2] == '-')) {
    for (size_t i = 0; i < 6; ++i) {
      if (i > 0 && text[i * 3 - 1] != text[2]) return bad();
      int hi = hexDigit(text[i * 3]), lo = hexDigit(text[i * 3 + 1]);
      if (hi < 0 || lo < 0) return bad();
      out.push_back(static_cast<char>(hi * 16 + lo));
    }
    return out;
  }
  if (text.size() == 14 && text[4] == '.' && text[9] == '.') {
    for (size_t group = 0; group < 3; ++group) {
      for (size_t j = 0; j < 4; j += 2) {
        int hi = hexDigit(text[group * 5 + j]), lo = hexDigit(text[group * 5 + j + 1]);
        if (hi < 0 || lo < 0) return bad();
        out.push_back(static_cast<char>(hi * 16 + lo));
      }
    }
    return out;
  }
  return bad();
}

std::string guidText(uint64_t guid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int shift = 56; shift >= 0; shift -= 8) {
    auto byte = static_cast<unsigned>((guid >> shift) & 0xffu);
    if (!out.empty()) out += ':';
    out += kHex[byte >> 4];
    out += kHex[byte & 0xfu];
  }
  return out;
}

Result<uint64_t> parseGuid(std::string_view text) {
  auto bad = [&] {
    return Status(Code::kInvalidArgument,
                  "GUID \"" + std::string(text) +
                      "\" is not eight hex bytes separated by colons (02:00:00:00:00:00:00:01)");
  };
  if (text.size() != 23) return bad();
  uint64_t out = 0;
  for (size_t i = 0; i < 8; ++i) {
    if (i > 0 && text[i * 3 - 1] != ':') return bad();
    uint64_t byte = 0;
    for (char c : text.substr(i * 3, 2)) {
      int v = hexDigit(c);
      if (v < 0) return bad();
      byte = byte * 16 + static_cast<uint64_t>(v);
    }
    out = (out << 8) | byte;
  }
  return out;
}

}  // namespace sriovdra::host
