#include "serving/metrics_endpoint.h"

#include <algorithm>
#include <filesystem>

#include <unistd.h>

#include "api/codec.h"
#include "base/digest.h"
#include "base/files.h"
#include "base/log.h"
#include "http/pki.h"
#include "metrics/registry.h"

namespace sriovdra::serving {
namespace {

constexpr std::chrono::minutes kStaleAllowed{10};

const kube::ResourceType kTokenReviews{"authentication.k8s.io", "v1", "tokenreviews", "TokenReview",
                                       false};
const kube::ResourceType kSubjectAccessReviews{"authorization.k8s.io", "v1", "subjectaccessreviews",
                                               "SubjectAccessReview", false};

http::Response metricsResponse() {
  return http::Response{200, "text/plain; version=0.0.4; charset=utf-8", metrics::renderText(), {}};
}

// A self-signed serving certificate for this host, in a private directory.
Result<http::TlsFiles> selfSigned() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "sriov-dra-metrics-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return Status::fromErrno(errno, "mkdtemp " + tmpl);
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  http::Pem cert;
  try {
    auto ca = http::makeCa("sriov-dra-metrics-ca");
    cert = http::makeCert(ca, {.common_name = host,
                               .dns_names = {host, "localhost"},
                               .ip_addresses = {"127.0.0.1", "::1"},
                               .client = false});
  } catch (const std::exception& e) {
    return Status(Code::kInternal, std::string("making a self-signed certificate: ") + e.what());
  }
  http::TlsFiles files{tmpl + "/tls.crt", tmpl + "/tls.key"};
  SDRA_RETURN_IF_ERROR(writeFileAtomic(files.cert_file, cert.cert, 0644));
  SDRA_RETURN_IF_ERROR(writeFileAtomic(files.key_file, cert.key, 0600));
  return files;
}

// "10.0.0.1:4242" -> "10.0.0.1", "[fd00::1]:4242" or "fd00::1:4242" -> "fd00::1".
std::string sourceAddress(const std::string& peer) {
  auto colon = peer.rfind(':');
  std::string address = colon == std::string::npos ? peer : peer.substr(0, colon);
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  return address;
}

}  // namespace

ReviewBudgets::ReviewBudgets(const ReviewBudget& budget, std::chrono::steady_clock::time_point now)
    : budget_(budget), all_{budget.review_burst, now} {}

bool ReviewBudgets::Bucket::refill(double rate, double burst,
                                   std::chrono::steady_clock::time_point now) {
  std::chrono::duration<double> elapsed = now - refilled;
  refilled = now;
  left = std::min(burst, left + std::max(0.0, elapsed.count()) * rate);
  return left >= 1;
}

void ReviewBudgets::forgetSources(std::chrono::steady_clock::time_point now) {
  std::erase_if(sources_, [&](auto& s) {
    Bucket copy = s.second;
    copy.refill(budget_.source_rate, budget_.source_burst, now);
    return copy.left >= budget_.source_burst;
  });
  if (sources_.empty() || sources_.size() < budget_.max_sources) return;
  sources_.erase(std::min_element(
      sources_.begin(), sources_.end(),
      [](const auto& a, const auto& b) { return a.second.refilled < b.second.refilled; }));
}

bool ReviewBudgets::take(const std::string& source, std::chrono::steady_clock::time_point now) {
  auto it = sources_.find(source);
  if (it == sources_.end()) {
    if (sources_.size() >= budget_.max_sources) forgetSources(now);
    it = sources_.emplace(source, Bucket{budget_.source_burst, now}).first;
  }
  bool source_has = it->second.refill(budget_.source_rate, budget_.source_burst, now);
  bool all_have = all_.refill(budget_.review_rate, budget_.review_burst, now);
  if (!source_has || !all_have) return false;
  it->second.left -= 1;
  all_.left -= 1;
  return true;
}

DelegatedAuth::DelegatedAuth(std::shared_ptr<kube::Client> client, std::chrono::seconds allowed_ttl,
                             std::chrono::seconds denied_ttl, ReviewBudget budget)
    : client_(std::move(client)),
      allowed_ttl_(allowed_ttl),
      denied_ttl_(denied_ttl),
      budget_(budget),
      budgets_(budget, std::chrono::steady_clock::now()) {}

void DelegatedAuth::remember(std::string key, Entry entry,
                             std::chrono::steady_clock::time_point now) {
  if (cache_.size() >= budget_.max_cached) {
    std::erase_if(cache_, [&](const auto& e) { return e.second.expires <= now; });
  }
  if (cache_.size() >= budget_.max_cached) {
    cache_.erase(std::min_element(cache_.begin(), cache_.end(), [](const auto& a, const auto& b) {
      return a.second.expires < b.second.expires;
    }));
  }
  cache_[std::move(key)] = std::move(entry);
}

std::optional<http::Response> DelegatedAuth::check(const http::Request& request) {
  auto auth = request.headers.find("authorization");
  std::string token;
  if (auth != request.headers.end() && auth->second.rfind("Bearer ", 0) == 0) {
    token = auth->second.substr(7);
  }
  if (token.empty()) {
    http::Response r = http::Response::text(401, "Unauthorized: a bearer token is required\n");
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  std::string key = sha256Hex(token) + " " + request.path;
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end() && it->second.expires > now) return it->second.answer;
    if (!budgets_.take(sourceAddress(request.peer), now)) {
      // A flood of new tokens must not shut out the scraper it displaces: an allowed answer
      // that expired less than kStaleAllowed ago still stands while the budget is spent.
      if (it != cache_.end() && !it->second.answer && now - it->second.expires < kStaleAllowed) {
        return std::nullopt;
      }
      http::Response r = http::Response::text(
          429, "Too Many Requests: too many new tokens to review; try again\n");
      r.headers.emplace_back("Retry-After", "1");
      return r;
    }
  }
  auto answer = review(token, request.path);
  if (answer && answer->status >= 500) return answer;  // not cached: the next scrape retries
  std::lock_guard lock(mu_);
  remember(std::move(key), {answer, now + (answer ? denied_ttl_ : allowed_ttl_)}, now);
  return answer;
}

std::optional<http::Response> DelegatedAuth::review(const std::string& token,
                                                    const std::string& path) {
  json::Document tr(rapidjson::kObjectType);
  api::Writer(tr, tr.GetAllocator())
      .strAlways("apiVersion", "authentication.k8s.io/v1")
      .strAlways("kind", "TokenReview")
      .object("spec")
      .strAlways("token", token);
  auto reviewed = client_->create(kTokenReviews, "", tr);
  if (!reviewed.ok()) {
    SDRA_LOG_ERROR << "metrics: TokenReview failed: " << reviewed.status().message();
    return http::Response::text(500, "authentication failed: the API server did not answer\n");
  }
  api::Reader status = api::Reader(&*reviewed, "").object("status");
  if (!status.boolean("authenticated")) {
    return http::Response::text(401, "Unauthorized: the token is not valid\n");
  }
  api::Reader user = status.object("user");
  json::Document sar(rapidjson::kObjectType);
  auto& a = sar.GetAllocator();
  api::Writer w(sar, a);
  w.strAlways("apiVersion", "authorization.k8s.io/v1").strAlways("kind", "SubjectAccessReview");
  api::Writer spec = w.object("spec");
  spec.strAlways("user", user.str("username")).str("uid", user.str("uid"));
  spec.strings("groups", user.strings("groups"));
  if (const json::Value* extra = user.raw("extra"); extra != nullptr && extra->IsObject()) {
    spec.value("extra", json::Value(*extra, a));
  }
  spec.object("nonResourceAttributes").strAlways("path", path).strAlways("verb", "get");
  auto decided = client_->create(kSubjectAccessReviews, "", sar);
  if (!decided.ok()) {
    SDRA_LOG_ERROR << "metrics: SubjectAccessReview failed: " << decided.status().message();
    return http::Response::text(500, "authorization failed: the API server did not answer\n");
  }
  if (!api::Reader(&*decided, "").object("status").boolean("allowed")) {
    return http::Response::text(
        403, "Forbidden: user \"" + user.str("username") + "\" may not get " + path + "\n");
  }
  return std::nullopt;
}

void addMetricsFlags(CLI::App& app, MetricsEndpointOptions& options) {
  app.add_option("--metrics-bind-address", options.bind_address,
                 "address for /metrics, \"0\" disables")
      ->capture_default_str();
  app.add_option("--metrics-secure", options.secure,
                 "serve /metrics over HTTPS to callers allowed by TokenReview and "
                 "SubjectAccessReview (false: plain HTTP, no checks)")
      ->capture_default_str();
  app.add_option("--metrics-cert-dir", options.cert_dir,
                 "directory with tls.crt and tls.key for /metrics, served from when they can be "
                 "loaded, self-signed until then (default: self-signed)");
}

Result<std::unique_ptr<http::Server>> startMetricsEndpoint(const MetricsEndpointOptions& options,
                                                           std::shared_ptr<kube::Client> client) {
  if (options.bind_address == "0") return std::unique_ptr<http::Server>();
  if (!options.secure) {
    return http::Server::start(
        {.bind_address = options.bind_address, .name = "metrics"},
        {{"/metrics", [](const http::Request&) { return metricsResponse(); }}});
  }
  auto self_signed = selfSigned();
  if (!self_signed.ok()) return self_signed.status();
  http::TlsFiles tls = *self_signed;
  std::optional<http::TlsFiles> fallback;
  if (options.cert_dir.empty()) {
    SDRA_LOG_INFO << "metrics: serving a self-signed certificate (give --metrics-cert-dir for one "
                     "that scrapers can verify)";
  } else {
    fallback = tls;
    tls = {options.cert_dir + "/tls.crt", options.cert_dir + "/tls.key"};
  }
  auto auth =
      std::make_shared<DelegatedAuth>(std::move(client), options.allowed_ttl, options.denied_ttl);
  return http::Server::start({.bind_address = options.bind_address,
                              .tls = tls,
                              .tls_fallback = fallback,
                              .name = "metrics"},
                             {{"/metrics", [auth](const http::Request& r) {
                                 if (auto denied = auth->check(r)) return *denied;
                                 return metricsResponse();
                               }}});
}

}  // namespace sriovdra::serving
