#pragma once
// One netlink request and its whole answer over a socket of the calling thread's network
// namespace (internal to lib/host: netlink.cpp, netdev.cpp).
#include <chrono>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "host/netlink_wire.h"

namespace sriovdra::host::netlink {

// A sequence number no other request of this process uses at the same time.
uint32_t nextSeq();

// Sends `request` on a new socket of `protocol` (NETLINK_ROUTE, NETLINK_GENERIC) with extended
// acknowledgements, and reads until the kernel acknowledged it or ended the dump; the socket is
// closed before returning. `what` starts every error's message; `buffer_size` bounds one message
// of the answer (a PF's VF information grows with its VFs): a longer one is kTooLarge. No answer
// within `timeout`: kUnavailable.
Result<Reply> transact(int protocol, const std::string& request, uint32_t seq,
                       const std::string& what, std::chrono::milliseconds timeout,
                       size_t buffer_size = size_t{64} * 1024);

}  // namespace sriovdra::host::netlink
