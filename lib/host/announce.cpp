#include "host/announce.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sriovdra::host {
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

std::string announceAddresses(const Netdevs& netdevs, const std::string& if_name,
                              const std::vector<IpAddress>& addresses) {
  auto link = netdevs.link(if_name);
  if (!link.ok()) return link.status().message();
  auto mac = parseMac(link->mac);
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
  for (const auto& ip : addresses) {
    Status st = ip.isV4() ? sendGratuitousArp(link->index, *mac, ip)
                          : sendUnsolicitedNa(link->index, *mac, ip);
    if (!st.isOk()) problems += (problems.empty() ? "" : "; ") + st.message();
  }
  return problems;
}

}  // namespace sriovdra::host
