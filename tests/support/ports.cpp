#include "support/ports.h"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sriovdra::testing {

namespace {

// Whether a loopback TCP port can be bound now (it is closed again at once).
bool bindable(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// The lowest port the kernel hands out as an ephemeral one (net.ipv4.ip_local_port_range).
int ephemeralLow() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768;
  in >> low;
  return low;
}

}  // namespace

// A loopback port nothing listens on, and one this process has not handed out before: the
// kernel may offer a just-closed port again, and two servers of one test told the same port
// would race for it. Taken below the kernel's ephemeral range, so that no connection's source
// port (of the API server, etcd, kubelet, another test binary) can take it between now and the
// moment the server binds it; the start is spread by process so parallel test binaries seldom
// try the same ports.
int freePort() {
  static std::mutex mu;
  static std::set<int> given;
  static const int high = ephemeralLow();
  static const int low = std::max(1024, high - 12000);
  static int next = low + static_cast<int>(::getpid() * 7919 % (high - low));
  std::lock_guard lock(mu);
  for (int attempt = 0; attempt < high - low; ++attempt) {
    int port = next;
    next = next + 1 < high ? next + 1 : low;
    if (given.count(port) == 0 && bindable(port)) {
      given.insert(port);
      return port;
    }
  }
  throw std::runtime_error("no loopback port left below the ephemeral range");
}

// The kernel picks the source address of a route when a UDP socket connects (nothing is sent).
std::string hostAddress() {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(53);
  ::inet_pton(AF_INET, "192.0.2.1", &to.sin_addr);  // any address off this host will do
  sockaddr_in from{};
  socklen_t len = sizeof from;
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&from), &len) == 0;
  ::close(fd);
  char text[INET_ADDRSTRLEN] = {};
  if (!ok || ::inet_ntop(AF_INET, &from.sin_addr, text, sizeof text) == nullptr ||
      from.sin_addr.s_addr == htonl(INADDR_LOOPBACK)) {
    throw std::runtime_error("this machine has no route off the host: no address for pods");
  }
  return text;
}

}  // namespace sriovdra::testing
