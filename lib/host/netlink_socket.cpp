#include "host/netlink_socket.h"

#include <atomic>
#include <cerrno>

#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sriovdra::host::netlink {

uint32_t nextSeq() {
  static std::atomic<uint32_t> seq{static_cast<uint32_t>(::getpid()) << 16};
  return ++seq;
}

Result<Reply> transact(int protocol, const std::string& request, uint32_t seq,
                       const std::string& what, std::chrono::milliseconds timeout,
                       size_t buffer_size) {
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
  if (fd < 0) return Status::fromErrno(errno, what + ": netlink socket");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  int one = 1;
  // Errors carry the kernel's explanation (extended ack) and not a copy of the request.
  (void)::setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
  (void)::setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  timeval tv{static_cast<time_t>(secs.count()),
             static_cast<suseconds_t>(
                 std::chrono::duration_cast<std::chrono::microseconds>(timeout - secs).count())};
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) {
    return Status::fromErrno(errno, what + ": SO_RCVTIMEO");
  }
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, request.data(), request.size(), 0, reinterpret_cast<sockaddr*>(&kernel),
               sizeof kernel) < 0) {
    return Status::fromErrno(errno, what + ": sending to the kernel");
  }
  Reply all;
  std::string buffer(buffer_size, '\0');
  while (!all.acked) {
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), MSG_TRUNC);
    if (n < 0 && errno == EINTR) continue;
    if (n > static_cast<ssize_t>(buffer.size())) {
      return Status(Code::kTooLarge, what + ": the kernel's answer exceeds " +
                                         std::to_string(buffer.size()) + " bytes");
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Status(Code::kUnavailable, what + ": the kernel did not answer within " +
                                            std::to_string(timeout.count()) + " ms");
    }
    if (n < 0) return Status::fromErrno(errno, what + ": reading the kernel's answer");
    auto reply = parseReply(std::string_view(buffer.data(), static_cast<size_t>(n)), seq, what);
    if (!reply.ok()) return reply.status();
    all.acked = reply->acked;
    all.interrupted = all.interrupted || reply->interrupted;
    for (auto& p : reply->payloads) all.payloads.push_back(std::move(p));
  }
  return all;
}

}  // namespace sriovdra::host::netlink
