#include "support/ports.h"

#include <mutex>
#include <set>
#include <stdexcept>

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

}  // namespace sriovdra::testing
