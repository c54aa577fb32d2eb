#include "http/server.h"

#include <algorithm>
#include <atomic>
#include <list>
#include <mutex>
#include <thread>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"
#include "base/log.h"
#include "base/strings.h"

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

namespace {
class Session;
}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::map<std::string, Handler> routes;
  asio::io_context ioc{kIoThreads};
  tcp::acceptor acceptor{asio::make_strand(ioc)};
  asio::steady_timer accept_retry{acceptor.get_executor()};
  asio::thread_pool handlers{kHandlerThreads};
  std::vector<std::thread> io_threads;
  std::atomic<bool> stopping{false};
  std::chrono::steady_clock::time_point last_refusal_log;  // the acceptor's strand only

  std::mutex mu;  // guards everything below
  std::shared_ptr<ssl::context> tls;
  timespec cert_mtime{};
  timespec key_mtime{};
  bool serving_fallback = false;  // tls is options.tls_fallback's
  std::list<std::weak_ptr<Session>> sessions;

  Status reloadTlsIfChanged();
  std::shared_ptr<ssl::context> tlsContext();
  void accept();
  void onAccept(boost::system::error_code ec, tcp::socket socket);
  // Makes room for one more connection; false when every connection is busy.
  bool admit();
  Response handle(const Request& r);
};

namespace {

using Clock = std::chrono::steady_clock;

// One connection, whatever its stream: what admit() and stop() need to see.
class Session : public std::enable_shared_from_this<Session> {
 public:
  virtual ~Session() = default;
  virtual void start() = 0;
  // Any thread. Waiting for a request: closed now; a request in progress: closed after its
  // response.
  virtual void close() = 0;
  // Since when the connection has waited for a request (nullopt: a request is in progress).
  std::optional<Clock::time_point> waitingSince() const {
    int64_t ns = waiting_since_.load();
    if (ns < 0) return std::nullopt;
    return Clock::time_point(Clock::duration(ns));
  }

 protected:
  void markWaiting(bool waiting) {
    waiting_since_ = waiting ? Clock::now().time_since_epoch().count() : -1;
  }

 private:
  std::atomic<int64_t> waiting_since_{Clock::now().time_since_epoch().count()};
};

template <class Stream>
class HttpSession final : public Session {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  HttpSession(Server::Impl& srv, std::string peer, std::shared_ptr<ssl::context> ctx,
              tcp::socket socket)
      : srv_(srv), peer_(std::move(peer)), ctx_(std::move(ctx)), stream_(makeStream(socket)) {}

  void start() override {
    asio::dispatch(stream_.get_executor(), [self = self()] { self->begin(); });
  }

  void close() override {
    asio::post(stream_.get_executor(), [self = self()] {
      self->closing_ = true;
      if (self->waitingSince()) self->finish();
    });
  }

 private:
  Stream makeStream(tcp::socket& socket) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *ctx_);
    } else {
      return Stream(std::move(socket));
    }
  }

  std::shared_ptr<HttpSession> self() {
    return std::static_pointer_cast<HttpSession>(shared_from_this());
  }
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
  const Deadlines& deadlines() const { return srv_.options.deadlines; }

  void begin() {
    if constexpr (kTls) {
      lowest().expires_after(deadlines().handshake);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = self()](boost::system::error_code ec) {
                                if (ec) return self->finish();
                                self->readHeader(self->deadlines().header);
                              });
    } else {
      readHeader(deadlines().header);
    }
  }

  void readHeader(std::chrono::milliseconds deadline) {
    if (closing_ || srv_.stopping) return finish();
    markWaiting(true);
    parser_.emplace();
    parser_->body_limit(srv_.options.max_body_bytes);
    lowest().expires_after(deadline);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = self()](boost::system::error_code ec, size_t) {
                               if (ec == bhttp::error::body_limit) return self->tooLarge();
                               if (ec) return self->finish();
                               self->readBody();
                             });
  }

  // Still waiting for a request: until its body is in, the connection may be closed to make
  // room (a peer trickling a body must not hold a slot a health probe needs).
  void readBody() {
    lowest().expires_after(deadlines().body);
    bhttp::async_read(
        stream_, buffer_, *parser_,
        [self = self()](boost::system::error_code ec, size_t) { self->onRequest(ec); });
  }

  void onRequest(boost::system::error_code ec) {
    if (ec == bhttp::error::body_limit) return tooLarge();
    if (ec) return finish();
    if (closing_) return finish();  // evicted while its body came in
    markWaiting(false);
    lowest().expires_never();
    auto& req = parser_->get();
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    Request r;
    r.method = std::string(req.method_string());
    r.target = std::string(req.target());
    r.path = r.target.substr(0, r.target.find('?'));
    for (const auto& field : req) {
      r.headers[asciiLower(field.name_string())] = std::string(field.value());
    }
    r.body = std::move(req.body());
    r.peer = peer_;
    // The handler may block: it runs on the handler pool; the work guard keeps the I/O threads
    // (and stop()) waiting for its answer.
    asio::post(srv_.handlers, [self = self(), r = std::move(r),
                               work = asio::make_work_guard(stream_.get_executor())]() mutable {
      Response resp = self->srv_.handle(r);
      asio::post(work.get_executor(),
                 [self, resp = std::move(resp)]() mutable { self->write(std::move(resp)); });
    });
  }

  void tooLarge() {
    markWaiting(false);
    closing_ = true;
    write(Response::text(
        413, "request body over " + std::to_string(srv_.options.max_body_bytes) + " bytes\n"));
  }

  void write(Response resp) {
    auto out = std::make_shared<bhttp::response<bhttp::string_body>>(
        static_cast<bhttp::status>(resp.status), version_);
    out->set(bhttp::field::server, "sriov-dra");
    out->set(bhttp::field::content_type, resp.content_type);
    for (const auto& [k, v] : resp.headers) out->set(k, v);
    out->keep_alive(keep_alive_ && !closing_ && !srv_.stopping);
    out->body() = std::move(resp.body);
    out->prepare_payload();
    lowest().expires_after(deadlines().write);
    bhttp::async_write(stream_, *out, [self = self(), out](boost::system::error_code ec, size_t) {
      if (ec || !out->keep_alive()) return self->finish();
      self->readHeader(self->deadlines().idle);
    });
  }

  void finish() {
    if (finished_) return;
    finished_ = true;
    markWaiting(false);
    boost::system::error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close();
  }

  Server::Impl& srv_;
  const std::string peer_;
  std::shared_ptr<ssl::context> ctx_;  // outlives stream_
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bool keep_alive_ = false;
  unsigned version_ = 11;
  bool closing_ = false;
  bool finished_ = false;
};

std::string peerOf(const tcp::socket& socket) {
  boost::system::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  if (ec) return "?";
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

namespace {

Result<std::shared_ptr<ssl::context>> loadTls(const TlsFiles& files) {
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
  return ctx;
}

}  // namespace

Status Server::Impl::reloadTlsIfChanged() {
  if (!options.tls) return Status::ok();
  const auto& files = *options.tls;
  timespec cert_now = mtimeOf(files.cert_file);
  timespec key_now = mtimeOf(files.key_file);
  bool fallback_allowed = false;
  {
    std::lock_guard lock(mu);
    if (tls && sameTime(cert_mtime, cert_now) && sameTime(key_mtime, key_now)) {
      return Status::ok();
    }
    fallback_allowed = options.tls_fallback && (tls == nullptr || serving_fallback);
  }
  auto ctx = loadTls(files);
  bool fallback = !ctx.ok() && fallback_allowed && ctx.status().code() == Code::kNotFound;
  if (!ctx.ok() && !fallback) return ctx.status();
  if (fallback) {
    {
      std::lock_guard lock(mu);
      if (tls != nullptr) {  // the fallback is served already: look again when the files change
        cert_mtime = cert_now;
        key_mtime = key_now;
        return Status::ok();
      }
    }
    SDRA_LOG_INFO << options.name << ": serving " << options.tls_fallback->cert_file << " until "
                  << files.cert_file << " can be loaded (" << ctx.status().message() << ")";
    ctx = loadTls(*options.tls_fallback);
    if (!ctx.ok()) return ctx.status();
  }
  std::lock_guard lock(mu);
  bool reload = tls != nullptr;
  tls = std::move(*ctx);
  cert_mtime = cert_now;
  key_mtime = key_now;
  serving_fallback = fallback;
  if (reload) SDRA_LOG_INFO << options.name << ": reloaded TLS certificate " << files.cert_file;
  return Status::ok();
}

std::shared_ptr<ssl::context> Server::Impl::tlsContext() {
  Status st = reloadTlsIfChanged();
  if (!st.isOk())
    SDRA_LOG_WARN << options.name << ": keeping the old certificate: " << st.message();
  std::lock_guard lock(mu);
  return tls;
}

Response Server::Impl::handle(const Request& r) {
  auto route = routes.find(r.path);
  if (route == routes.end()) return Response::text(404, "not found\n");
  try {
    return route->second(r);
  } catch (const std::exception& e) {
    SDRA_LOG_ERROR << options.name << ": handler for " << r.path << " threw: " << e.what();
    return Response::text(500, "internal error\n");
  }
}

bool Server::Impl::admit() {
  std::shared_ptr<Session> victim;
  {
    std::lock_guard lock(mu);
    sessions.remove_if([](const std::weak_ptr<Session>& w) { return w.expired(); });
    if (sessions.size() < options.max_connections) return true;
    std::optional<Clock::time_point> oldest;
    for (auto it = sessions.begin(); it != sessions.end(); ++it) {
      auto s = it->lock();
      auto since = s ? s->waitingSince() : std::nullopt;
      if (since && (!oldest || *since < *oldest)) {
        oldest = since;
        victim = std::move(s);
      }
    }
    if (victim) {
      sessions.remove_if([&](const std::weak_ptr<Session>& w) { return w.lock() == victim; });
    }
  }
  if (victim) victim->close();
  return victim != nullptr;
}

void Server::Impl::accept() {
  acceptor.async_accept(asio::make_strand(ioc),
                        [this](boost::system::error_code ec, tcp::socket socket) {
                          onAccept(ec, std::move(socket));
                        });
}

void Server::Impl::onAccept(boost::system::error_code ec, tcp::socket socket) {
  if (stopping || ec == asio::error::operation_aborted) return;
  if (ec) {
    // EMFILE and friends: try again shortly instead of spinning.
    SDRA_LOG_WARN << options.name << ": accepting a connection: " << ec.message();
    accept_retry.expires_after(std::chrono::milliseconds(100));
    accept_retry.async_wait([this](boost::system::error_code) {
      if (!stopping) accept();
    });
    return;
  }
  if (!admit()) {
    boost::system::error_code ignored;
    socket.close(ignored);
    auto now = Clock::now();
    if (now - last_refusal_log > std::chrono::seconds(10)) {
      last_refusal_log = now;
      SDRA_LOG_WARN << options.name << ": refusing connections: all " << options.max_connections
                    << " have a request in progress";
    }
    return accept();
  }
  std::string peer = peerOf(socket);
  std::shared_ptr<Session> session;
  if (options.tls) {
    session = std::make_shared<HttpSession<beast::ssl_stream<beast::tcp_stream>>>(
        *this, std::move(peer), tlsContext(), std::move(socket));
  } else {
    session = std::make_shared<HttpSession<beast::tcp_stream>>(*this, std::move(peer), nullptr,
                                                               std::move(socket));
  }
  {
    std::lock_guard lock(mu);
    sessions.push_back(session);
  }
  session->start();
  accept();
}

Result<std::unique_ptr<Server>> Server::start(ServerOptions options,
                                              std::map<std::string, Handler> routes) {
  auto bind = parseBindAddress(options.bind_address);
  if (!bind.ok()) return bind.status();
  std::unique_ptr<Server> s(new Server());
  s->impl_ = std::make_unique<Impl>();
  Impl& impl = *s->impl_;
  impl.options = std::move(options);
  impl.routes = std::move(routes);
  SDRA_RETURN_IF_ERROR(impl.reloadTlsIfChanged());

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
                                              impl.options.bind_address + ": " + gai_strerror(rc));
  }
  int fd = -1;
  int family = AF_INET;
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
      continue;
    }
    family = ai->ai_family;
  }
  ::freeaddrinfo(res);
  if (fd < 0) return Status::fromErrno(last_errno, "listening on " + impl.options.bind_address);
  boost::system::error_code ec;
  impl.acceptor.assign(family == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
  if (ec) {
    ::close(fd);
    return Status(Code::kIo, "listening on " + impl.options.bind_address + ": " + ec.message());
  }
  s->port_ = impl.acceptor.local_endpoint(ec).port();
  impl.accept();
  for (int i = 0; i < kIoThreads; ++i) impl.io_threads.emplace_back([&impl] { impl.ioc.run(); });
  SDRA_LOG_INFO << impl.options.name << ": serving " << (impl.options.tls ? "HTTPS" : "HTTP")
                << " on port " << s->port_;
  return s;
}

Server::~Server() { stop(); }

void Server::stop() {
  if (!impl_ || impl_->stopping.exchange(true)) return;
  Impl& impl = *impl_;
  asio::post(impl.acceptor.get_executor(), [&impl] {
    boost::system::error_code ec;
    impl.acceptor.close(ec);
    impl.accept_retry.cancel();
  });
  std::vector<std::shared_ptr<Session>> open;
  {
    std::lock_guard lock(impl.mu);
    for (const auto& w : impl.sessions) {
      if (auto s = w.lock()) open.push_back(std::move(s));
    }
  }
  for (const auto& s : open) s->close();
  open.clear();
  // The I/O threads return once no connection is left (each within its deadlines).
  for (auto& t : impl.io_threads) t.join();
  impl.handlers.join();
}

}  // namespace sriovdra::http
