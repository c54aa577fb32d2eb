#pragma once
// One HTTPS request to a component on loopback, verifying its serving certificate against `ca_pem`:
// the answer, or why the connection failed (kTlsVerification for a certificate the CA did not
// sign).
#include <string>

#include "kube/transport.h"

namespace sriovdra::testing {

// `server_name`: verify the certificate for this name (and send it as SNI) instead of 127.0.0.1.
Result<kube::HttpResponse> httpsGet(int port, const std::string& ca_pem, const std::string& path,
                                    const std::string& bearer_token = "",
                                    const std::string& server_name = "");
// The same with any method and a JSON body.
Result<kube::HttpResponse> httpsRequest(int port, const std::string& ca_pem,
                                        const std::string& method, const std::string& path,
                                        const std::string& body);

}  // namespace sriovdra::testing
