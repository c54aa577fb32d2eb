#pragma once
// A small PKI: a CA and certificates signed by it (ECDSA P-256, SHA-256), as PEM strings: the
// self-signed serving certificate of /metrics when none is given, the metrics CA and serving
// certificate the operator keeps (operator/metrics_certificate_reconciler.h), and in tests the API
// server's serving certificate, client-certificate users and webhook servers. makeCa and makeCert
// throw std::runtime_error only when OpenSSL fails (or `ca` is not a PEM pair); inspectCert never
// throws.
#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace sriovdra::http {

struct Pem {
  std::string cert;
  std::string key;
};

struct CertSpec {
  std::string common_name;
  std::vector<std::string> organizations;  // Kubernetes groups for client certificates
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  bool server = true;
  bool client = true;
  std::chrono::hours validity{24 * 365};  // from an hour ago, for clocks a little behind
};

Pem makeCa(const std::string& common_name,
           std::chrono::hours validity = std::chrono::hours(24 * 365));
Pem makeCert(const Pem& ca, const CertSpec& spec);

struct CertInfo {
  std::chrono::system_clock::time_point not_after;
  std::vector<std::string> dns_names;  // subjectAltName DNS entries, in order
};
// What `pair.cert` (the first certificate of the PEM) is, once it is known to be signed by the CA
// certificate `ca_cert` and to go with the key `pair.key`; an error (kInvalidArgument) naming
// what does not hold. With ca_cert == pair.cert, a self-signed certificate (a CA) is checked.
Result<CertInfo> inspectCert(const Pem& pair, const std::string& ca_cert);
}  // namespace sriovdra::http
