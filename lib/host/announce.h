#pragma once
// Telling a link's neighbours that addresses moved to it, as a host does when it takes over an
// address (a CNI plugin after it gave a pod's VF its addresses): best effort, in the calling
// thread's network namespace, on the running kernel only.
//   announceAddresses  waits at most 200 ms for the link `if_name` to run (up with a carrier),
//                      then sends from its MAC a gratuitous ARP request per IPv4 address and an
//                      unsolicited neighbour advertisement per IPv6 address (to ff02::1, hop
//                      limit 255, the Override flag, the target link-layer address option), over
//                      raw sockets (CAP_NET_RAW). Returns what failed for the log, "" when all
//                      went; a link without a usable MAC (all zero or all ones) announces nothing.
// Thread-safe (a socket per packet).
#include <string>
#include <vector>

#include "base/ip.h"
#include "host/netdev.h"

namespace sriovdra::host {

std::string announceAddresses(const Netdevs& netdevs, const std::string& if_name,
                              const std::vector<IpAddress>& addresses);

}  // namespace sriovdra::host
