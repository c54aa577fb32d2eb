#include "cni_plugin/ipam.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include <arpa/inet.h>
#include <linux/if_addr.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/process.h"
#include "cni/config.h"

namespace sriovdra::cni_plugin {
namespace {

Result<std::string> run(const cni::CmdArgs& args, const std::string& type, const char* command,
                        std::chrono::milliseconds timeout) {
  if (!cni::isPluginType(type)) {
    return Status(Code::kInvalidArgument, "IPAM plugin type \"" + type + "\" is not a plugin name");
  }
  std::string binary;
  size_t at = 0;
  while (at <= args.path.size()) {
    size_t end = std::min(args.path.find(':', at), args.path.size());
    std::string dir = args.path.substr(at, end - at);
    at = end + 1;
    if (dir.empty()) continue;
    std::string candidate = dir;
    candidate.append("/").append(type);
    if (::access(candidate.c_str(), X_OK) == 0) {
      binary = candidate;
      break;
    }
  }
  if (binary.empty()) {
    return Status(Code::kNotFound,
                  "failed to find plugin \"" + type + "\" in path [" + args.path + "]");
  }
  ProcessSpec spec;
  spec.argv = {binary};
  spec.env = {{"CNI_COMMAND", command},  {"CNI_CONTAINERID", args.container_id},
              {"CNI_NETNS", args.netns}, {"CNI_IFNAME", args.if_name},
              {"CNI_ARGS", args.args},   {"CNI_PATH", args.path}};
  spec.stdin_data = args.stdin_data;
  auto out = runProcess(spec, timeout);
  if (!out.ok()) return Status(out.status().code(), type + ": " + out.status().message());
  if (out->exit_code != 0) {
    return Status(Code::kUnavailable,
                  cni::failureMessage(type, out->exit_code, out->out, out->err));
  }
  return out->out;
}

// The sysctl under /proc/sys/net of `if_name`, "<family>/conf/<if_name>/<name>".
std::string confKey(const char* family, const std::string& if_name, const char* name) {
  return std::string(family) + "/conf/" + if_name + "/" + name;
}

}  // namespace

Result<cni::CniResult> delegateAdd(const cni::CmdArgs& args, const std::string& type,
                                   std::chrono::milliseconds timeout) {
  auto out = run(args, type, "ADD", timeout);
  if (!out.ok()) return out.status();
  return cni::CniResult::parse(*out);
}

Status delegateDel(const cni::CmdArgs& args, const std::string& type,
                   std::chrono::milliseconds timeout) {
  auto out = run(args, type, "DEL", timeout);
  return out.ok() ? Status::ok() : out.status();
}

Status configureInterface(const host::Netdevs& netdevs, const std::string& if_name,
                          const cni::CniResult& result) {
  auto link = netdevs.link(if_name);
  if (!link.ok()) {
    return Status(link.status().code(),
                  "failed to lookup \"" + if_name + "\": " + link.status().message());
  }
  std::optional<IpAddress> v4gw, v6gw;
  bool ipv6_ready = false;
  uint32_t v6_flags = 0;
  for (const auto& ip : result.ips) {
    if (!ip.interface) continue;
    if (*ip.interface < 0 || static_cast<size_t>(*ip.interface) >= result.interfaces.size() ||
        result.interfaces[static_cast<size_t>(*ip.interface)].name != if_name) {
      return Status(Code::kInvalidArgument, "failed to add IP addr " + ip.address.text() +
                                                " to \"" + if_name + "\": invalid interface index");
    }
    if (!ip.address.address.isV4() && !ipv6_ready) {
      for (const std::string& iface : {std::string("lo"), if_name}) {
        auto disabled = netdevs.sysctl(confKey("ipv6", iface, "disable_ipv6"));
        if (!disabled.ok() || *disabled == "0") continue;
        Status st = netdevs.setSysctl(confKey("ipv6", iface, "disable_ipv6"), "0");
        if (!st.isOk()) {
          return Status(Code::kIo,
                        "failed to enable IPv6 for interface \"" + iface + "\": " + st.message());
        }
      }
      // Optimistic DAD makes the address usable at once; where the sysctl cannot be written
      // (a read-only /proc/sys), the address skips DAD rather than stay tentative.
      if (!netdevs.setSysctl(confKey("ipv6", if_name, "optimistic_dad"), "1").isOk()) {
        v6_flags = IFA_F_NODAD;
      }
      ipv6_ready = true;
    }
    Status added =
        netdevs.addAddress(link->index, ip.address, ip.address.address.isV4() ? 0 : v6_flags);
    if (!added.isOk()) {
      return Status(added.code(), "failed to add IP addr " + ip.address.text() + " to \"" +
                                      if_name + "\": " + added.message());
    }
    if (ip.gateway) {
      auto& gw = ip.gateway->isV4() ? v4gw : v6gw;
      if (!gw) gw = ip.gateway;
    }
  }
  if (Status up = netdevs.setUp(link->index, true); !up.isOk()) {
    return Status(up.code(), "failed to set \"" + if_name + "\" UP: " + up.message());
  }
  if (v6gw) {
    // Routes through an IPv6 gateway need a source address that left DAD.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (true) {
      auto addresses = netdevs.addresses(link->index);
      if (!addresses.ok()) return addresses.status();
      bool tentative = false;
      for (const auto& a : *addresses) {
        if (a.prefix.address.isV4()) continue;
        if ((a.flags & IFA_F_DADFAILED) != 0) {
          return Status(Code::kInternal, "link " + if_name + " has address " + a.prefix.text() +
                                             " in DADFAILED state");
        }
        if ((a.flags & IFA_F_TENTATIVE) != 0 && (a.flags & IFA_F_OPTIMISTIC) == 0) tentative = true;
      }
      if (!tentative || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  for (const auto& r : result.routes) {
    std::optional<IpAddress> gw = r.gw;
    if (!gw) gw = r.dst.address.isV4() ? v4gw : v6gw;
    Status st = netdevs.addRoute(link->index, r.dst, gw);
    if (!st.isOk()) {
      return Status(st.code(), "failed to add route '" + r.dst.text() + " via " +
                                   (gw ? gw->text() : std::string("<nil>")) + " dev " + if_name +
                                   "': " + st.message());
    }
  }
  return Status::ok();
}

namespace {

// A gratuitous ARP request for `ip` from `mac` (six bytes) on interface `index`.
Status sendGratuitousArp(int index, const std::string& mac, const IpAddress& ip) {
  int fd = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ARP));
  if (fd < 0) return Status::fromErrno(errno, "ARP socket");
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_protocol = htons(ETH_P_ARP);
  to.sll_ifindex = index;
  to.sll_halen = ETH_ALEN;
  std::memset(to.sll_addr, 0xff, ETH_ALEN);
  unsigned char packet[28] = {0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01};  // Ethernet, IPv4, request
  std::memcpy(packet + 8, mac.data(), 6);
  std::memcpy(packet + 14, ip.bytes.data(), 4);
  std::memcpy(packet + 24, ip.bytes.data(), 4);  // target hardware address stays zero
  ssize_t n = ::sendto(fd, packet, sizeof packet, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  int e = errno;
  ::close(fd);
  return n == sizeof packet ? Status::ok() : Status::fromErrno(e, "sending a gratuitous ARP");
}

// An unsolicited neighbour advertisement of `ip` to all nodes (ff02::1), hop limit 255, the
// Override flag and the target link-layer address option.
Status sendUnsolicitedNa(int index, const std::string& mac, const IpAddress& ip) {
  int fd = ::socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
  if (fd < 0) return Status::fromErrno(errno, "ICMPv6 socket");
  int hops = 255;
  (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof hops);
  (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &index, sizeof index);
  sockaddr_in6 from{};
  from.sin6_family = AF_INET6;
  std::memcpy(&from.sin6_addr, ip.bytes.data(), 16);
  (void)::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from);
  unsigned char packet[32] = {ND_NEIGHBOR_ADVERT, 0, 0, 0, 0x20, 0, 0, 0};  // Override
  std::memcpy(packet + 8, ip.bytes.data(), 16);
  packet[24] = ND_OPT_TARGET_LINKADDR;
  packet[25] = 1;  // in units of 8 bytes
  std::memcpy(packet + 26, mac.data(), 6);
  sockaddr_in6 to{};
  to.sin6_family = AF_INET6;
  to.sin6_scope_id = static_cast<uint32_t>(index);
  ::inet_pton(AF_INET6, "ff02::1", &to.sin6_addr);
  ssize_t n = ::sendto(fd, packet, sizeof packet, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  int e = errno;
  ::close(fd);
  return n == sizeof packet
             ? Status::ok()
             : Status::fromErrno(e, "sending an unsolicited neighbour advertisement");
}

}  // namespace

std::string announce(const host::Netdevs& netdevs, const std::string& if_name,
                     const cni::CniResult& result) {
  auto link = netdevs.link(if_name);
  if (!link.ok()) return link.status().message();
  auto mac = host::parseMac(link->mac);
  if (!mac.ok() || *mac == std::string(6, '\0') || *mac == std::string(6, '\xff')) {
    return "no usable MAC on " + if_name + " (" + link->mac + "): nothing announced";
  }
  // Wait for the carrier a little: from 2 ms, 1.5 times longer each time, 200 ms in all.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  auto wait = std::chrono::microseconds(2000);
  while ((link->flags & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING) &&
         std::chrono::steady_clock::now() + wait < deadline) {
    std::this_thread::sleep_for(wait);
    wait = wait * 3 / 2;
    auto again = netdevs.link(if_name);
    if (!again.ok()) break;
    link = std::move(again);
  }
  std::string problems;
  for (const auto& ip : result.ips) {
    Status st = ip.address.address.isV4()
                    ? sendGratuitousArp(link->index, *mac, ip.address.address)
                    : sendUnsolicitedNa(link->index, *mac, ip.address.address);
    if (!st.isOk()) problems += (problems.empty() ? "" : "; ") + st.message();
  }
  return problems;
}

}  // namespace sriovdra::cni_plugin
