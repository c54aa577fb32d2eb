#include "http/server.h"

#include <arpa/inet.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"
#include "base/log.h"

namespace sriovdra::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

timespec mtimeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return st.st_mtim;
}

bool sameTime(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

}  // namespace

struct Server::Tls {
  std::shared_ptr<ssl::context> ctx;
  timespec cert_mtime{};
  timespec key_mtime{};
};

Response Response::text(int status, std::string body) {
  return {status, "text/plain; charset=utf-8", std::move(body), {}};
}

Response Response::json(int status, std::string body) {
  return {status, "application/json", std::move(body), {}};
}

Result<std::pair<std::string, int>> parseBindAddress(const std::string& address) {
  if (address == "0") return std::pair<std::string, int>{"", -1};
  auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    return Status(Code::kInvalidArgument,
                  "bind address \"" + address + "\" must be host:port, :port, or 0 to disable");
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  try {
    port = std::stoi(address.substr(colon + 1));
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) {
    return Status(Code::kInvalidArgument, "bind address \"" + address + "\" has an invalid port");
  }
  return std::pair<std::string, int>{host, port};
}

Status Server::reloadTlsIfChanged() {
  if (!options_.tls) return Status::ok();
  const auto& files = *options_.tls;
  timespec cert_mtime = mtimeOf(files.cert_file);
  timespec key_mtime = mtimeOf(files.key_file);
  {
    std::lock_guard lock(tls_mu_);
    if (tls_ && sameTime(tls_->cert_mtime, cert_mtime) && sameTime(tls_->key_mtime, key_mtime)) {
      return Status::ok();
    }
  }
  auto cert = readFile(files.cert_file);
  if (!cert.ok()) return cert.status();
  auto key = readFile(files.key_file);
  if (!key.ok()) return key.status();
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  ctx->use_certificate_chain(asio::buffer(*cert), ec);
  if (ec) return Status(Code::kInvalidArgument, files.cert_file + ": " + ec.message());
  ctx->use_private_key(asio::buffer(*key), ssl::context::pem, ec);
  if (ec) return Status(Code::kInvalidArgument, files.key_file + ": " + ec.message());
  auto tls = std::make_shared<Tls>(Tls{std::move(ctx), cert_mtime, key_mtime});
  std::lock_guard lock(tls_mu_);
  bool reload = tls_ != nullptr;
  tls_ = std::move(tls);
  if (reload) SDRA_LOG_INFO << options_.name << ": reloaded TLS certificate " << files.cert_file;
  return Status::ok();
}

Result<std::unique_ptr<Server>> Server::start(ServerOptions options,
                                              std::map<std::string, Handler> routes) {
  auto bind = parseBindAddress(options.bind_address);
  if (!bind.ok()) return bind.status();
  std::unique_ptr<Server> s(new Server());
  s->options_ = std::move(options);
  s->routes_ = std::move(routes);
  SDRA_RETURN_IF_ERROR(s->reloadTlsIfChanged());

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port = std::to_string(bind->second);
  const char* host = bind->first.empty() ? nullptr : bind->first.c_str();
  int rc = ::getaddrinfo(host, port.c_str(), &hints, &res);
  if (rc != 0) {
    return Status(Code::kInvalidArgument, "cannot resolve bind address " +
                                              s->options_.bind_address + ": " + gai_strerror(rc));
  }
  int fd = -1;
  int last_errno = 0;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ai->ai_family == AF_INET6) {
      int zero = 0;
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    }
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      last_errno = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd < 0) return Status::fromErrno(last_errno, "listening on " + s->options_.bind_address);
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  s->port_ = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  s->listen_fd_ = fd;
  s->acceptor_ = std::thread([srv = s.get()] { srv->acceptLoop(); });
  SDRA_LOG_INFO << s->options_.name << ": serving " << (s->options_.tls ? "HTTPS" : "HTTP")
                << " on port " << s->port_;
  return s;
}

Server::~Server() { stop(); }

void Server::stop() {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  // Let connections in flight finish (they have socket timeouts).
  for (int i = 0; i < 350 && active_.load() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void Server::acceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    int n = ::poll(&p, 1, 200);
    if (n <= 0) continue;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
    if (fd < 0) continue;
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (addr.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
      port = ntohs(a->sin6_port);
    }
    if (active_.load() >= options_.max_connections) {
      ::close(fd);
      continue;
    }
    ++active_;
    std::thread([this, fd, peer = std::string(host) + ":" + std::to_string(port)] {
      serve(fd, peer);
      --active_;
    }).detach();
  }
}

// Long on purpose: one connection's life, TLS handshake and then requests until it closes.
void Server::serve(int fd, std::string peer) {
  timeval tv{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  asio::io_context ioc;
  tcp::socket socket(ioc);
  boost::system::error_code ec;
  int family = 0;
  socklen_t flen = sizeof family;
  ::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &flen);
  socket.assign(family == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
  if (ec) {
    ::close(fd);
    return;
  }

  auto handle = [&](auto& stream) {
    beast::flat_buffer buffer;
    for (;;) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(options_.max_body_bytes);
      bhttp::read(stream, buffer, parser, ec);
      if (ec) return;
      auto& req = parser.get();
      Request r;
      r.method = std::string(req.method_string());
      r.target = std::string(req.target());
      r.path = r.target.substr(0, r.target.find('?'));
      for (const auto& field : req) {
        std::string name(field.name_string());
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        r.headers[name] = std::string(field.value());
      }
      r.body = std::move(req.body());
      r.peer = peer;
      Response resp;
      auto route = routes_.find(r.path);
      if (route == routes_.end()) {
        resp = Response::text(404, "not found\n");
      } else {
        try {
          resp = route->second(r);
        } catch (const std::exception& e) {
          SDRA_LOG_ERROR << options_.name << ": handler for " << r.path << " threw: " << e.what();
          resp = Response::text(500, "internal error\n");
        }
      }
      bhttp::response<bhttp::string_body> out{static_cast<bhttp::status>(resp.status),
                                              req.version()};
      out.set(bhttp::field::server, "sriov-dra");
      out.set(bhttp::field::content_type, resp.content_type);
      for (const auto& [k, v] : resp.headers) out.set(k, v);
      out.keep_alive(req.keep_alive());
      out.body() = std::move(resp.body);
      out.prepare_payload();
      bhttp::write(stream, out, ec);
      if (ec || !out.keep_alive()) return;
    }
  };

  if (options_.tls) {
    Status st = reloadTlsIfChanged();
    if (!st.isOk())
      SDRA_LOG_WARN << options_.name << ": keeping the old certificate: " << st.message();
    std::shared_ptr<ssl::context> ctx;
    {
      std::lock_guard lock(tls_mu_);
      ctx = tls_->ctx;
    }
    beast::ssl_stream<tcp::socket&> stream(socket, *ctx);
    stream.handshake(ssl::stream_base::server, ec);
    if (!ec) {
      handle(stream);
      stream.shutdown(ec);
    }
  } else {
    handle(socket);
  }
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

}  // namespace sriovdra::http
