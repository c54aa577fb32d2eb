#include "kube/transport.h"

#include <mutex>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include "base/log.h"
#include "kube/http_request.h"

namespace sriovdra::kube {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;
using SteadyClock = std::chrono::steady_clock;
using Deadline = SteadyClock::time_point;

constexpr size_t kStreamReadChunk = size_t{64} * 1024;
// How long a stream's read waits for the rest of what had arrived when more of the body did.
constexpr std::chrono::seconds kArrivedWait{1};
constexpr uint32_t kMaxHeaderBytes = 64 * 1024;

struct ServerInfo {
  bool tls = true;
  std::string host;  // without IPv6 brackets
  std::string port;
  std::string prefix;       // path prefix of the server URL, without a trailing '/'
  std::string host_header;  // "host:port" as sent in Host (brackets for IPv6)
  std::string verify_name;  // the name or IP the certificate must match
  bool verify_is_ip = false;
};

bool isIpLiteral(const std::string& s) {
  ErrorCode ec;
  asio::ip::make_address(s, ec);
  return !ec;
}

Result<ServerInfo> parseServer(const std::string& server, const TlsOptions& tls) {
  auto url = boost::urls::parse_uri(server);
  if (!url) {
    return Status(Code::kInvalidArgument,
                  "server URL \"" + server + "\" is not a valid URL: " + url.error().message());
  }
  ServerInfo info;
  std::string scheme(url->scheme());
  if (scheme == "https") {
    info.tls = true;
  } else if (scheme == "http") {
    info.tls = false;
  } else {
    return Status(Code::kInvalidArgument,
                  "server URL \"" + server + "\" must start with https:// or http://");
  }
  info.host = url->host_address();
  if (info.host.empty()) {
    return Status(Code::kInvalidArgument, "server URL \"" + server + "\" has no host");
  }
  info.port = url->has_port() ? std::string(url->port()) : (info.tls ? "443" : "80");
  if (info.port.empty() || info.port.size() > 5 ||
      info.port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(info.port) > 65535 || std::stoi(info.port) == 0) {
    return Status(Code::kInvalidArgument, "server URL \"" + server + "\" has an invalid port");
  }
  info.prefix = url->path();
  while (!info.prefix.empty() && info.prefix.back() == '/') info.prefix.pop_back();
  bool v6 = info.host.find(':') != std::string::npos;
  info.host_header = (v6 ? "[" + info.host + "]" : info.host) + ":" + info.port;
  info.verify_name = tls.server_name.empty() ? info.host : tls.server_name;
  info.verify_is_ip = tls.server_name.empty() && isIpLiteral(info.host);
  return info;
}

Result<std::shared_ptr<ssl::context>> makeTlsContext(const TlsOptions& tls) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  ErrorCode ec;
  if (!tls.ca_pem.empty()) {
    ctx->add_certificate_authority(asio::buffer(tls.ca_pem), ec);
    if (ec) {
      return Status(Code::kInvalidArgument,
                    "certificate authority data is not a PEM certificate: " + ec.message());
    }
  } else {
    ctx->set_default_verify_paths(ec);
    if (ec) {
      return Status(Code::kInvalidArgument, "cannot load the system CA store: " + ec.message());
    }
  }
  if (!tls.client_cert_pem.empty() || !tls.client_key_pem.empty()) {
    if (tls.client_cert_pem.empty() || tls.client_key_pem.empty()) {
      return Status(Code::kInvalidArgument,
                    "a client certificate needs both the certificate and its key");
    }
    ctx->use_certificate_chain(asio::buffer(tls.client_cert_pem), ec);
    if (ec) return Status(Code::kInvalidArgument, "client certificate: " + ec.message());
    ctx->use_private_key(asio::buffer(tls.client_key_pem), ssl::context::pem, ec);
    if (ec) return Status(Code::kInvalidArgument, "client key: " + ec.message());
  }
  ctx->set_verify_mode(tls.insecure_skip_verify ? ssl::verify_none : ssl::verify_peer);
  return ctx;
}

// One connection with its own io_context: each operation is started asynchronously and the
// context is run until it completes, which gives blocking calls with Beast's timeouts.
class Connection {
 public:
  Connection(const ServerInfo& server, std::shared_ptr<ssl::context> ctx,
             const TransportOptions& options)
      : server_(server), ctx_(std::move(ctx)), options_(options) {}

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { close(); }

  const std::shared_ptr<ssl::context>& context() const { return ctx_; }

  Status connect(Deadline deadline) {
    auto endpoints = resolve(deadline);
    if (!endpoints.ok()) return std::move(endpoints).takeStatus();
    if (server_.tls) {
      tls_.emplace(ioc_, *ctx_);
    } else {
      plain_.emplace(ioc_);
    }
    ErrorCode ec =
        run([&](auto handler) { lowest().async_connect(*endpoints, handler); }, deadline);
    if (ec) return translate(ec, "connecting to");
    setSocketOptions();
    if (!server_.tls) return Status::ok();

    SSL* ssl = tls_->native_handle();
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (server_.verify_is_ip) {
      X509_VERIFY_PARAM_set1_ip_asc(param, server_.verify_name.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl, server_.verify_name.c_str());
      X509_VERIFY_PARAM_set1_host(param, server_.verify_name.c_str(), 0);
    }
    ec = run([&](auto handler) { tls_->async_handshake(ssl::stream_base::client, handler); },
             deadline);
    if (ec) {
      long verify = SSL_get_verify_result(ssl);
      if (verify != X509_V_OK) {
        return Status(Code::kTlsVerification,
                      "TLS verification of the server certificate of " + server_.host_header +
                          " failed: " + X509_verify_cert_error_string(verify) +
                          " (check the certificate authority and tls-server-name)");
      }
      return translate(ec, "TLS handshake with");
    }
    return Status::ok();
  }

  Status write(OutgoingRequest& req, Deadline deadline) {
    ErrorCode ec = run(
        [&](auto handler) {
          if (tls_) {
            http::async_write(*tls_, req, handler);
          } else {
            http::async_write(*plain_, req, handler);
          }
        },
        deadline);
    return ec ? translate(ec, "sending a request to") : Status::ok();
  }

  template <class Parser>
  Status readHeader(Parser& parser, Deadline deadline) {
    ErrorCode ec = run(
        [&](auto handler) {
          if (tls_) {
            http::async_read_header(*tls_, buffer_, parser, handler);
          } else {
            http::async_read_header(*plain_, buffer_, parser, handler);
          }
        },
        deadline);
    return ec ? translate(ec, "reading a response from") : Status::ok();
  }

  template <class Parser>
  Status readAll(Parser& parser, Deadline deadline) {
    ErrorCode ec = run(
        [&](auto handler) {
          if (tls_) {
            http::async_read(*tls_, buffer_, parser, handler);
          } else {
            http::async_read(*plain_, buffer_, parser, handler);
          }
        },
        deadline);
    if (ec == http::error::body_limit) {
      return Status(Code::kInternal, "the response from " + server_.host_header +
                                         " is larger than the limit of " +
                                         std::to_string(options_.max_response_bytes) + " bytes");
    }
    return ec ? translate(ec, "reading a response from") : Status::ok();
  }

  // One read from the socket, parsed into parser (a buffer_body parser). need_buffer is normal.
  template <class Parser>
  Status readSome(Parser& parser, Deadline deadline) {
    ErrorCode ec = run(
        [&](auto handler) {
          if (tls_) {
            http::async_read_some(*tls_, buffer_, parser, handler);
          } else {
            http::async_read_some(*plain_, buffer_, parser, handler);
          }
        },
        deadline);
    if (ec == http::error::need_buffer) return Status::ok();
    return ec ? translate(ec, "reading a stream from") : Status::ok();
  }

  // Thread-safe: shuts the socket down so that a blocked operation fails at once.
  void cancel() {
    std::lock_guard lock(fd_mu_);
    cancelled_ = true;
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  }

  // True if the idle connection can be reused: the peer has not closed it and sent nothing.
  bool reusable() { return buffer_.size() == 0 && !tlsPending() && peek() == Socket::kQuiet; }

  // True if more of a chunked body (RFC 9112 7.1) has arrived: buffer_ holds more than the CRLF
  // that ends every chunk's data, TLS holds decrypted bytes, or the socket holds bytes. A server
  // writes each chunk whole, so parsing it waits for nothing, unless what the socket holds is a
  // TLS record without data (a key update).
  bool hasMoreBody() { return buffer_.size() > 2 || tlsPending() || peek() == Socket::kData; }

 private:
  beast::tcp_stream& lowest() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }
  bool tlsPending() { return tls_ && SSL_pending(tls_->native_handle()) > 0; }

  // What the socket holds, without waiting.
  enum class Socket { kData, kQuiet, kClosed };
  Socket peek() {
    std::lock_guard lock(fd_mu_);
    if (fd_ < 0 || cancelled_) return Socket::kClosed;
    char c;
    ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return Socket::kData;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? Socket::kQuiet : Socket::kClosed;
  }

  Result<std::vector<tcp::endpoint>> resolve(Deadline deadline) {
    ErrorCode ec;
    auto port = static_cast<uint16_t>(std::stoi(server_.port));
    if (isIpLiteral(server_.host)) {
      return std::vector<tcp::endpoint>{tcp::endpoint(asio::ip::make_address(server_.host), port)};
    }
    tcp::resolver resolver(ioc_);
    tcp::resolver::results_type results;
    asio::steady_timer timer(ioc_);
    bool done = false;
    bool timed_out = false;
    timer.expires_at(deadline);
    timer.async_wait([&](ErrorCode tec) {
      if (!tec && !done) {
        timed_out = true;
        resolver.cancel();
      }
    });
    resolver.async_resolve(server_.host, server_.port,
                           [&](ErrorCode rec, tcp::resolver::results_type r) {
                             done = true;
                             ec = rec;
                             results = std::move(r);
                             timer.cancel();
                           });
    ioc_.restart();
    ioc_.run();
    if (timed_out) {
      return Status(Code::kTimeout, "timed out resolving " + server_.host);
    }
    if (ec) {
      return Status(Code::kUnavailable, "cannot resolve " + server_.host + ": " + ec.message());
    }
    std::vector<tcp::endpoint> out;
    for (const auto& entry : results) out.push_back(entry.endpoint());
    return out;
  }

  template <class Start>
  ErrorCode run(Start&& start, Deadline deadline) {
    {
      std::lock_guard lock(fd_mu_);
      if (cancelled_) return asio::error::operation_aborted;
    }
    lowest().expires_at(deadline);
    std::optional<ErrorCode> result;
    start([&result](ErrorCode ec, auto&&...) { result = ec; });
    ioc_.restart();
    ioc_.run();  // returns when the operation and its timer have completed
    if (!result) return asio::error::operation_aborted;
    return *result;
  }

  void setSocketOptions() {
    auto& sock = lowest().socket();
    ErrorCode ec;
    sock.set_option(tcp::no_delay(true), ec);
    sock.set_option(asio::socket_base::keep_alive(true), ec);
    int fd = sock.native_handle();
    int secs = static_cast<int>(options_.tcp_keepalive.count());
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &secs, sizeof secs);
    ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &secs, sizeof secs);
    std::lock_guard lock(fd_mu_);
    fd_ = fd;
  }

  Status translate(ErrorCode ec, std::string_view what) {
    {
      std::lock_guard lock(fd_mu_);
      if (cancelled_) return Status(Code::kCancelled, "request cancelled");
    }
    std::string msg = std::string(what) + " " + server_.host_header + ": " + ec.message();
    if (ec == beast::error::timeout) return Status(Code::kTimeout, "timed out " + msg);
    return Status(Code::kUnavailable, msg);
  }

  void close() {
    {
      std::lock_guard lock(fd_mu_);
      fd_ = -1;
    }
    ErrorCode ec;
    if (tls_ || plain_) {
      lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
      lowest().socket().close(ec);
    }
  }

  const ServerInfo server_;
  std::shared_ptr<ssl::context> ctx_;
  const TransportOptions options_;
  asio::io_context ioc_{1};
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
  std::optional<beast::tcp_stream> plain_;
  beast::flat_buffer buffer_;
  std::mutex fd_mu_;
  int fd_ = -1;
  bool cancelled_ = false;

 public:
  SteadyClock::time_point idle_since{};
};

class TransportImpl;

class StreamImpl final : public HttpStream {
 public:
  StreamImpl(std::unique_ptr<Connection> conn,
             std::unique_ptr<http::response_parser<http::buffer_body>> parser)
      : conn_(std::move(conn)), parser_(std::move(parser)) {}

  int status() const override { return static_cast<int>(parser_->get().result_int()); }

  // Waits for some of the body, then takes what else has arrived (up to kStreamReadChunk bytes),
  // so a burst of small watch events comes in one call. What has arrived is read within
  // kArrivedWait: if it was a TLS record without data, the connection ends there (a timeout) and
  // the next call says so, after this one returned what it had.
  Result<size_t> read(std::string& out, std::chrono::milliseconds idle_timeout) override {
    char buf[kStreamReadChunk];
    size_t got = 0;
    while (!parser_->is_done() && got < sizeof buf && (got == 0 || conn_->hasMoreBody())) {
      parser_->get().body().data = buf + got;
      parser_->get().body().size = sizeof buf - got;
      auto wait = got == 0 ? idle_timeout : std::chrono::milliseconds(kArrivedWait);
      Status st = conn_->readSome(*parser_, SteadyClock::now() + wait);
      got = sizeof buf - parser_->get().body().size;
      if (!st.isOk()) {
        if (got == 0) return st;
        break;
      }
    }
    out.append(buf, got);
    return got;
  }

  void cancel() override { conn_->cancel(); }

 private:
  std::unique_ptr<Connection> conn_;
  std::unique_ptr<http::response_parser<http::buffer_body>> parser_;
};

class TransportImpl final : public Transport {
 public:
  TransportImpl(ServerInfo server, std::shared_ptr<ssl::context> ctx, TlsOptions tls,
                TransportOptions options)
      : server_(std::move(server)),
        tls_options_(std::move(tls)),
        options_(options),
        ctx_(std::move(ctx)) {}

  Result<HttpResponse> send(const HttpRequest& request,
                            std::chrono::milliseconds timeout) override {
    auto req = buildRequest(request);
    if (!req.ok()) return std::move(req).takeStatus();
    Deadline deadline = SteadyClock::now() + timeout;
    for (int attempt = 0;; ++attempt) {
      bool reused = false;
      auto conn = acquire(deadline, &reused);
      if (!conn.ok()) return std::move(conn).takeStatus();
      http::response_parser<http::string_body> parser;
      parser.header_limit(kMaxHeaderBytes);
      parser.body_limit(options_.max_response_bytes);
      Status st = (*conn)->write(*req, deadline);
      if (st.isOk()) st = (*conn)->readAll(parser, deadline);
      if (!st.isOk()) {
        // A pooled connection the server closed while idle: retry once on a new connection
        // unless the request is a POST, which the server may already have acted on.
        if (reused && attempt == 0 && st.code() == Code::kUnavailable && request.method != "POST") {
          continue;
        }
        return st;
      }
      auto& msg = parser.get();
      HttpResponse resp;
      resp.status = static_cast<int>(msg.result_int());
      resp.content_type = std::string(msg[http::field::content_type]);
      resp.retry_after = parseRetryAfter(msg[http::field::retry_after]);
      bool keep = msg.keep_alive() && parser.is_done();
      resp.body = std::move(msg.body());
      if (keep) release(std::move(*conn));
      return resp;
    }
  }

  Result<std::unique_ptr<HttpStream>> openStream(const HttpRequest& request,
                                                 std::chrono::milliseconds timeout) override {
    auto req = buildRequest(request);
    if (!req.ok()) return std::move(req).takeStatus();
    Deadline deadline = SteadyClock::now() + timeout;
    auto conn = std::make_unique<Connection>(server_, context(), options_);
    SDRA_RETURN_IF_ERROR(conn->connect(deadline));
    SDRA_RETURN_IF_ERROR(conn->write(*req, deadline));
    auto parser = std::make_unique<http::response_parser<http::buffer_body>>();
    parser->header_limit(kMaxHeaderBytes);
    parser->body_limit(boost::none);
    SDRA_RETURN_IF_ERROR(conn->readHeader(*parser, deadline));
    return std::unique_ptr<HttpStream>(
        std::make_unique<StreamImpl>(std::move(conn), std::move(parser)));
  }

  Status setClientCertificate(const std::string& cert_pem, const std::string& key_pem) override {
    TlsOptions tls = tls_options_;
    tls.client_cert_pem = cert_pem;
    tls.client_key_pem = key_pem;
    auto ctx = makeTlsContext(tls);
    if (!ctx.ok()) return std::move(ctx).takeStatus();
    std::lock_guard lock(mu_);
    tls_options_ = std::move(tls);
    ctx_ = std::move(*ctx);
    idle_.clear();
    return Status::ok();
  }

  const std::string& hostPort() const override { return server_.host_header; }

 private:
  std::shared_ptr<ssl::context> context() {
    std::lock_guard lock(mu_);
    return ctx_;
  }

  Result<std::unique_ptr<Connection>> acquire(Deadline deadline, bool* reused) {
    std::shared_ptr<ssl::context> ctx;
    {
      std::lock_guard lock(mu_);
      auto now = SteadyClock::now();
      while (!idle_.empty()) {
        auto conn = std::move(idle_.back());
        idle_.pop_back();
        if (conn->context() == ctx_ && now - conn->idle_since < options_.idle_connection_timeout &&
            conn->reusable()) {
          *reused = true;
          return conn;
        }
      }
      ctx = ctx_;
    }
    *reused = false;
    auto conn = std::make_unique<Connection>(server_, std::move(ctx), options_);
    SDRA_RETURN_IF_ERROR(conn->connect(deadline));
    return conn;
  }

  void release(std::unique_ptr<Connection> conn) {
    conn->idle_since = SteadyClock::now();
    std::lock_guard lock(mu_);
    if (conn->context() == ctx_ && idle_.size() < options_.max_idle_connections) {
      idle_.push_back(std::move(conn));
    }
  }

  Result<OutgoingRequest> buildRequest(const HttpRequest& in) const {
    return kube::buildRequest(in, server_.prefix, server_.host_header);
  }

  static std::optional<std::chrono::seconds> parseRetryAfter(boost::beast::string_view v) {
    if (v.empty()) return std::nullopt;
    int64_t secs = 0;
    for (char c : v) {
      if (c < '0' || c > '9') return std::nullopt;
      secs = secs * 10 + (c - '0');
      if (secs > 86400) return std::chrono::seconds(86400);
    }
    return std::chrono::seconds(secs);
  }

  const ServerInfo server_;
  TlsOptions tls_options_;
  const TransportOptions options_;
  std::mutex mu_;
  std::shared_ptr<ssl::context> ctx_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace

Result<std::shared_ptr<Transport>> Transport::create(const std::string& server, TlsOptions tls,
                                                     TransportOptions options) {
  auto info = parseServer(server, tls);
  if (!info.ok()) return std::move(info).takeStatus();
  std::shared_ptr<ssl::context> ctx;
  if (info->tls) {
    auto made = makeTlsContext(tls);
    if (!made.ok()) return std::move(made).takeStatus();
    ctx = std::move(*made);
    if (tls.insecure_skip_verify) {
      SDRA_LOG_WARN << "TLS verification of " << info->host_header
                    << " is OFF (insecure-skip-tls-verify is set in the kubeconfig): anyone on "
                       "the network path can impersonate the API server";
    }
  }
  return std::shared_ptr<Transport>(
      std::make_shared<TransportImpl>(std::move(*info), std::move(ctx), std::move(tls), options));
}

}  // namespace sriovdra::kube
