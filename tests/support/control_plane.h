#pragma once
// A real Kubernetes control plane for integration tests: Debian's etcd 3.4 and kube-apiserver
// v1.20.2 (built by scripts/build-kube-apiserver.sh) on free loopback ports, with TLS from a
// test CA, token and client-certificate authentication, RBAC, and service-account tokens.
// Identities: "admin" (system:masters) and the users in ControlPlaneOptions::users (no
// permissions until a test binds roles to them). The test-only resource.k8s.io/v1 CRDs
// (tests/crds) and the product's CRDs (crds/) are installed at start.
// shared() starts one control plane per test binary and stops it at exit; each test works in
// its own namespace (newNamespace()).
#include <chrono>
#include <csignal>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/process.h"
#include "http/pki.h"
#include "kube/client.h"
#include "support/eventually.h"

namespace sriovdra::testing {

struct TestUser {
  std::string name;
  std::vector<std::string> groups;
};

struct ControlPlaneOptions {
  std::vector<TestUser> users = {{"restricted", {}}, {"user-a", {}}, {"user-b", {}}};
  std::vector<std::string> extra_apiserver_args;
  std::vector<std::string> extra_etcd_args;  // e.g. a small --max-request-bytes
  bool install_test_crds = true;             // tests/crds: resource.k8s.io/v1 and test kinds
  bool install_product_crds = true;          // config/crd/bases: the four kinds this project serves
  bool audit_log = false;  // record every request (Metadata level) for auditEvents()
};

// One request as the API server's audit log recorded it (ResponseComplete stage).
struct AuditEvent {
  std::string user;
  std::string verb;  // get, list, watch, create, update, patch, delete
  std::string resource;
  std::string subresource;
  std::string namespace_;
  std::string name;
  int code = 0;
  bool isWrite() const {
    return verb == "create" || verb == "update" || verb == "patch" || verb == "delete" ||
           verb == "deletecollection";
  }
};

class ControlPlane {
 public:
  static ControlPlane& shared();
  static std::unique_ptr<ControlPlane> start(ControlPlaneOptions options = {});
  ~ControlPlane();
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  const std::string& dir() const { return dir_; }
  std::string server() const;
  int port() const { return port_; }
  const http::Pem& ca() const { return ca_; }
  const std::string& token(const std::string& user) const;

  kube::RestConfig restConfig(const std::string& user = "admin") const;
  std::shared_ptr<kube::Client> client(const std::string& user = "admin") const;
  // Writes a kubeconfig for the user (token auth) and returns its path.
  std::string kubeconfig(const std::string& user = "admin") const;
  // Runs kubectl as `user` against this control plane (60 s at most).
  ProcessOutput kubectl(const std::vector<std::string>& args,
                        const std::string& user = "admin") const;
  // A client certificate for user/groups signed by the API server's client CA.
  http::Pem clientCertificate(const std::string& user,
                              const std::vector<std::string>& groups) const;

  // Stops kube-apiserver (etcd keeps running) and starts it again on the same port.
  void stopApiServer(int sig = SIGTERM);
  void startApiServer();
  // A second kube-apiserver on the same etcd, on its own port; returns its server URL.
  std::string startSecondApiServer();
  void stopSecondApiServer();
  // Compacts etcd's history up to its current revision; returns that revision.
  int64_t compactEtcd();

  // Creates a namespace with a unique name starting with prefix.
  std::string newNamespace(const std::string& prefix = "test");
  // Applies every object of the YAML files (create or replace) as admin; CRDs are waited for.
  // namespace_override: put every namespaced object into this namespace (what `kubectl apply -n`
  // does for objects without one, and kustomize's namespace: does for all).
  void applyYamlFile(const std::string& path, const std::string& namespace_override = "");
  void applyYaml(const std::string& yaml, const std::string& namespace_override = "");
  // Binds the operator's RBAC (config/rbac roles, applied into ns) to a test user, so the
  // operator runs with exactly the permissions it has in production.
  void grantOperatorRbac(const std::string& user, const std::string& ns);
  // The same for the node agent (config/rbac/agent_role.yaml).
  void grantAgentRbac(const std::string& user, const std::string& ns);
  // Binds a (Cluster)Role to a user: a ClusterRoleBinding, or a RoleBinding in ns.
  void bindRole(const std::string& kind, const std::string& role, const std::string& user,
                const std::string& ns);
  // Requests recorded so far (audit_log must be on).
  std::vector<AuditEvent> auditEvents() const;

 private:
  explicit ControlPlane(ControlPlaneOptions options);
  void startEtcd();
  ChildProcess launchApiServer(int port, const std::string& log_name);
  void waitReady(const std::string& server, std::chrono::seconds timeout) const;

  ControlPlaneOptions options_;
  std::string dir_;
  std::string etcd_dir_;
  int port_ = 0;
  int second_port_ = 0;
  int etcd_port_ = 0;
  http::Pem ca_;
  http::Pem client_ca_;
  std::vector<std::pair<std::string, std::string>> tokens_;  // user -> token
  ChildProcess etcd_;
  ChildProcess apiserver_;
  ChildProcess second_apiserver_;
  int namespace_counter_ = 0;
};

// A loopback TCP port that was free a moment ago.
int freePort();

// The project's source directory (for tests/crds, fixtures and ../shared reference data).
std::string sourceDir();

}  // namespace sriovdra::testing
