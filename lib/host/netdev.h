#pragma once
// The network devices of the calling thread's network namespace, read and changed over
// rtnetlink: what a CNI plugin does to a VF's netdev once its PF has configured the VF (rename it,
// move it into the pod's namespace, set its MAC and MTU, bring it up, give it addresses and
// routes). Run these inside NetNamespace::run() to act in another namespace.
// Real kernel only: the simulated kernel stands in for the PF's side of SR-IOV (netlink.h), not
// for namespaces; tests use veth and ifb links (this kernel has no dummy) in namespaces of their
// own, and the QEMU guest an igb VF's netdev (tests/kernel).
// Errors keep the kernel's errno: ENODEV no such netdev, EEXIST a name or address taken, EINVAL a
// value the driver refuses, EPERM without CAP_NET_ADMIN. Each call opens its own socket and waits
// at most `timeout` for the answer. Thread-safe.
#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "base/ip.h"
#include "base/status.h"
#include "host/netlink.h"
#include "host/netlink_wire.h"
#include "host/netns.h"

namespace sriovdra::host {

class Netdevs {
 public:
  explicit Netdevs(std::chrono::milliseconds timeout = std::chrono::seconds(2))
      : timeout_(timeout) {}
  // kNotFound (ENODEV) when the namespace has no netdev of that name.
  Result<LinkInfo> link(std::string_view name) const;
  Status rename(int32_t index, std::string_view name) const;
  Status setMac(int32_t index, std::string_view mac) const;
  Status setMtu(int32_t index, uint32_t mtu) const;
  Status setUp(int32_t index, bool up) const;
  // Moves the netdev into `target`; it keeps its name there (EEXIST when the name is taken).
  Status moveTo(int32_t index, const NetNamespace& target) const;
  Status deleteAltName(int32_t index, std::string_view alt_name) const;
  // flags: IFA_F_* (IFA_F_NODAD: no duplicate address detection for an IPv6 address).
  Status addAddress(int32_t index, const IpPrefix& address, uint32_t flags = 0) const;
  Status addRoute(int32_t index, const IpPrefix& destination,
                  const std::optional<IpAddress>& gateway) const;
  // Every address of the netdev, IPv4 then IPv6.
  Result<std::vector<netlink::AddressInfo>> addresses(int32_t index) const;
  // A network sysctl of this namespace: `key` below /proc/sys/net ("ipv4/conf/net1/arp_notify").
  // Writes fail with EROFS where /proc/sys is mounted read-only (a container's).
  Result<std::string> sysctl(std::string_view key) const;
  Status setSysctl(std::string_view key, std::string_view value) const;

 private:
  Status change(int32_t index, const netlink::LinkChange& change, const std::string& what) const;
  std::chrono::milliseconds timeout_;
};

}  // namespace sriovdra::host
