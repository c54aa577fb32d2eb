#pragma once
// /metrics as controller-runtime's secure metrics serve it: HTTPS, and every caller
// authenticated with a TokenReview of its bearer token and authorised with a
// SubjectAccessReview (verb get on the non-resource URL of the request, /metrics). No or an
// invalid token: 401; not allowed: 403; the API server unreachable: 500 (Prometheus retries).
// Answers are cached by the token's SHA-256 (allowed 1 min, denied 10 s); tokens are never
// logged. Plain HTTP without checks only with secure = false. Without a certificate directory
// (tls.crt, tls.key) a self-signed certificate is made at start, as controller-runtime does.
// The process needs create on tokenreviews and subjectaccessreviews
// (config/rbac/metrics_auth_role.yaml); scrapers need get on /metrics (metrics_reader_role.yaml).
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "base/status.h"
#include "http/server.h"
#include "kube/client.h"

namespace sriovdra::serving {

struct MetricsEndpointOptions {
  std::string bind_address;  // "0" disables
  bool secure = true;
  std::string cert_dir;  // "" = self-signed
  std::chrono::seconds allowed_ttl{60};
  std::chrono::seconds denied_ttl{10};
};

class DelegatedAuth {
 public:
  DelegatedAuth(std::shared_ptr<kube::Client> client, std::chrono::seconds allowed_ttl,
                std::chrono::seconds denied_ttl);
  // nullopt: the caller may proceed; otherwise the answer to send.
  std::optional<http::Response> check(const http::Request& request);

 private:
  struct Entry {
    std::optional<http::Response> answer;
    std::chrono::steady_clock::time_point expires;
  };
  std::optional<http::Response> review(const std::string& token, const std::string& path);

  std::shared_ptr<kube::Client> client_;
  std::chrono::seconds allowed_ttl_, denied_ttl_;
  std::mutex mu_;
  std::map<std::string, Entry> cache_;  // sha256(token) + " " + path
};

// Registers --metrics-bind-address, --metrics-secure and --metrics-cert-dir on a command line,
// with `options` holding the defaults.
void addMetricsFlags(CLI::App& app, MetricsEndpointOptions& options);

// nullptr when the address is "0".
Result<std::unique_ptr<http::Server>> startMetricsEndpoint(const MetricsEndpointOptions& options,
                                                           std::shared_ptr<kube::Client> client);

}  // namespace sriovdra::serving
