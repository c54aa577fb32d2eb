#pragma once
// One HTTPS GET to a component on loopback, verifying its serving certificate against `ca_pem`:
// the answer, or why the connection failed (kTlsVerification for a certificate the CA did not
// sign).
#include <string>

#include "kube/transport.h"

namespace sriovdra::testing {

Result<kube::HttpResponse> httpsGet(int port, const std::string& ca_pem, const std::string& path,
                                    const std::string& bearer_token = "");

}  // namespace sriovdra::testing
