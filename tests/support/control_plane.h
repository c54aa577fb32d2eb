#pragma once
// A real Kubernetes control plane for integration tests: etcd, kube-apiserver and, when asked,
// kube-controller-manager and kube-scheduler of the release pinned in tools/kubernetes (built by
// scripts/build-kubernetes.sh), on free loopback ports, with TLS from a test CA, token and
// client-certificate authentication, RBAC, and service-account tokens. resource.k8s.io/v1 is
// served by the API server itself.
// Identities: "admin" (system:masters), the users in ControlPlaneOptions::users (no permissions
// until a test binds roles to them), and system:kube-controller-manager / system:kube-scheduler
// (client certificates; the roles the API server bootstraps for them). The product's CRDs
// (config/crd/bases) are installed at start.
// Nodes have no kubelet: createNode() makes them schedulable (allocatable cpu, memory, pods) and
// the controller-manager runs without its node-lifecycle controller, so they never turn NotReady.
// shared() starts one control plane per test binary and stops it at exit; each test works in
// its own namespace (newNamespace()).
#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/process.h"
#include "base/time.h"
#include "http/pki.h"
#include "kube/client.h"
#include "support/eventually.h"
#include "support/ports.h"

namespace sriovdra::testing {

struct TestUser {
  std::string name;
  std::vector<std::string> groups;
};

struct ControlPlaneOptions {
  std::vector<TestUser> users = {{"restricted", {}}, {"user-a", {}}, {"user-b", {}}};
  std::vector<std::string> extra_apiserver_args;
  std::vector<std::string> extra_etcd_args;   // e.g. a small --max-request-bytes
  bool install_product_crds = true;           // config/crd/bases: the kinds this project serves
  std::vector<std::string> extra_yaml_files;  // applied at start, e.g. a test-only CRD
  // kube-controller-manager (resourceclaim, garbage collector, namespace, ... controllers).
  bool controller_manager = false;
  bool scheduler = false;  // kube-scheduler, which allocates ResourceClaims and binds pods
  bool audit_log = false;  // record every request (Metadata level) for auditEvents()
  // Real kubelets join (support/real_node.h): kube-apiserver listens on every address (pods reach
  // it as the kubernetes Service, 10.0.0.1:443, which its certificate names with this machine's
  // addresses), authorizes Node then RBAC with NodeRestriction and the ServiceAccount admission
  // plugin on, and reaches kubelets with a client certificate by their host names.
  bool kubelets = false;
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
  WallTime received;   // requestReceivedTimestamp
  WallTime completed;  // stageTimestamp of ResponseComplete
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
  // A directory in memory (in /dev/shm when it is writable, else below dir()), removed with the
  // control plane: for fixture sysfs trees, which the real kernel keeps in memory too.
  const std::string& memoryDir() const { return memory_dir_; }
  std::string server() const;
  int port() const { return port_; }
  const http::Pem& ca() const { return ca_; }
  const http::Pem& clientCa() const { return client_ca_; }
  const std::string& token(const std::string& user) const;

  kube::RestConfig restConfig(const std::string& user = "admin") const;
  std::shared_ptr<kube::Client> client(const std::string& user = "admin") const;
  // Writes a kubeconfig for the user (token auth) and returns its path.
  std::string kubeconfig(const std::string& user = "admin") const;
  // Creates the ServiceAccount ns/name if needed and writes a kubeconfig with a token for it
  // (TokenRequest, 24 h). With `node`, the token is bound to that Node, as the token of a
  // DaemonSet pod is bound to its pod and node: the API server then knows the caller's node
  // (user extra authentication.kubernetes.io/node-name).
  std::string serviceAccountKubeconfig(const std::string& ns, const std::string& name,
                                       const std::string& node = "") const;
  // Runs kubectl as `user` against this control plane; throws when it outlives the timeout.
  ProcessOutput kubectl(const std::vector<std::string>& args, const std::string& user = "admin",
                        std::chrono::seconds timeout = std::chrono::seconds(60)) const;
  // A client certificate for user/groups signed by the API server's client CA.
  http::Pem clientCertificate(const std::string& user,
                              const std::vector<std::string>& groups) const;

  // Stops kube-apiserver (etcd keeps running) and starts it again on the same port.
  void stopApiServer(int sig = SIGTERM);
  void startApiServer();
  // Freezes kube-apiserver (SIGSTOP): connections stay open and nothing answers, as when it
  // hangs. The guard thaws it (SIGCONT) when it goes out of scope, whatever happened.
  class FrozenApiServer {
   public:
    explicit FrozenApiServer(pid_t pid);
    ~FrozenApiServer();
    FrozenApiServer(const FrozenApiServer&) = delete;
    FrozenApiServer& operator=(const FrozenApiServer&) = delete;

   private:
    pid_t pid_;
  };
  // The processes, for measurements (CPU time, memory) by benchmarks.
  pid_t apiServerPid() const { return apiserver_.pid(); }
  pid_t etcdPid() const { return etcd_.pid(); }
  int etcdPort() const { return etcd_port_; }  // plain HTTP on 127.0.0.1: /metrics, /health
  [[nodiscard]] FrozenApiServer freezeApiServer() const {
    return FrozenApiServer(apiserver_.pid());
  }
  // A second kube-apiserver on the same etcd, on its own port; returns its server URL.
  std::string startSecondApiServer();
  void stopSecondApiServer();
  // Compacts etcd's history up to its current revision; returns that revision.
  int64_t compactEtcd();

  // Creates a kubelet-less Node the scheduler can place pods on (64 cpu, 512Gi, 110 pods).
  void createNode(const std::string& name, const std::map<std::string, std::string>& labels);
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
  // What config/agent-daemonset-rbac adds for an operator run with --agent-daemonset.
  void grantOperatorDaemonSetRbac(const std::string& user, const std::string& ns);
  // The same for the node agent (config/rbac/agent_role.yaml), bound to the ServiceAccount
  // ns/sriov-dra-agent as in config/rbac/agent_role_binding.yaml; returns its user name.
  std::string grantAgentRbac(const std::string& ns);
  // Binds a (Cluster)Role to a user: a ClusterRoleBinding, or a RoleBinding in ns. A user named
  // system:serviceaccount:<ns>:<name> is bound as that ServiceAccount.
  void bindRole(const std::string& kind, const std::string& role, const std::string& user,
                const std::string& ns);
  // Requests recorded so far (audit_log must be on).
  std::vector<AuditEvent> auditEvents() const;
  // Those recorded after `offset` bytes of the log, which is moved past them: a poll of what is
  // new that does not read the whole log again.
  std::vector<AuditEvent> auditEventsFrom(size_t& offset) const;

 private:
  explicit ControlPlane(ControlPlaneOptions options);
  void startEtcd();
  ChildProcess launchApiServer(int port, const std::string& log_name);
  // kube-controller-manager or kube-scheduler as its system:<name> identity.
  ChildProcess launchComponent(const std::string& name, std::vector<std::string> args);
  // A kubeconfig that authenticates with a client certificate from the client CA.
  std::string certificateKubeconfig(const std::string& user);
  void waitReady(const std::string& server, std::chrono::seconds timeout) const;

  ControlPlaneOptions options_;
  std::string dir_;
  std::string etcd_dir_;
  std::string memory_dir_;
  int port_ = 0;
  int second_port_ = 0;
  int etcd_port_ = 0;
  http::Pem ca_;
  http::Pem client_ca_;
  std::vector<std::pair<std::string, std::string>> tokens_;  // user -> token
  ChildProcess etcd_;
  ChildProcess apiserver_;
  ChildProcess second_apiserver_;
  ChildProcess controller_manager_;
  ChildProcess scheduler_;
  int namespace_counter_ = 0;
};

// The project's source directory (for fixtures, config/ and ../shared reference data).
std::string sourceDir();

// The path of an upstream program (etcd, kube-apiserver, kubectl, ...) of the pinned release:
// $SRIOV_DRA_KUBERNETES/bin/<name>, or the cache directory scripts/build-kubernetes.sh fills.
std::string kubernetesBinary(const std::string& name);

}  // namespace sriovdra::testing
