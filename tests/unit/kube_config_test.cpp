#include <cstdlib>

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "base/files.h"
#include "kube/config.h"
#include "support/temp_dir.h"
using namespace sriovdra;

namespace {

const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example.com:6443
    certificate-authority: certs/ca.pem
    tls-server-name: api.internal
- name: prod-cluster
  cluster:
    server: https://10.1.2.3
    certificate-authority-data: Q0EtREFUQQ==
contexts:
- name: dev
  context: {cluster: dev-cluster, user: dev-user, namespace: sriov}
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
users:
- name: dev-user
  user:
    token: dev-token
- name: prod-user
  user:
    tokenFile: tokens/prod
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
)";

}  // namespace

TEST_CASE("kubeconfig: current context, relative paths and data fields", "[config][unit]") {
  testing::TempDir dir;
  dir.write("certs/ca.pem", "CA-FROM-FILE");
  std::string path = dir.write("kubeconfig", kTwoContexts);

  auto dev = kube::loadConfig({.path = path});
  REQUIRE(dev.ok());
  CHECK(dev->server == "https://dev.example.com:6443");
  CHECK(dev->tls.ca_pem == "CA-FROM-FILE");
  CHECK(dev->tls.server_name == "api.internal");
  CHECK(dev->bearer_token == "dev-token");
  CHECK(dev->default_namespace == "sriov");
  CHECK(dev->description.find("context dev") != std::string::npos);

  auto prod = kube::loadConfig({.path = path, .context = "prod"});
  REQUIRE(prod.ok());
  CHECK(prod->server == "https://10.1.2.3");
  CHECK(prod->tls.ca_pem == "CA-DATA");
  CHECK(prod->tls.client_cert_pem == "CERT");
  CHECK(prod->tls.client_key_pem == "KEY");
  CHECK(prod->bearer_token_file == dir.path() + "/tokens/prod");
}

TEST_CASE("kubeconfig problems are errors that say what to fix", "[config][unit]") {
  testing::TempDir dir;
  struct Row {
    std::string name;
    std::string text;
    std::string context;
    std::string expected;
  };
  std::string base =
      "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
      "clusters:\n- name: k\n  cluster:\n    server: https://h\n";
  std::vector<Row> rows = {
      {"missing context", base + "contexts: []\n", "", "has no context named \"c\""},
      {"unknown --context", base, "nope", "has no context named \"nope\""},
      {"missing cluster", base + "contexts:\n- name: c\n  context: {cluster: x}\n", "",
       "refers to a missing cluster \"x\""},
      {"auth-provider",
       base + "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
              "users:\n- name: u\n  user:\n    auth-provider: {name: gcp}\n",
       "", "use an exec plugin"},
      {"proxy-url",
       "apiVersion: v1\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: "
       "https://h\n    proxy-url: http://proxy\ncontexts:\n- name: c\n  context: {cluster: k}\n",
       "", "proxy-url, which is not supported"},
      {"CA and insecure",
       "apiVersion: v1\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: "
       "https://h\n    insecure-skip-tls-verify: true\n    certificate-authority-data: "
       "QQ==\ncontexts:\n- name: c\n  context: {cluster: k}\n",
       "", "remove insecure-skip-tls-verify"},
      {"bad base64",
       "apiVersion: v1\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: "
       "https://h\n    certificate-authority-data: '@@@'\ncontexts:\n- name: c\n  context: "
       "{cluster: k}\n",
       "", "certificate-authority-data of cluster \"k\" is not valid base64"},
      {"CA file missing",
       "apiVersion: v1\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: "
       "https://h\n    certificate-authority: nope.pem\ncontexts:\n- name: c\n  context: "
       "{cluster: k}\n",
       "", "nope.pem"},
      {"not YAML", "a: [", "", "is not valid YAML"},
      {"a malformed boolean",
       "apiVersion: v1\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: "
       "https://h\n    insecure-skip-tls-verify: ture\ncontexts:\n- name: c\n  context: "
       "{cluster: k}\n",
       "", "cluster \"k\": insecure-skip-tls-verify must be true or false, not \"ture\""},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    std::string path = dir.write(row.name, row.text);
    auto cfg = kube::loadConfig({.path = path, .context = row.context});
    REQUIRE_FALSE(cfg.ok());
    CHECK(cfg.status().code() == Code::kInvalidArgument);
    CHECK_THAT(cfg.status().message(), Catch::Contains(row.expected));
  }
}

TEST_CASE("$KUBECONFIG lists are merged with the first file winning", "[config][unit]") {
  testing::TempDir dir;
  std::string first = dir.write("first",
                                "apiVersion: v1\ncurrent-context: a\n"
                                "clusters:\n- name: k\n  cluster: {server: https://first}\n"
                                "contexts:\n- name: a\n  context: {cluster: k}\n");
  std::string second = dir.write("second",
                                 "apiVersion: v1\ncurrent-context: b\n"
                                 "clusters:\n- name: k\n  cluster: {server: https://second}\n"
                                 "- name: only-here\n  cluster: {server: https://third}\n"
                                 "contexts:\n- name: b\n  context: {cluster: only-here}\n");
  ::setenv("KUBECONFIG", (first + ":" + dir.path() + "/missing:" + second).c_str(), 1);
  auto cfg = kube::loadConfig({});
  auto other = kube::loadConfig({.context = "b"});
  ::unsetenv("KUBECONFIG");
  REQUIRE(cfg.ok());
  CHECK(cfg->server == "https://first");
  REQUIRE(other.ok());
  CHECK(other->server == "https://third");
}

TEST_CASE("in-cluster configuration comes from the service account files", "[config][unit]") {
  testing::TempDir dir;
  dir.write("token", "sa-token\n");
  dir.write("ca.crt", "CLUSTER-CA");
  dir.write("namespace", "sriov-network-operator\n");
  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto cfg = kube::inClusterConfig(dir.path());
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  REQUIRE(cfg.ok());
  CHECK(cfg->server == "https://[fd00::1]:443");
  CHECK(cfg->tls.ca_pem == "CLUSTER-CA");
  CHECK(cfg->bearer_token_file == dir.path() + "/token");
  CHECK(cfg->default_namespace == "sriov-network-operator");

  auto outside = kube::inClusterConfig(dir.path());
  REQUIRE_FALSE(outside.ok());
  CHECK(outside.status().code() == Code::kNotFound);
}
