#include "base/ip.h"

#include <arpa/inet.h>
#include <sys/socket.h>

namespace sriovdra {

bool IpAddress::isV4() const { return family == AF_INET; }

std::string IpAddress::text() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (::inet_ntop(family, bytes.data(), buf, sizeof buf) == nullptr) return "";
  return buf;
}

std::string IpPrefix::text() const { return address.text() + "/" + std::to_string(length); }

Result<IpAddress> parseIp(std::string_view text) {
  IpAddress out;
  std::string s(text);
  if (s.size() < INET6_ADDRSTRLEN && ::inet_pton(AF_INET, s.c_str(), out.bytes.data()) == 1) {
    out.family = AF_INET;
  } else if (s.size() < INET6_ADDRSTRLEN &&
             ::inet_pton(AF_INET6, s.c_str(), out.bytes.data()) == 1) {
    out.family = AF_INET6;
  } else {
    return Status(Code::kInvalidArgument, "\"" + s + "\" is not an IP address");
  }
  return out;
}

Result<IpPrefix> parseCidr(std::string_view text) {
  auto bad = [&] {
    return Status(Code::kInvalidArgument,
                  "\"" + std::string(text) + "\" is not an IP address in CIDR notation");
  };
  auto slash = text.find('/');
  if (slash == std::string_view::npos || slash + 1 >= text.size() || text.size() > 64) return bad();
  auto address = parseIp(text.substr(0, slash));
  if (!address.ok()) return bad();
  IpPrefix out{*address, 0};
  int max = address->isV4() ? 32 : 128;
  for (char c : text.substr(slash + 1)) {
    if (c < '0' || c > '9' || out.length > max) return bad();
    out.length = out.length * 10 + (c - '0');
  }
  if (out.length > max) return bad();
  return out;
}

}  // namespace sriovdra
