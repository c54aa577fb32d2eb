#pragma once
// HTTP/1.1 over TCP or TLS (Boost.Beast + Asio + OpenSSL 3) to one server, with a pool of
// keep-alive connections. The server certificate is always verified against the configured CA
// (or the system store) and the host name or IP; only TlsOptions::insecure_skip_verify turns
// that off. Every request has a deadline; TCP keepalive is on; response bodies are bounded by
// TransportOptions::max_response_bytes, except streams (watch), which are read piece by piece
// with an idle deadline and can be cancelled from another thread. Requests are built by
// buildRequest (kube/http_request.h), which refuses anything that could be read as a second
// request; a pooled connection is reused only when nothing is buffered or readable on it, so a
// response is never taken for another request's.
// Thread-safe: send() and openStream() may be called concurrently.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "kube/tls_options.h"

namespace sriovdra::kube {

struct TransportOptions {
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
  size_t max_response_bytes = 256u << 20;
  size_t max_idle_connections = 16;
  std::chrono::seconds idle_connection_timeout{90};
  std::chrono::seconds tcp_keepalive{30};
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, already encoded, without the server's path prefix
  // Not owned and never copied: whoever sends the request keeps it alive until send returns.
  std::string_view body;
  std::string content_type;
  std::string accept = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::optional<std::chrono::seconds> retry_after;
};

// A response whose body arrives over time (a watch). Destroying it closes the connection.
class HttpStream {
 public:
  virtual ~HttpStream() = default;
  virtual int status() const = 0;
  // Appends the next bytes of the body to out: once some arrive, also those that arrived with
  // them (up to 64 KiB). Returns the number appended; 0 means the body ended. Fails with kTimeout
  // when nothing arrives within idle_timeout, kCancelled after cancel().
  virtual Result<size_t> read(std::string& out, std::chrono::milliseconds idle_timeout) = 0;
  // Thread-safe; makes a blocked read() return kCancelled promptly.
  virtual void cancel() = 0;
};

class Transport {
 public:
  // server: "https://host[:port][/path-prefix]" or "http://...".
  static Result<std::shared_ptr<Transport>> create(const std::string& server, TlsOptions tls,
                                                   TransportOptions options = {});
  virtual ~Transport() = default;

  virtual Result<HttpResponse> send(const HttpRequest& request,
                                    std::chrono::milliseconds timeout) = 0;
  // Sends the request and reads the response headers within timeout; the body is then read
  // through the stream.
  virtual Result<std::unique_ptr<HttpStream>> openStream(const HttpRequest& request,
                                                         std::chrono::milliseconds timeout) = 0;
  // Replaces the client certificate (exec credential plugins); pooled connections are dropped.
  virtual Status setClientCertificate(const std::string& cert_pem, const std::string& key_pem) = 0;
  // "host:port", for metrics labels and messages.
  virtual const std::string& hostPort() const = 0;
};

}  // namespace sriovdra::kube
