#pragma once
// An HTTPS server whose certificate may appear after the process starts (a Secret mounted once
// cert-manager or an administrator creates it, as for the admission webhook): start() serves at
// once when tls.crt and tls.key can be loaded, and otherwise tries again every `retry` until they
// can or stop() is called. The server reloads rotated files by itself (http::Server).
// Thread-safety: started() from any thread; stop() once, from the owner.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "http/server.h"

namespace sriovdra::serving {

class CertificateGatedServer {
 public:
  CertificateGatedServer(http::ServerOptions options, std::map<std::string, http::Handler> routes,
                         std::chrono::milliseconds retry = std::chrono::seconds(10));
  ~CertificateGatedServer();
  CertificateGatedServer(const CertificateGatedServer&) = delete;
  CertificateGatedServer& operator=(const CertificateGatedServer&) = delete;

  // The first attempt's error (ok when serving); later attempts run in the background.
  Status start();
  bool started() const;
  int port() const;  // 0 until started
  void stop();

 private:
  Status tryStart();

  const http::ServerOptions options_;
  const std::map<std::string, http::Handler> routes_;
  const std::chrono::milliseconds retry_;
  mutable std::mutex mu_;
  std::unique_ptr<http::Server> server_;  // guarded by mu_
  std::jthread waiter_;
};

}  // namespace sriovdra::serving
