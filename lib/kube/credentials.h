#pragma once
// Credentials for requests: a static bearer token, a token file that is re-read when it changes
// (service-account token rotation; checked on every request, re-read at least once a minute),
// or an exec credential plugin (client.authentication.k8s.io ExecCredential), whose result is
// cached until its expirationTimestamp and discarded after a 401.
// Thread-safe. Tokens are never logged.
#include <chrono>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "kube/config.h"

namespace sriovdra::kube {

struct Credentials {
  std::string token;            // "" = no Authorization header
  std::string client_cert_pem;  // from an exec plugin; "" = keep the transport's certificate
  std::string client_key_pem;
};

class CredentialProvider {
 public:
  virtual ~CredentialProvider() = default;
  virtual Result<Credentials> get() = 0;
  // Called after a 401. Returns true if fresh credentials may differ, so one retry makes sense.
  virtual bool refreshAfterUnauthorized() = 0;
};

// nullptr when the config carries no credentials (client certificates live in the transport).
std::unique_ptr<CredentialProvider> makeCredentialProvider(const RestConfig& config,
                                                           Clock& clock = realClock());

}  // namespace sriovdra::kube
