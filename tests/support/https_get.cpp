#include "support/https_get.h"

namespace sriovdra::testing {

Result<kube::HttpResponse> httpsGet(int port, const std::string& ca_pem, const std::string& path,
                                    const std::string& bearer_token) {
  auto t = kube::Transport::create("https://127.0.0.1:" + std::to_string(port),
                                   kube::TlsOptions{.ca_pem = ca_pem});
  if (!t.ok()) return t.status();
  kube::HttpRequest req{"GET", path, "", "", "*/*", {}};
  if (!bearer_token.empty()) req.headers.emplace_back("Authorization", "Bearer " + bearer_token);
  return (*t)->send(req, std::chrono::seconds(10));
}

}  // namespace sriovdra::testing
