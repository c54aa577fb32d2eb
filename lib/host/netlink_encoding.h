#pragma once
// The netlink encoding every family of ours shares (internal to lib/host: netlink_wire.cpp for
// rtnetlink and devlink, rdma_wire.cpp for RDMA; and the kernel test's own RDMA requests): a
// 16-byte nlmsghdr, the family's header where it has one (RDMA has none), then attributes (2-byte
// length, 2-byte type, value, padded to 4 bytes), as <linux/netlink.h> lays them out. Pure: no
// sockets, no globals. The readers never read past the buffer they are given.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <linux/netlink.h>

#include "base/status.h"

namespace sriovdra::host::netlink::encoding {

inline constexpr size_t kHeader = sizeof(nlmsghdr);    // 16
inline constexpr size_t kAttrHeader = sizeof(nlattr);  // 4

inline size_t align4(size_t n) { return (n + 3) & ~size_t{3}; }

template <typename T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

// `at + sizeof(T)` must be within `in` (the callers check lengths first).
template <typename T>
T get(std::string_view in, size_t at) {
  T value{};
  std::memcpy(&value, in.data() + at, sizeof value);
  return value;
}

// The bytes of `value` as they lie in memory (host byte order, as netlink's fixed-size values).
template <typename T>
std::string raw(const T& value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof value);
}

inline void attribute(std::string& out, uint16_t type, std::string_view value) {
  nlattr a{static_cast<uint16_t>(kAttrHeader + value.size()), type};
  put(out, a);
  out.append(value);
  out.append(align4(value.size()) - value.size(), '\0');
}

// A NUL-terminated string attribute, as the kernel's NLA_NUL_STRING/NLA_STRING policies take it.
inline void stringAttribute(std::string& out, uint16_t type, std::string_view value) {
  std::string with_nul(value);
  with_nul.push_back('\0');
  attribute(out, type, with_nul);
}

// Prepends the nlmsghdr for `body` (family header and attributes).
inline std::string message(uint16_t type, uint32_t seq, const std::string& body,
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

inline Status malformed(std::string_view what) {
  return Status(Code::kInvalidArgument, "malformed netlink answer: " + std::string(what));
}

// The attributes in `in` in their order, the type without the nested/byte-order flags.
// kInvalidArgument when a length runs past the buffer.
struct Attribute {
  uint16_t type;
  std::string_view value;
};
inline Result<std::vector<Attribute>> attributes(std::string_view in) {
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

// A string attribute's text up to its NUL (all of it without one).
inline std::string cString(std::string_view v) { return std::string(v.substr(0, v.find('\0'))); }

}  // namespace sriovdra::host::netlink::encoding
