// Credentials against the real API server: token files that rotate, client certificates from
// kubeconfig data, and exec credential plugins.
#include <filesystem>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "base/base64.h"
#include "base/files.h"
#include "base/time.h"
#include "support/control_plane.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::ControlPlane;

namespace {

void write(const std::string& path, const std::string& content, int mode = 0600) {
  REQUIRE(writeFileAtomic(path, content, mode).isOk());
}

Code listCode(kube::Client& client, const std::string& ns) {
  auto got = client.list(kube::resources::kConfigMaps, ns);
  return got.ok() ? Code::kOk : got.status().code();
}

}  // namespace

TEST_CASE("a rotated token file is used by the next request", "[kube][auth][integration]") {
  auto& cp = ControlPlane::shared();
  std::string ns = cp.newNamespace("token");
  std::string path = cp.dir() + "/rotating-token";
  write(path, cp.token("restricted") + "\n");
  auto cfg = cp.restConfig();
  cfg.bearer_token.clear();
  cfg.bearer_token_file = path;
  auto client = kube::Client::create(cfg);
  REQUIRE(client.ok());

  CHECK(listCode(**client, ns) == Code::kForbidden);
  write(path, cp.token("admin"));
  CHECK(listCode(**client, ns) == Code::kOk);
  write(path, "revoked-token");
  CHECK(listCode(**client, ns) == Code::kUnauthorized);
}

TEST_CASE("kubeconfig with embedded CA and client certificate data", "[kube][auth][integration]") {
  auto& cp = ControlPlane::shared();
  std::string ns = cp.newNamespace("certs");
  auto cert = cp.clientCertificate("cert-admin", {"system:masters"});
  std::string path = cp.dir() + "/kubeconfig-cert";
  write(path,
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters:\n- name: k\n  cluster:\n    server: " +
            cp.server() + "\n    certificate-authority-data: " + base64Encode(cp.ca().cert) +
            "\ncontexts:\n- name: c\n  context: {cluster: k, user: u, namespace: " + ns +
            "}\nusers:\n- name: u\n  user:\n    client-certificate-data: " +
            base64Encode(cert.cert) + "\n    client-key-data: " + base64Encode(cert.key) + "\n");
  auto cfg = kube::loadConfig({.path = path});
  REQUIRE(cfg.ok());
  CHECK(cfg->default_namespace == ns);
  auto client = kube::Client::create(*cfg);
  REQUIRE(client.ok());
  CHECK(listCode(**client, ns) == Code::kOk);

  SECTION("a client certificate of a user without permissions is authenticated, not authorised") {
    auto plain = cp.clientCertificate("cert-nobody", {});
    auto c2 = *cfg;
    c2.tls.client_cert_pem = plain.cert;
    c2.tls.client_key_pem = plain.key;
    auto got = (*kube::Client::create(c2))->list(kube::resources::kConfigMaps, ns);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == Code::kForbidden);
    CHECK(got.status().message().find("\"cert-nobody\"") != std::string::npos);
  }
}

TEST_CASE("exec credential plugins are cached until expiry and re-run after a 401",
          "[kube][auth][integration]") {
  auto& cp = ControlPlane::shared();
  std::string ns = cp.newNamespace("exec");
  std::string dir = cp.dir() + "/exec-" + ns;
  std::filesystem::create_directories(dir);
  // The plugin counts its runs, records the exec info it got and prints the prepared credential.
  write(dir + "/plugin",
        "#!/bin/sh\necho run >> \"$COUNT_FILE\"\n"
        "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$INFO_FILE\"\n"
        "cat \"$CRED_FILE\"\n",
        0755);
  auto credential = [&](const std::string& token, WallTime expiry) {
    write(dir + "/cred.json",
          R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
          R"("status":{"token":")" +
              token + R"(","expirationTimestamp":")" + formatRfc3339(expiry) + R"("}})");
  };
  auto runs = [&] {
    auto text = readFile(dir + "/count");
    return text.ok() ? std::count(text->begin(), text->end(), '\n') : 0;
  };
  std::string kubeconfig = dir + "/kubeconfig";
  write(kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters:\n- name: k\n  cluster:\n    server: " +
            cp.server() + "\n    certificate-authority: " + cp.dir() +
            "/ca.crt\n"
            "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
            "users:\n- name: u\n  user:\n    exec:\n"
            "      apiVersion: client.authentication.k8s.io/v1\n"
            "      command: ./plugin\n      interactiveMode: Never\n"
            "      provideClusterInfo: true\n      env:\n"
            "      - {name: COUNT_FILE, value: " +
            dir +
            "/count}\n"
            "      - {name: INFO_FILE, value: " +
            dir +
            "/info}\n"
            "      - {name: CRED_FILE, value: " +
            dir + "/cred.json}\n");
  auto now = std::chrono::system_clock::now();
  credential(cp.token("admin"), now + 1h);
  auto cfg = kube::loadConfig({.path = kubeconfig});
  REQUIRE(cfg.ok());
  auto client = *kube::Client::create(*cfg);

  CHECK(listCode(*client, ns) == Code::kOk);
  CHECK(listCode(*client, ns) == Code::kOk);
  CHECK(runs() == 1);
  auto info = json::parse(*readFile(dir + "/info"));
  REQUIRE(info.ok());
  CHECK(json::stringOr(*info, "kind") == "ExecCredential");
  CHECK(json::stringOr(*json::at(*info, {"spec", "cluster"}), "server") == cp.server());
  CHECK(json::boolOr(*json::at(*info, {"spec"}), "interactive", true) == false);

  SECTION("an expired credential is fetched again for every request") {
    credential(cp.token("admin"), now - 1min);
    auto expiring = *kube::Client::create(*cfg);
    int before = static_cast<int>(runs());
    CHECK(listCode(*expiring, ns) == Code::kOk);
    CHECK(listCode(*expiring, ns) == Code::kOk);
    CHECK(runs() == before + 2);
  }
  SECTION("a 401 re-runs the plugin once and the request succeeds with the new token") {
    credential("stale-token", now + 1h);
    auto fresh = *kube::Client::create(*cfg);
    CHECK(listCode(*fresh, ns) == Code::kUnauthorized);
    int before = static_cast<int>(runs());
    credential(cp.token("admin"), now + 1h);
    CHECK(listCode(*fresh, ns) == Code::kOk);
    CHECK(runs() == before + 1);
  }
}
