#pragma once
// A small HTTP/1.1 server on Boost.Beast for probes, metrics and admission webhooks, plain or
// TLS. TLS material is read from files and reloaded when they change (cert-manager rotation).
//
// Connections are asynchronous (kIoThreads threads) and every step has a deadline: the TLS
// handshake, the request header (the first request, or the next one on a kept-alive
// connection), the body and the response; a connection that misses one is closed. Handlers run
// on their own small pool (kHandlerThreads) because they may block (a TokenReview to the API
// server), so a slow handler never stalls reading or writing other connections.
//
// At max_connections a new connection makes room by closing the connection that has waited
// longest for a request (idle keep-alive, a peer that never sent one, or one still sending a
// request's header or body); only when every connection has a request in its handler or
// response is the new one refused. Idle or slow peers therefore cannot starve /healthz,
// /metrics or the webhook.
//
// stop() closes the listener and the idle connections, lets requests in progress finish (within
// their deadlines) and returns when every thread it started has been joined. Handlers must be
// thread-safe.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace sriovdra::http {

struct Request {
  std::string method;
  std::string target;  // path and query
  std::string path;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string peer;  // "ip:port"
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  static Response text(int status, std::string body);
  static Response json(int status, std::string body);
};

using Handler = std::function<Response(const Request&)>;

struct TlsFiles {
  std::string cert_file;  // PEM chain
  std::string key_file;
};

struct Deadlines {
  std::chrono::milliseconds handshake{std::chrono::seconds(10)};
  std::chrono::milliseconds header{std::chrono::seconds(10)};  // the first request's header
  std::chrono::milliseconds idle{std::chrono::seconds(60)};    // kept alive, until a header
  std::chrono::milliseconds body{std::chrono::seconds(30)};
  std::chrono::milliseconds write{std::chrono::seconds(30)};
};

struct ServerOptions {
  std::string bind_address;  // "host:port", ":port" (all interfaces) or "0" (disabled)
  std::optional<TlsFiles> tls;
  // Served while `tls`'s files do not exist and nothing of them has loaded yet (a Secret volume
  // still empty): `tls` is tried again when its files change and served from then on. Files that
  // exist but do not load are an error, as without a fallback.
  std::optional<TlsFiles> tls_fallback;
  size_t max_body_bytes = 3u << 20;
  size_t max_connections = 256;
  Deadlines deadlines;
  std::string name = "http";  // for logs
};

inline constexpr int kIoThreads = 2;
inline constexpr int kHandlerThreads = 4;

class Server {
 public:
  // Binds and starts serving; routes map exact paths to handlers (404 otherwise).
  static Result<std::unique_ptr<Server>> start(ServerOptions options,
                                               std::map<std::string, Handler> routes);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  int port() const { return port_; }
  void stop();

  struct Impl;  // server.cpp: its connections need it

 private:
  Server() = default;

  int port_ = 0;
  std::unique_ptr<Impl> impl_;
};

// "host:port" / ":port" -> {host ("" = any), port}; "0" disables.
Result<std::pair<std::string, int>> parseBindAddress(const std::string& address);

}  // namespace sriovdra::http
