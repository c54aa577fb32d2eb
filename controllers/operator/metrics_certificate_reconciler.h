#pragma once
// The certificates scrapers verify /metrics with (on by default, --metrics-certificates): a CA
// the operator makes and keeps in the Secret kMetricsCaSecret of its namespace (tls.crt, tls.key;
// read by nobody else), and two serving certificates signed by it, each for one metrics Service
// (<service>.<namespace>.svc, and .cluster.local): the operator's in kMetricsCertSecret, the
// agents' in kAgentMetricsCertSecret (tls.crt, tls.key, and ca.crt: the CA's certificate, which
// the ServiceMonitors name with the Service's DNS name as serverName). The operator's Deployment
// mounts the first, the agents' DaemonSet the second (optional) as --metrics-cert-dir; until it
// is there they serve a self-signed certificate (metrics_endpoint.h). One key, kKey, on the
// leader:
//   the CA is made when its Secret is missing or does not hold a CA certificate with its key,
//   or within kRenewBefore of its end (10 years);
//   each serving certificate is made when it is missing, not signed by the CA, does not name
//   exactly its Service's DNS names, or is within kRenewBefore of its end (1 year), or ca.crt
//   differs;
//   both Secrets are written by server-side apply, and looked at again at the next renewal or
//   after kRecheck, whichever comes first (a deleted Secret comes back then, or at a restart).
// One key is shared by every agent: whoever is root on a node can read it, as it can read that
// agent's token; it lets a node serve the agents' metrics name, nothing else (serverAuth only,
// not the operator's name).
// Thread-safety: reconcile() from one worker.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "http/pki.h"
#include "kube/client.h"
#include "kube/controller.h"
#include "operator/options.h"

namespace sriovdra::op {

inline constexpr const char* kMetricsCaSecret = "sriov-dra-metrics-ca";
inline constexpr const char* kMetricsCertSecret = "sriov-dra-metrics-cert";
inline constexpr const char* kAgentMetricsCertSecret = "sriov-dra-agent-metrics-cert";
inline constexpr const char* kOperatorMetricsService = "sriov-dra-operator-metrics";
inline constexpr const char* kAgentMetricsService = "sriov-dra-agent-metrics";

// The DNS names a serving certificate carries, for the metrics Service `service` of `ns`.
std::vector<std::string> metricsCertificateNames(const std::string& service, const std::string& ns);

struct StoredServingCert {
  http::Pem pair;
  std::string ca_cert;  // the Secret's ca.crt
};

struct MetricsCertificatePlan {
  bool new_ca = false;
  bool new_cert = false;
  std::string why;                                 // for the log, "" when nothing is made
  std::chrono::system_clock::time_point renew_at;  // when what stays must be looked at again
};

inline constexpr std::chrono::hours kCaValidity{24 * 3650};
inline constexpr std::chrono::hours kCertValidity{24 * 365};
inline constexpr std::chrono::hours kRenewBefore{24 * 30};
inline constexpr std::chrono::hours kRecheck{1};

// What to make for one serving certificate (pure: parses certificates, no I/O), given what the
// Secrets hold (nullopt: the Secret or one of its keys is missing); `secret` names it in `why`.
MetricsCertificatePlan planMetricsCertificates(const std::optional<http::Pem>& ca,
                                               const std::optional<StoredServingCert>& cert,
                                               const std::vector<std::string>& names,
                                               const std::string& secret,
                                               std::chrono::system_clock::time_point now);

class MetricsCertificateReconciler {
 public:
  static constexpr const char* kKey = "metrics-certificates";
  MetricsCertificateReconciler(kube::Client& client, const OperatorOptions& options)
      : client_(client), options_(options) {}
  Result<kube::ReconcileResult> reconcile(const std::string& key);

 private:
  // The Secret's `keys`, decoded; nullopt when it or one of them is missing. An error only when
  // it could not be read.
  Result<std::optional<std::vector<std::string>>> readSecret(const char* name,
                                                             const std::vector<const char*>& keys);
  Status writeSecret(const char* name,
                     const std::vector<std::pair<const char*, std::string>>& data);

  kube::Client& client_;
  const OperatorOptions& options_;
};

}  // namespace sriovdra::op
