#include "support/ports.h"

#include <mutex>
#include <set>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sriovdra::testing {

// A loopback port nothing listens on, and one this process has not handed out before: the
// kernel may offer a just-closed port again, and two servers of one test told the same port
// would race for it.
int freePort() {
  static std::mutex mu;
  static std::set<int> given;
  std::lock_guard lock(mu);
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      throw std::runtime_error("cannot bind a loopback port");
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    int port = ntohs(addr.sin_port);
    if (given.insert(port).second) return port;
  }
  throw std::runtime_error("no loopback port left that was not handed out before");
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
