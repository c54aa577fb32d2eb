#pragma once
// A small PKI: a CA and certificates signed by it (ECDSA P-256, SHA-256), as PEM strings: the
// self-signed serving certificate of /metrics when none is given, and in tests the API server's
// serving certificate, client-certificate users and webhook servers.
#include <string>
#include <vector>

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
};

Pem makeCa(const std::string& common_name);
Pem makeCert(const Pem& ca, const CertSpec& spec);
}  // namespace sriovdra::http
