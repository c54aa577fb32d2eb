// The HTTP server under hostile peers: idle and slow connections, oversized bodies, a handler
// that blocks, and stop() with connections open. Real sockets on loopback.
#include <latch>
#include <thread>

#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/files.h"
#include "http/pki.h"
#include "http/server.h"
#include "kube/transport.h"
#include "support/https_get.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;

namespace {

// A connected TCP socket that sends nothing unless told to; closed on destruction.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void send(const std::string& bytes) const {
    REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(bytes.size()));
  }
  // Reads until the server closes the connection or `limit` passes; what arrived, and whether
  // the connection was closed.
  std::pair<std::string, bool> readUntilClosed(std::chrono::milliseconds limit) const {
    std::string got;
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return {got, true};
      got.append(buf, static_cast<size_t>(n));
    }
    return {got, false};
  }

 private:
  int fd_;
};

std::vector<std::unique_ptr<RawConnection>> idleConnections(int port, int n) {
  std::vector<std::unique_ptr<RawConnection>> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(std::make_unique<RawConnection>(port));
  return out;
}

Result<kube::HttpResponse> plainGet(int port, const std::string& path) {
  auto t = kube::Transport::create("http://127.0.0.1:" + std::to_string(port), {});
  if (!t.ok()) return t.status();
  return (*t)->send({"GET", path, "", "", "*/*", {}}, 5s);
}

// A CA and a serving certificate for 127.0.0.1 in `dir`.
struct ServingCert {
  testing::TempDir dir;
  http::Pem ca = http::makeCa("test-ca");
  http::TlsFiles files;
  ServingCert() {
    auto pem = http::makeCert(ca, {.common_name = "localhost", .ip_addresses = {"127.0.0.1"}});
    dir.write("tls.crt", pem.cert);
    dir.write("tls.key", pem.key);
    files = {dir.path() + "/tls.crt", dir.path() + "/tls.key"};
  }
};

std::map<std::string, http::Handler> healthz() {
  return {{"/healthz", [](const http::Request&) { return http::Response::text(200, "ok\n"); }}};
}

}  // namespace

TEST_CASE("idle peers cannot starve the server: the longest waiting connection makes room",
          "[http][unit]") {
  auto server =
      http::Server::start({.bind_address = "127.0.0.1:0", .max_connections = 8}, healthz());
  REQUIRE(server.ok());
  auto idle = idleConnections((*server)->port(), 64);
  for (int i = 0; i < 3; ++i) {
    auto got = plainGet((*server)->port(), "/healthz");
    REQUIRE(got.ok());
    CHECK(got->status == 200);
  }
  // The oldest idle connections were closed to make room.
  CHECK(idle.front()->readUntilClosed(5s).second);
}

TEST_CASE("peers that send a header and then a slow body are evicted like idle ones",
          "[http][unit]") {
  auto server =
      http::Server::start({.bind_address = "127.0.0.1:0", .max_connections = 8}, healthz());
  REQUIRE(server.ok());
  auto slow = idleConnections((*server)->port(), 32);
  for (const auto& c : slow) {
    c->send("POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nx");
  }
  for (int i = 0; i < 3; ++i) {
    auto got = plainGet((*server)->port(), "/healthz");
    REQUIRE(got.ok());
    CHECK(got->status == 200);
  }
  CHECK(slow.front()->readUntilClosed(5s).second);
}

TEST_CASE("TLS peers that never handshake cannot starve the server either", "[http][unit]") {
  ServingCert cert;
  auto server = http::Server::start(
      {.bind_address = "127.0.0.1:0", .tls = cert.files, .max_connections = 4}, healthz());
  REQUIRE(server.ok());
  auto idle = idleConnections((*server)->port(), 32);
  auto got = testing::httpsGet((*server)->port(), cert.ca.cert, "/healthz");
  REQUIRE(got.ok());
  CHECK(got->status == 200);
}

TEST_CASE("every step has a deadline: handshake, header, body, idle keep-alive", "[http][unit]") {
  ServingCert cert;
  const http::Deadlines short_deadlines{300ms, 300ms, 300ms, 300ms, 300ms};
  auto plain =
      http::Server::start({.bind_address = "127.0.0.1:0", .deadlines = short_deadlines}, healthz());
  auto tls = http::Server::start(
      {.bind_address = "127.0.0.1:0", .tls = cert.files, .deadlines = short_deadlines}, healthz());
  REQUIRE(plain.ok());
  REQUIRE(tls.ok());
  int port = (*plain)->port();
  SECTION("a peer that never handshakes") {
    RawConnection c((*tls)->port());
    CHECK(c.readUntilClosed(10s).second);
  }
  SECTION("a header that never ends (slowloris)") {
    RawConnection c(port);
    c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 3; ++i) c.send("X-Slow: 1\r\n");
    CHECK(c.readUntilClosed(10s).second);
  }
  SECTION("a body that never arrives") {
    RawConnection c(port);
    c.send("POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789");
    auto [got, closed] = c.readUntilClosed(10s);
    CHECK(closed);
    CHECK(got.empty());
  }
  SECTION("a kept-alive connection that stays idle") {
    RawConnection c(port);
    c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    auto [got, closed] = c.readUntilClosed(10s);
    CHECK_THAT(got, Catch::StartsWith("HTTP/1.1 200 OK"));
    CHECK(closed);
  }
}

TEST_CASE("an oversized body is answered 413 and the server keeps serving", "[http][unit]") {
  auto server =
      http::Server::start({.bind_address = "127.0.0.1:0", .max_body_bytes = 1024}, healthz());
  REQUIRE(server.ok());
  RawConnection c((*server)->port());
  c.send("POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n" +
         std::string(4096, 'x'));
  auto [got, closed] = c.readUntilClosed(10s);
  CHECK_THAT(got, Catch::StartsWith("HTTP/1.1 413"));
  CHECK(closed);
  auto again = plainGet((*server)->port(), "/healthz");
  REQUIRE(again.ok());
  CHECK(again->status == 200);
}

TEST_CASE("a handler that blocks does not stall the others; stop() waits for it", "[http][unit]") {
  std::latch entered(1);
  std::latch release(1);
  std::atomic<bool> slow_answered{false};
  auto routes = healthz();
  routes["/slow"] = [&](const http::Request&) {
    entered.count_down();
    release.wait();
    return http::Response::text(200, "late\n");
  };
  auto server = http::Server::start({.bind_address = "127.0.0.1:0"}, routes);
  REQUIRE(server.ok());
  int port = (*server)->port();
  std::thread slow([&] {
    auto got = plainGet(port, "/slow");
    slow_answered = got.ok() && got->status == 200 && got->body == "late\n";
  });
  // The slow request is in its handler before the others and stop() come: otherwise stop() may
  // close its connection before the request was read (a race this test once lost).
  entered.wait();
  for (int i = 0; i < 5; ++i) {
    auto got = plainGet(port, "/healthz");
    REQUIRE(got.ok());
    CHECK(got->status == 200);
  }
  CHECK_FALSE(slow_answered);
  RawConnection idle(port);
  std::thread stopper([&] { (*server)->stop(); });
  CHECK(idle.readUntilClosed(10s).second);  // stop() closes idle connections at once
  release.count_down();
  stopper.join();  // returns once the slow request was answered
  slow.join();
  CHECK(slow_answered);
  CHECK_FALSE(plainGet(port, "/healthz").ok());
}
