#include "host/netlink.h"

#include <atomic>
#include <cerrno>

#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host/netlink_wire.h"

namespace sriovdra::host {
namespace {

uint32_t nextSeq() {
  static std::atomic<uint32_t> seq{static_cast<uint32_t>(::getpid()) << 16};
  return ++seq;
}

// One request, its answer: a socket of `protocol`, closed again before returning. `buffer_size`
// bounds one message of the answer (a PF's VF information grows with its VFs).
Result<netlink::Reply> transact(int protocol, const std::string& request, uint32_t seq,
                                const std::string& what, std::chrono::milliseconds timeout,
                                size_t buffer_size = size_t{64} * 1024) {
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
  netlink::Reply all;
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
    auto reply =
        netlink::parseReply(std::string_view(buffer.data(), static_cast<size_t>(n)), seq, what);
    if (!reply.ok()) return reply.status();
    all.acked = reply->acked;
    all.interrupted = all.interrupted || reply->interrupted;
    for (auto& p : reply->payloads) all.payloads.push_back(std::move(p));
  }
  return all;
}

Result<uint16_t> devlinkFamily(std::chrono::milliseconds timeout) {
  uint32_t seq = nextSeq();
  auto reply = transact(NETLINK_GENERIC, netlink::familyRequest(seq, "devlink"), seq,
                        "resolving the devlink netlink family", timeout);
  if (!reply.ok()) {
    if (reply.status().sysErrno() == ENOENT) {
      return Status(Code::kNotFound,
                    "this kernel has no devlink (the generic netlink family \"devlink\" is not "
                    "registered): eSwitch modes cannot be read or changed")
          .withErrno(ENOENT);
    }
    return reply.status();
  }
  if (reply->payloads.empty()) {
    return Status(Code::kInvalidArgument, "the kernel answered the devlink lookup without data");
  }
  return netlink::familyIdOf(reply->payloads.front());
}

// devlink answers ENODEV for a handle it has no instance for: no such device, or (seen with igb
// on a real kernel) a driver that registers no devlink instance and so has no eSwitch.
Status noDevlinkInstance(const Status& st, std::string_view pci_address) {
  if (st.sysErrno() != ENODEV) return st;
  return Status(st.code(), st.message() + " (no devlink instance pci/" + std::string(pci_address) +
                               ": no such device, or its driver has no devlink and so no eSwitch; "
                               "leave eSwitchMode unset (legacy) for this NIC)")
      .withErrno(ENODEV);
}

}  // namespace

Result<std::vector<LinkInfo>> KernelNetlink::links() const {
  // A dump that interfaces changed under (NLM_F_DUMP_INTR) may miss or repeat one: ask again.
  constexpr int kAttempts = 3;
  Result<netlink::Reply> reply = Status(Code::kInternal, "no attempt");
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    uint32_t seq = nextSeq();
    reply = transact(NETLINK_ROUTE, netlink::linkDumpRequest(seq), seq,
                     "listing the network interfaces", timeout_);
    if (!reply.ok() || !reply->interrupted) break;
  }
  if (!reply.ok()) return reply.status();
  if (reply->interrupted) {
    return Status(Code::kUnavailable, "listing the network interfaces: they kept changing during " +
                                          std::to_string(kAttempts) + " dumps");
  }
  std::vector<LinkInfo> out;
  out.reserve(reply->payloads.size());
  for (const auto& payload : reply->payloads) {
    auto link = netlink::linkOf(payload);
    if (!link.ok()) return link.status();
    out.push_back(std::move(*link));
  }
  return out;
}

Result<std::string> KernelNetlink::eswitchMode(std::string_view pci_address) const {
  auto family = devlinkFamily(timeout_);
  if (!family.ok()) return family.status();
  uint32_t seq = nextSeq();
  std::string what = "reading the eSwitch mode of pci/" + std::string(pci_address);
  auto reply = transact(NETLINK_GENERIC, netlink::eswitchGetRequest(*family, seq, pci_address), seq,
                        what, timeout_);
  if (!reply.ok()) return noDevlinkInstance(reply.status(), pci_address);
  if (reply->payloads.empty()) {
    return Status(Code::kInvalidArgument, what + ": the kernel sent no eSwitch");
  }
  return netlink::eswitchModeOf(reply->payloads.front());
}

Status KernelNetlink::setEswitchMode(std::string_view pci_address, std::string_view mode) {
  auto family = devlinkFamily(timeout_);
  if (!family.ok()) return family.status();
  uint32_t seq = nextSeq();
  auto request = netlink::eswitchSetRequest(*family, seq, pci_address, mode);
  if (!request.ok()) return request.status();
  auto reply = transact(
      NETLINK_GENERIC, *request, seq,
      "setting the eSwitch mode of pci/" + std::string(pci_address) + " to " + std::string(mode),
      timeout_);
  return reply.ok() ? Status::ok() : noDevlinkInstance(reply.status(), pci_address);
}

Result<std::vector<VfGuids>> KernelNetlink::vfGuids(std::string_view pf) const {
  uint32_t seq = nextSeq();
  auto reply = transact(NETLINK_ROUTE, netlink::vfInfoRequest(seq, pf), seq,
                        "reading the VFs of " + std::string(pf), timeout_, size_t{1} << 20);
  if (!reply.ok()) return reply.status();
  if (reply->payloads.empty()) return std::vector<VfGuids>{};
  return netlink::vfGuidsOf(reply->payloads.front());
}

Status KernelNetlink::setVfGuids(std::string_view pf, int32_t vf, uint64_t node_guid,
                                 uint64_t port_guid) {
  uint32_t seq = nextSeq();
  auto reply =
      transact(NETLINK_ROUTE, netlink::vfGuidRequest(seq, pf, vf, node_guid, port_guid), seq,
               "setting the GUIDs of VF " + std::to_string(vf) + " of " + std::string(pf) + " to " +
                   guidText(port_guid),
               timeout_);
  return reply.ok() ? Status::ok() : reply.status();
}

std::string guidText(uint64_t guid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int shift = 56; shift >= 0; shift -= 8) {
    auto byte = static_cast<unsigned>((guid >> shift) & 0xffu);
    if (!out.empty()) out += ':';
    out += kHex[byte >> 4];
    out += kHex[byte & 0xfu];
  }
  return out;
}

Result<uint64_t> parseGuid(std::string_view text) {
  auto bad = [&] {
    return Status(Code::kInvalidArgument,
                  "GUID \"" + std::string(text) +
                      "\" is not eight hex bytes separated by colons (02:00:00:00:00:00:00:01)");
  };
  if (text.size() != 23) return bad();
  uint64_t out = 0;
  for (size_t i = 0; i < 8; ++i) {
    if (i > 0 && text[i * 3 - 1] != ':') return bad();
    uint64_t byte = 0;
    for (char c : text.substr(i * 3, 2)) {
      int v = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (v < 0) return bad();
      byte = byte * 16 + static_cast<uint64_t>(v);
    }
    out = (out << 8) | byte;
  }
  return out;
}

}  // namespace sriovdra::host
