#include "serving/certificate_gated_server.h"

#include <condition_variable>

#include "base/log.h"

namespace sriovdra::serving {

CertificateGatedServer::CertificateGatedServer(http::ServerOptions options,
                                               std::map<std::string, http::Handler> routes,
                                               std::chrono::milliseconds retry)
    : options_(std::move(options)), routes_(std::move(routes)), retry_(retry) {}

CertificateGatedServer::~CertificateGatedServer() { stop(); }

Status CertificateGatedServer::tryStart() {
  auto server = http::Server::start(options_, routes_);
  if (!server.ok()) return server.status();
  std::lock_guard lock(mu_);
  server_ = std::move(*server);
  return Status::ok();
}

Status CertificateGatedServer::start() {
  Status first = tryStart();
  if (first.isOk()) return first;
  std::string where = options_.tls ? options_.tls->cert_file : std::string("(no TLS files)");
  waiter_ = std::jthread([this, where](const std::stop_token& stop) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    while (!cv.wait_for(lock, stop, retry_, [] { return false; }) && !stop.stop_requested()) {
      if (tryStart().isOk()) {
        SDRA_LOG_INFO << options_.name << " started with the certificate " << where;
        return;
      }
    }
  });
  return first;
}

bool CertificateGatedServer::started() const {
  std::lock_guard lock(mu_);
  return server_ != nullptr;
}

int CertificateGatedServer::port() const {
  std::lock_guard lock(mu_);
  return server_ ? server_->port() : 0;
}

void CertificateGatedServer::stop() {
  waiter_ = {};  // requests stop and joins
  std::lock_guard lock(mu_);
  if (server_) server_->stop();
}

}  // namespace sriovdra::serving
