#pragma once
// One HTTPS request to a component on loopback, verifying its serving certificate against `ca_pem`:
// the answer, or why the connection failed (kTlsVerification for a certificate the CA did not
// sign).
#include <string>

#include "kube/transport.h"

namespace sriovdra::testing {

Result<kube::HttpResponse> httpsGet(int port, const std::string& ca_pem, const std::string& path,
                                    const std::string& bearer_token = "");
// The same with any method and a JSON body.
Result<kube::HttpResponse> httpsRequest(int port, const std::string& ca_pem,
                                        const std::string& method, const std::string& path,
                                        const std::string& body);

}  // namespace sriovdra::testing
