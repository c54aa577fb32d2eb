#pragma once
// A small HTTP/1.1 server on Boost.Beast for probes, metrics and admission webhooks, plain or
// TLS. TLS material is read from files and reloaded when they change (cert-manager rotation).
// One thread accepts; each connection is served on its own thread (bounded), with 30 s socket
// read/write timeouts and a bounded request body. Handlers must be thread-safe.
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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

struct ServerOptions {
  std::string bind_address;  // "host:port", ":port" (all interfaces) or "0" (disabled)
  std::optional<TlsFiles> tls;
  size_t max_body_bytes = 3u << 20;
  size_t max_connections = 64;
  std::string name = "http";  // for logs
};

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

 private:
  Server() = default;
  void acceptLoop();
  void serve(int fd, std::string peer);
  Status reloadTlsIfChanged();

  ServerOptions options_;
  std::map<std::string, Handler> routes_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> active_{0};
  std::thread acceptor_;
  struct Tls;
  std::shared_ptr<Tls> tls_;
  std::mutex tls_mu_;
};

// "host:port" / ":port" -> {host ("" = any), port}; "0" disables.
Result<std::pair<std::string, int>> parseBindAddress(const std::string& address);

}  // namespace sriovdra::http
