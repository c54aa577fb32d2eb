#pragma once
// How a client verifies the API server and proves who it is: what a kubeconfig or the in-cluster
// configuration says (kube/config.h), and what the transport applies (kube/transport.h).
#include <string>

namespace sriovdra::kube {

struct TlsOptions {
  std::string ca_pem;           // empty: the system trust store
  std::string client_cert_pem;  // client certificate chain (optional)
  std::string client_key_pem;   // its private key
  std::string server_name;      // verify and send SNI for this name instead of the URL's host
  bool insecure_skip_verify = false;
};

}  // namespace sriovdra::kube
