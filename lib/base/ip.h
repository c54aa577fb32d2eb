#pragma once
// IP addresses and prefixes as CNI results and netlink carry them, pure: text in the forms
// inet_pton(3) reads ("10.56.217.10", "fd00::10"), a prefix as CIDR ("10.56.217.10/24"), bytes in
// network order as rtnetlink's IFA_ADDRESS and RTA_DST take them.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sriovdra {

struct IpAddress {
  int family = 0;                   // AF_INET or AF_INET6
  std::array<uint8_t, 16> bytes{};  // the first 4 for AF_INET
  size_t size() const { return isV4() ? 4 : 16; }
  bool isV4() const;
  std::string text() const;
  bool operator==(const IpAddress&) const = default;
};

struct IpPrefix {
  IpAddress address;  // as written (host bits kept: "10.56.217.10/24" is an interface address)
  int length = 0;     // 0..32 or 0..128
  std::string text() const;
  bool operator==(const IpPrefix&) const = default;
};

// kInvalidArgument naming the text when it is not an IPv4 or IPv6 address.
Result<IpAddress> parseIp(std::string_view text);
// kInvalidArgument unless "<address>/<length>" with a length the family allows.
Result<IpPrefix> parseCidr(std::string_view text);

}  // namespace sriovdra
