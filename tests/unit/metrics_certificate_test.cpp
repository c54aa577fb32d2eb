// planMetricsCertificates: when the operator makes a new metrics CA or serving certificate.
// Table-driven over real certificates (made here with the same PKI), the clock given.
#include <catch2/catch.hpp>

#include "operator/metrics_certificate_reconciler.h"

using namespace sriovdra;
using namespace std::chrono_literals;

TEST_CASE("metrics certificates: what is made, and when it is looked at again",
          "[operator][metrics][unit]") {
  const auto names = op::metricsCertificateNames(op::kAgentMetricsService, "sriov-dra");
  REQUIRE(names == std::vector<std::string>{"sriov-dra-agent-metrics.sriov-dra.svc",
                                            "sriov-dra-agent-metrics.sriov-dra.svc.cluster.local"});
  const auto ca = http::makeCa("sriov-dra-metrics-ca", op::kCaValidity);
  const auto other_ca = http::makeCa("someone-else", op::kCaValidity);
  auto serving = [&](const http::Pem& by, std::vector<std::string> dns, std::chrono::hours valid) {
    return http::makeCert(
        by, {.common_name = dns.front(), .dns_names = dns, .client = false, .validity = valid});
  };
  const auto good = serving(ca, names, op::kCertValidity);
  const auto now = std::chrono::system_clock::now();

  struct Case {
    const char* name;
    std::optional<http::Pem> ca;
    std::optional<op::StoredServingCert> cert;
    bool new_ca, new_cert;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"nothing yet", std::nullopt, std::nullopt, true, true, "is missing"},
      {"a CA Secret that holds no CA", http::Pem{"garbage", ca.key}, std::nullopt, true, true,
       "not a PEM certificate"},
      {"a CA whose key is another's", http::Pem{ca.cert, other_ca.key}, std::nullopt, true, true,
       "the key does not go with the certificate"},
      {"a CA that ends within 30 days", http::makeCa("old", 24h * 20), std::nullopt, true, true,
       "the CA ends within 30 days"},
      {"the serving Secret is missing", ca, std::nullopt, false, true,
       "sriov-dra-agent-metrics-cert is missing"},
      {"signed by another CA", ca,
       op::StoredServingCert{serving(other_ca, names, 24h * 365), ca.cert}, false, true,
       "not signed by the CA"},
      {"for the operator's Service", ca,
       op::StoredServingCert{
           serving(ca, op::metricsCertificateNames(op::kOperatorMetricsService, "sriov-dra"),
                   24h * 365),
           ca.cert},
       false, true, "names another Service"},
      {"ending within 30 days", ca, op::StoredServingCert{serving(ca, names, 24h * 29), ca.cert},
       false, true, "ends within 30 days"},
      {"ca.crt of another CA", ca, op::StoredServingCert{good, other_ca.cert}, false, true,
       "ca.crt is not the CA's certificate"},
      {"a key that does not go with it", ca,
       op::StoredServingCert{{good.cert, serving(ca, names, 24h).key}, ca.cert}, false, true,
       "the key does not go with the certificate"},
      {"all in order", ca, op::StoredServingCert{good, ca.cert}, false, false, ""},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto plan = op::planMetricsCertificates(c.ca, c.cert, names, op::kAgentMetricsCertSecret, now);
    CHECK(plan.new_ca == c.new_ca);
    CHECK(plan.new_cert == c.new_cert);
    CHECK_THAT(plan.why, Catch::Contains(c.why));
    if (!plan.new_cert) {
      // Looked at again 30 days before the certificate ends (a year from when it was made).
      auto expected = now + op::kCertValidity - op::kRenewBefore;
      CHECK(plan.renew_at > expected - 1min);
      CHECK(plan.renew_at < expected + 1min);
    }
  }
}
