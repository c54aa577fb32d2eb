#include "host/netdev.h"

#include <algorithm>
#include <cerrno>

#include <fcntl.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/files.h"
#include "host/netlink_socket.h"

namespace sriovdra::host {

Result<LinkInfo> Netdevs::link(std::string_view name) const {
  SDRA_RETURN_IF_ERROR(netlink::checkIfName(name));
  uint32_t seq = netlink::nextSeq();
  std::string what = "looking up network interface " + std::string(name);
  auto reply =
      netlink::transact(NETLINK_ROUTE, netlink::linkRequest(seq, name), seq, what, timeout_);
  if (!reply.ok()) {
    if (reply.status().sysErrno() == ENODEV) {
      return Status(Code::kNotFound, "no network interface " + std::string(name)).withErrno(ENODEV);
    }
    return reply.status();
  }
  if (reply->payloads.empty()) return Status(Code::kInternal, what + ": the kernel sent no link");
  return netlink::linkOf(reply->payloads.front());
}

Status Netdevs::change(int32_t index, const netlink::LinkChange& change,
                       const std::string& what) const {
  uint32_t seq = netlink::nextSeq();
  auto request = netlink::linkChangeRequest(seq, index, change);
  if (!request.ok()) return request.status();
  auto reply = netlink::transact(NETLINK_ROUTE, *request, seq, what, timeout_);
  return reply.ok() ? Status::ok() : reply.status();
}

Status Netdevs::rename(int32_t index, std::string_view name) const {
  SDRA_RETURN_IF_ERROR(netlink::checkIfName(name));
  return change(index, {.name = std::string(name)},
                "renaming interface " + std::to_string(index) + " to " + std::string(name));
}

Status Netdevs::setMac(int32_t index, std::string_view mac) const {
  return change(
      index, {.mac = std::string(mac)},
      "setting the MAC of interface " + std::to_string(index) + " to " + std::string(mac));
}

Status Netdevs::setMtu(int32_t index, uint32_t mtu) const {
  return change(
      index, {.mtu = mtu},
      "setting the MTU of interface " + std::to_string(index) + " to " + std::to_string(mtu));
}

Status Netdevs::setUp(int32_t index, bool up) const {
  return change(
      index, {.up = up},
      std::string(up ? "bringing up" : "bringing down") + " interface " + std::to_string(index));
}

Status Netdevs::moveTo(int32_t index, const NetNamespace& target) const {
  return change(index, {.netns_fd = target.fd()},
                "moving interface " + std::to_string(index) + " to another network namespace");
}

Status Netdevs::deleteAltName(int32_t index, std::string_view alt_name) const {
  SDRA_RETURN_IF_ERROR(netlink::checkIfName(alt_name, true));
  uint32_t seq = netlink::nextSeq();
  auto reply =
      netlink::transact(NETLINK_ROUTE, netlink::altNameDeleteRequest(seq, index, alt_name), seq,
                        "removing the alternative name " + std::string(alt_name) +
                            " of interface " + std::to_string(index),
                        timeout_);
  return reply.ok() ? Status::ok() : reply.status();
}

Status Netdevs::addAddress(int32_t index, const IpPrefix& address, uint32_t flags) const {
  uint32_t seq = netlink::nextSeq();
  auto reply = netlink::transact(
      NETLINK_ROUTE, netlink::addressAddRequest(seq, index, address, flags), seq,
      "adding address " + address.text() + " to interface " + std::to_string(index), timeout_);
  return reply.ok() ? Status::ok() : reply.status();
}

Status Netdevs::addRoute(int32_t index, const IpPrefix& destination,
                         const std::optional<IpAddress>& gateway) const {
  uint32_t seq = netlink::nextSeq();
  auto reply = netlink::transact(
      NETLINK_ROUTE, netlink::routeAddRequest(seq, index, destination, gateway), seq,
      "adding route " + destination.text() + (gateway ? " via " + gateway->text() : "") +
          " on interface " + std::to_string(index),
      timeout_);
  return reply.ok() ? Status::ok() : reply.status();
}

Result<std::vector<netlink::AddressInfo>> Netdevs::addresses(int32_t index) const {
  std::vector<netlink::AddressInfo> out;
  for (int family : {AF_INET, AF_INET6}) {
    uint32_t seq = netlink::nextSeq();
    auto reply = netlink::transact(NETLINK_ROUTE, netlink::addressDumpRequest(seq, family), seq,
                                   "listing addresses", timeout_, size_t{1} << 20);
    if (!reply.ok()) return reply.status();
    for (const auto& payload : reply->payloads) {
      auto a = netlink::addressOf(payload);
      if (!a.ok()) return a.status();
      if (a->index == index) out.push_back(*a);
    }
  }
  return out;
}

namespace {

// A sysctl key is a relative path of plain names: never "..", never absolute.
bool cleanKey(std::string_view key) {
  if (key.empty() || key.front() == '/') return false;
  size_t at = 0;
  while (at <= key.size()) {
    size_t end = std::min(key.find('/', at), key.size());
    std::string_view part = key.substr(at, end - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = end + 1;
  }
  return true;
}

}  // namespace

Result<std::string> Netdevs::sysctl(std::string_view key) const {
  if (!cleanKey(key)) return Status(Code::kInvalidArgument, "bad sysctl " + std::string(key));
  auto value = readFile("/proc/sys/net/" + std::string(key), 4096, ReadEnd::kShortRead);
  if (!value.ok()) return value.status();
  while (!value->empty() && value->back() == '\n') value->pop_back();
  return value;
}

Status Netdevs::setSysctl(std::string_view key, std::string_view value) const {
  if (!cleanKey(key)) return Status(Code::kInvalidArgument, "bad sysctl " + std::string(key));
  std::string path = "/proc/sys/net/" + std::string(key);
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::fromErrno(errno, "opening " + path);
  ssize_t n = ::write(fd, value.data(), value.size());
  int e = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return Status::fromErrno(n < 0 ? e : EIO, "writing " + std::string(value) + " to " + path);
  }
  return Status::ok();
}

}  // namespace sriovdra::host
