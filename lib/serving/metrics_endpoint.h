#pragma once
// /metrics as controller-runtime's secure metrics serve it: HTTPS, and every caller
// authenticated with a TokenReview of its bearer token and authorised with a
// SubjectAccessReview (verb get on the non-resource URL of the request, /metrics). No or an
// invalid token: 401; not allowed: 403; the API server unreachable: 500 (Prometheus retries).
// Answers are cached by the token's SHA-256 (allowed 1 min, denied 10 s); tokens are never
// logged. Whoever reaches the port may send any number of new tokens, and each would cost a
// TokenReview sent with this process's credentials: tokens not in the cache are reviewed at
// most review_rate per second (burst review_burst) in all, and at most source_rate per second
// (burst source_burst) for one source address, so one flooding client leaves the others room
// (ReviewBudgets); past that the answer is 429 with Retry-After: 1 and nothing is sent (a
// scraper whose answer is cached is not affected, nor one whose allowed answer expired less
// than 10 minutes ago: it stands until a review is free). The cache holds at most max_cached
// answers (expired ones go first, then those that expire soonest).
// Plain HTTP without checks only with secure = false. Without a certificate directory (tls.crt,
// tls.key) a self-signed certificate is made at start, as controller-runtime does; with one whose
// files cannot be loaded yet (a Secret volume the operator fills later: metrics_certificate_
// reconciler.h), the self-signed one is served until they can, then theirs, rotations included. The
// process needs create on tokenreviews and subjectaccessreviews
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

struct ReviewBudget {
  double review_rate = 5;  // reviews of tokens not in the cache, per second
  double review_burst = 20;
  double source_rate = 2;  // of those, for one source address
  double source_burst = 8;
  size_t max_sources = 1024;  // source addresses remembered
  size_t max_cached = 4096;
};

// Token buckets for reviews (pure, the clock given): one for all sources and one per source
// address. A review is taken only when both have one; a source refused takes nothing from the
// others. At most max_sources sources are remembered: past that, those whose bucket is full
// again are forgotten (they lose nothing), then the one that asked longest ago.
// Thread-safety: none; DelegatedAuth calls it under its lock.
class ReviewBudgets {
 public:
  explicit ReviewBudgets(const ReviewBudget& budget, std::chrono::steady_clock::time_point now);
  bool take(const std::string& source, std::chrono::steady_clock::time_point now);

 private:
  struct Bucket {
    double left;
    std::chrono::steady_clock::time_point refilled;
    // Refilled up to `now`; true when a whole review is left.
    bool refill(double rate, double burst, std::chrono::steady_clock::time_point now);
  };
  void forgetSources(std::chrono::steady_clock::time_point now);

  const ReviewBudget budget_;
  Bucket all_;
  std::map<std::string, Bucket> sources_;
};

class DelegatedAuth {
 public:
  DelegatedAuth(std::shared_ptr<kube::Client> client, std::chrono::seconds allowed_ttl,
                std::chrono::seconds denied_ttl, ReviewBudget budget = {});
  // nullopt: the caller may proceed; otherwise the answer to send.
  std::optional<http::Response> check(const http::Request& request);

 private:
  struct Entry {
    std::optional<http::Response> answer;
    std::chrono::steady_clock::time_point expires;
  };
  std::optional<http::Response> review(const std::string& token, const std::string& path);
  void remember(std::string key, Entry entry, std::chrono::steady_clock::time_point now);

  std::shared_ptr<kube::Client> client_;
  std::chrono::seconds allowed_ttl_, denied_ttl_;
  const ReviewBudget budget_;
  std::mutex mu_;
  std::map<std::string, Entry> cache_;  // guarded by mu_; sha256(token) + " " + path
  ReviewBudgets budgets_;               // guarded by mu_
};

// Registers --metrics-bind-address, --metrics-secure and --metrics-cert-dir on a command line,
// with `options` holding the defaults.
void addMetricsFlags(CLI::App& app, MetricsEndpointOptions& options);

// nullptr when the address is "0".
Result<std::unique_ptr<http::Server>> startMetricsEndpoint(const MetricsEndpointOptions& options,
                                                           std::shared_ptr<kube::Client> client);

}  // namespace sriovdra::serving
