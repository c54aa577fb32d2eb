#include "support/https_get.h"

namespace sriovdra::testing {

namespace {

Result<kube::HttpResponse> send(int port, const std::string& ca_pem, const kube::HttpRequest& req,
                                const std::string& server_name = "") {
  auto t = kube::Transport::create("https://127.0.0.1:" + std::to_string(port),
                                   kube::TlsOptions{.ca_pem = ca_pem, .server_name = server_name});
  if (!t.ok()) return t.status();
  return (*t)->send(req, std::chrono::seconds(10));
}

}  // namespace

Result<kube::HttpResponse> httpsGet(int port, const std::string& ca_pem, const std::string& path,
                                    const std::string& bearer_token,
                                    const std::string& server_name) {
  kube::HttpRequest req{"GET", path, "", "", "*/*", {}};
  if (!bearer_token.empty()) req.headers.emplace_back("Authorization", "Bearer " + bearer_token);
  return send(port, ca_pem, req, server_name);
}

Result<kube::HttpResponse> httpsRequest(int port, const std::string& ca_pem,
                                        const std::string& method, const std::string& path,
                                        const std::string& body) {
  return send(port, ca_pem, {method, path, body, "application/json", "*/*", {}});
}

}  // namespace sriovdra::testing
