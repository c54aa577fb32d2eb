#include "support/control_plane.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <regex>
#include <thread>

#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/files.h"
#include "base/log.h"
#include "base/yaml.h"
#include "support/discovery.h"
#include "support/poll.h"

namespace sriovdra::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

[[noreturn]] void fatal(const std::string& what) { throw std::runtime_error(what); }

// The kubernetes Service's cluster IP (the first of --service-cluster-ip-range), also the API
// server's advertised address.
constexpr const char* kServiceAddress = "10.0.0.1";

std::string randomHex(size_t bytes) {
  static std::mutex mu;
  static std::mt19937_64 rng(std::random_device{}());
  std::lock_guard lock(mu);
  std::string out;
  const char* hex = "0123456789abcdef";
  for (size_t i = 0; i < bytes; ++i) {
    auto b = static_cast<unsigned>(rng() & 0xff);
    out += hex[b >> 4];
    out += hex[b & 0xf];
  }
  return out;
}

}  // namespace

namespace {

// The public half of a PEM private key ("PUBLIC KEY"), which kube-apiserver's
// --service-account-key-file reads.
std::string publicKeyOf(const std::string& private_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> in(
      BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size())), BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  if (!key || PEM_write_bio_PUBKEY(out.get(), key.get()) != 1) fatal("service-account key");
  char* data = nullptr;
  long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

void writeFile(const std::string& path, const std::string& content) {
  Status st = writeFileAtomic(path, content, 0600);
  if (!st.isOk()) fatal(st.toString());
}

std::string makeTempDir(const std::string& base, const std::string& prefix) {
  std::string tmpl = base + "/" + prefix + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) fatal("mkdtemp " + tmpl + " failed");
  return tmpl;
}

}  // namespace

std::string sourceDir() { return SRIOV_DRA_SOURCE_DIR; }

std::string kubernetesBinary(const std::string& name) {
  std::string dir;
  if (const char* env = std::getenv("SRIOV_DRA_KUBERNETES"); env != nullptr && *env != '\0') {
    dir = env;
  } else {
    // The same place scripts/build-kubernetes.sh builds into: the release pinned in go.mod.
    std::string cache;
    if (const char* c = std::getenv("SRIOV_DRA_CACHE"); c != nullptr && *c != '\0') {
      cache = c;
    } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
      cache = std::string(x) + "/sriov-dra";
    } else {
      const char* home = std::getenv("HOME");
      cache = std::string(home != nullptr ? home : "/root") + "/.cache/sriov-dra";
    }
    auto go_mod = readFile(sourceDir() + "/tools/kubernetes/go.mod");
    if (!go_mod.ok()) fatal(go_mod.status().toString());
    static const std::regex kPin(R"(\n\s*k8s\.io/kubernetes (v1\.[0-9]+\.[0-9]+))");
    std::smatch m;
    if (!std::regex_search(*go_mod, m, kPin))
      fatal("tools/kubernetes/go.mod pins no k8s.io/kubernetes");
    dir = cache + "/kubernetes-" + m[1].str();
  }
  std::string bin = dir + "/bin/" + name;
  if (::access(bin.c_str(), X_OK) != 0) {
    fatal(name + " not found at " + bin +
          "; run scripts/build-kubernetes.sh (or scripts/test.sh) first, or set "
          "SRIOV_DRA_KUBERNETES to the directory it printed");
  }
  return bin;
}

ControlPlane& ControlPlane::shared() {
  // The client tests' own kind (validation, status, scale) rides along; it is not a product kind.
  static std::unique_ptr<ControlPlane> instance =
      start({.extra_yaml_files = {sourceDir() + "/tests/fixtures/crds/widgets.yaml"}});
  return *instance;
}

std::unique_ptr<ControlPlane> ControlPlane::start(ControlPlaneOptions options) {
  std::unique_ptr<ControlPlane> cp(new ControlPlane(std::move(options)));
  cp->startEtcd();
  cp->apiserver_ = cp->launchApiServer(cp->port_, "apiserver.log");
  cp->waitReady(cp->server(), 90s);
  std::vector<std::string> files;
  if (cp->options_.install_product_crds) {
    for (const auto& entry : fs::directory_iterator(sourceDir() + "/config/crd/bases")) {
      if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
  }
  files.insert(files.end(), cp->options_.extra_yaml_files.begin(),
               cp->options_.extra_yaml_files.end());
  for (const auto& f : files) cp->applyYamlFile(f);
  if (cp->options_.controller_manager) {
    // No node-lifecycle controller for kubelet-less test nodes: nothing renews their leases.
    // Real kubelets (RealNode) need it: it lifts the not-ready taint of a node that became Ready.
    std::string controllers = cp->options_.kubelets ? "*" : "*,-node-lifecycle-controller";
    cp->controller_manager_ = cp->launchComponent(
        "kube-controller-manager",
        {"--controllers=" + controllers, "--use-service-account-credentials=true",
         "--service-account-private-key-file=" + cp->dir_ + "/sa.key",
         "--root-ca-file=" + cp->dir_ + "/ca.crt", "--cluster-signing-duration=1h"});
  }
  if (cp->options_.scheduler) cp->scheduler_ = cp->launchComponent("kube-scheduler", {});
  return cp;
}

ControlPlane::ControlPlane(ControlPlaneOptions options) : options_(std::move(options)) {
  const char* tmp = std::getenv("TMPDIR");
  dir_ = makeTempDir(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "sriov-dra-cp-");
  bool shm = fs::is_directory("/dev/shm") && ::access("/dev/shm", W_OK) == 0;
  etcd_dir_ = shm ? makeTempDir("/dev/shm", "sriov-dra-etcd-") : makeTempDir(dir_, "etcd-");
  memory_dir_ = shm ? makeTempDir("/dev/shm", "sriov-dra-mem-") : makeTempDir(dir_, "mem-");
  port_ = freePort();
  etcd_port_ = freePort();

  ca_ = http::makeCa("sriov-dra-test-ca");
  std::vector<std::string> addresses = {"127.0.0.1"};
  if (options_.kubelets) addresses.insert(addresses.end(), {kServiceAddress, hostAddress()});
  http::Pem serving = http::makeCert(ca_, {.common_name = "kube-apiserver",
                                           .dns_names = {"localhost", "kubernetes.default.svc"},
                                           .ip_addresses = addresses,
                                           .server = true,
                                           .client = false});
  client_ca_ = http::makeCa("sriov-dra-test-client-ca");
  // Its key signs ServiceAccount tokens; kube-apiserver verifies them with the public half.
  http::Pem sa = http::makeCa("sriov-dra-test-service-accounts");
  writeFile(dir_ + "/ca.crt", ca_.cert);
  writeFile(dir_ + "/serving.crt", serving.cert);
  writeFile(dir_ + "/serving.key", serving.key);
  writeFile(dir_ + "/client-ca.crt", client_ca_.cert);
  writeFile(dir_ + "/sa.key", sa.key);
  writeFile(dir_ + "/sa.pub", publicKeyOf(sa.key));
  if (options_.kubelets) {
    http::Pem kubelet_client = clientCertificate("kube-apiserver-kubelet-client", {});
    writeFile(dir_ + "/kubelet-client.crt", kubelet_client.cert);
    writeFile(dir_ + "/kubelet-client.key", kubelet_client.key);
  }

  std::string csv;
  auto addUser = [&](const std::string& name, const std::vector<std::string>& groups) {
    std::string token = randomHex(16);
    tokens_.emplace_back(name, token);
    std::string g;
    for (const auto& group : groups) g += (g.empty() ? "" : ",") + group;
    csv += token + "," + name + "," + name + ",\"" + g + "\"\n";
  };
  addUser("admin", {"system:masters"});
  for (const auto& u : options_.users) addUser(u.name, u.groups);
  writeFile(dir_ + "/tokens.csv", csv);
  writeFile(dir_ + "/audit-policy.yaml",
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived, "
            "ResponseStarted]\nrules:\n- level: Metadata\n");
}

ControlPlane::~ControlPlane() {
  scheduler_.stop(SIGTERM, 5s);
  controller_manager_.stop(SIGTERM, 5s);
  second_apiserver_.stop(SIGTERM, 5s);
  apiserver_.stop(SIGTERM, 10s);
  etcd_.stop(SIGTERM, 5s);
  std::error_code ec;
  fs::remove_all(etcd_dir_, ec);
  const char* keep = std::getenv("SRIOV_DRA_KEEP_TEST_DIRS");
  if (keep == nullptr || *keep == '\0') {
    fs::remove_all(memory_dir_, ec);
    fs::remove_all(dir_, ec);
  }
}

std::string ControlPlane::server() const { return "https://127.0.0.1:" + std::to_string(port_); }

const std::string& ControlPlane::token(const std::string& user) const {
  for (const auto& [name, token] : tokens_) {
    if (name == user) return token;
  }
  fatal("no test user " + user);
}

void ControlPlane::startEtcd() {
  int peer = freePort();
  std::string client_url = "http://127.0.0.1:" + std::to_string(etcd_port_);
  std::string peer_url = "http://127.0.0.1:" + std::to_string(peer);
  ProcessSpec spec;
  spec.argv = {kubernetesBinary("etcd"),
               "--data-dir=" + etcd_dir_ + "/data",
               "--name=test",
               "--listen-client-urls=" + client_url,
               "--advertise-client-urls=" + client_url,
               "--listen-peer-urls=" + peer_url,
               "--initial-advertise-peer-urls=" + peer_url,
               "--initial-cluster=test=" + peer_url,
               "--log-level=warn"};
  for (const auto& a : options_.extra_etcd_args) spec.argv.push_back(a);
  spec.kill_with_parent = true;
  spec.stdout_path = dir_ + "/etcd.log";
  spec.stderr_path = dir_ + "/etcd.log";
  auto child = ChildProcess::spawn(spec);
  if (!child.ok()) fatal("starting etcd: " + child.status().toString());
  etcd_ = std::move(*child);
}

ChildProcess ControlPlane::launchApiServer(int port, const std::string& log_name) {
  ProcessSpec spec;
  spec.argv = {kubernetesBinary("kube-apiserver"),
               "--etcd-servers=http://127.0.0.1:" + std::to_string(etcd_port_),
               std::string("--bind-address=") + (options_.kubelets ? "0.0.0.0" : "127.0.0.1"),
               "--secure-port=" + std::to_string(port),
               std::string("--advertise-address=") + kServiceAddress,
               "--tls-cert-file=" + dir_ + "/serving.crt",
               "--tls-private-key-file=" + dir_ + "/serving.key",
               "--client-ca-file=" + dir_ + "/client-ca.crt",
               "--token-auth-file=" + dir_ + "/tokens.csv",
               std::string("--authorization-mode=") + (options_.kubelets ? "Node,RBAC" : "RBAC"),
               "--service-account-issuer=https://kubernetes.default.svc",
               "--service-account-key-file=" + dir_ + "/sa.pub",
               "--service-account-signing-key-file=" + dir_ + "/sa.key",
               "--service-cluster-ip-range=10.0.0.0/24",
               "--cert-dir=" + dir_ + "/certs"};
  if (options_.kubelets) {
    // Webhooks and aggregated APIs are called at their endpoints: no kube-proxy runs here.
    spec.argv.insert(spec.argv.end(),
                     {"--enable-admission-plugins=NodeRestriction", "--enable-aggregator-routing",
                      "--kubelet-client-certificate=" + dir_ + "/kubelet-client.crt",
                      "--kubelet-client-key=" + dir_ + "/kubelet-client.key",
                      "--kubelet-preferred-address-types=Hostname,InternalIP"});
  } else {
    // Tests create pods for the scheduler only, without the ServiceAccounts the controller
    // manager would make.
    spec.argv.push_back("--disable-admission-plugins=ServiceAccount");
  }
  if (options_.audit_log) {
    spec.argv.push_back("--audit-policy-file=" + dir_ + "/audit-policy.yaml");
    spec.argv.push_back("--audit-log-path=" + dir_ + "/audit.log");
    spec.argv.push_back("--audit-log-format=json");
  }
  for (const auto& a : options_.extra_apiserver_args) spec.argv.push_back(a);
  spec.kill_with_parent = true;
  spec.stdout_path = dir_ + "/" + log_name;
  spec.stderr_path = dir_ + "/" + log_name;
  auto child = ChildProcess::spawn(spec);
  if (!child.ok()) fatal("starting kube-apiserver: " + child.status().toString());
  return std::move(*child);
}

void ControlPlane::waitReady(const std::string& server, std::chrono::seconds timeout) const {
  kube::RestConfig cfg = restConfig();
  cfg.server = server;
  cfg.timeout = 5s;
  auto client = kube::Client::create(cfg);
  if (!client.ok()) fatal(client.status().toString());
  std::string last;
  auto ready = [&] {
    auto resp = (*client)->raw("GET", "/readyz");
    if (resp.ok() && resp->status == 200) return true;
    last = resp.ok() ? "HTTP " + std::to_string(resp->status) + " " + resp->body.substr(0, 300)
                     : resp.status().toString();
    return false;
  };
  if (pollUntil(ready, timeout, 100ms)) return;
  fatal("kube-apiserver at " + server + " did not become ready (" + last + "); see " + dir_);
}

std::string ControlPlane::certificateKubeconfig(const std::string& user) {
  http::Pem cert = clientCertificate(user, {});
  std::string base = dir_ + "/" + user.substr(user.rfind(':') + 1);
  writeFile(base + ".crt", cert.cert);
  writeFile(base + ".key", cert.key);
  writeFile(base + ".kubeconfig",
            "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: " +
                server() + "\n    certificate-authority: " + dir_ +
                "/ca.crt\ncontexts:\n- name: test\n  context: {cluster: test, user: component}\n"
                "current-context: test\nusers:\n- name: component\n  user:\n"
                "    client-certificate: " +
                base + ".crt\n    client-key: " + base + ".key\n");
  return base + ".kubeconfig";
}

ChildProcess ControlPlane::launchComponent(const std::string& name, std::vector<std::string> args) {
  std::string kubeconfig = certificateKubeconfig("system:" + name);
  ProcessSpec spec;
  spec.argv = {kubernetesBinary(name),
               "--kubeconfig=" + kubeconfig,
               "--authentication-kubeconfig=" + kubeconfig,
               "--authorization-kubeconfig=" + kubeconfig,
               "--bind-address=127.0.0.1",
               "--secure-port=" + std::to_string(freePort()),
               "--cert-dir=" + dir_ + "/" + name + "-certs",
               "--leader-elect=false"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.kill_with_parent = true;
  spec.stdout_path = dir_ + "/" + name + ".log";
  spec.stderr_path = spec.stdout_path;
  auto child = ChildProcess::spawn(spec);
  if (!child.ok()) fatal("starting " + name + ": " + child.status().toString());
  return std::move(*child);
}

void ControlPlane::createNode(const std::string& name,
                              const std::map<std::string, std::string>& labels) {
  auto admin = client();
  json::Document node = kube::newObject(kube::resources::kNodes, "", name);
  auto& a = node.GetAllocator();
  auto& md = json::ensureObject(node, "metadata", a);
  auto& l = json::ensureObject(md, "labels", a);
  json::setString(l, "kubernetes.io/hostname", name, a);
  for (const auto& [k, v] : labels) json::setString(l, k, v, a);
  auto created = admin->create(kube::resources::kNodes, "", node);
  if (!created.ok()) fatal("creating node " + name + ": " + created.status().toString());
  // What a kubelet would report; the scheduler places pods only within allocatable.
  std::string status = R"({"status":{"capacity":{"cpu":"64","memory":"512Gi","pods":"110"},)"
                       R"("allocatable":{"cpu":"64","memory":"512Gi","pods":"110"},)"
                       R"("conditions":[{"type":"Ready","status":"True","reason":"KubeletLess",)"
                       R"("message":"test node without a kubelet"}]}})";
  auto patched = admin->patch(kube::resources::kNodes, "", name, kube::PatchType::kMerge, status,
                              {}, "status");
  if (!patched.ok()) fatal("node " + name + " status: " + patched.status().toString());
  // The API server taints every new Node not-ready (admission plugin TaintNodesByCondition); the
  // node-lifecycle controller would lift it once the kubelet reports Ready. Lift it as it would.
  auto untainted = admin->patch(kube::resources::kNodes, "", name, kube::PatchType::kMerge,
                                R"({"spec":{"taints":null}})");
  if (!untainted.ok()) fatal("node " + name + " taints: " + untainted.status().toString());
}

kube::RestConfig ControlPlane::restConfig(const std::string& user) const {
  kube::RestConfig cfg;
  cfg.server = server();
  cfg.tls.ca_pem = ca_.cert;
  cfg.bearer_token = token(user);
  cfg.description = "test control plane (" + user + ")";
  return cfg;
}

std::shared_ptr<kube::Client> ControlPlane::client(const std::string& user) const {
  auto c = kube::Client::create(restConfig(user));
  if (!c.ok()) fatal(c.status().toString());
  return *c;
}

std::string ControlPlane::kubeconfig(const std::string& user) const {
  std::string path = dir_ + "/kubeconfig-" + user;
  std::string text =
      "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n"
      "    server: " +
      server() + "\n    certificate-authority: " + dir_ +
      "/ca.crt\ncontexts:\n- name: test\n  context: {cluster: test, user: " + user +
      "}\ncurrent-context: test\nusers:\n- name: " + user +
      "\n  user:\n"
      "    token: " +
      token(user) + "\n";
  writeFile(path, text);
  return path;
}

std::string ControlPlane::serviceAccountKubeconfig(const std::string& ns, const std::string& name,
                                                   const std::string& node) const {
  auto admin = client();
  json::Document sa = kube::newObject(kube::resources::kServiceAccounts, ns, name);
  auto created = admin->create(kube::resources::kServiceAccounts, ns, sa);
  if (!created.ok() && created.status().code() != Code::kAlreadyExists) {
    fatal("creating ServiceAccount " + ns + "/" + name + ": " + created.status().toString());
  }
  std::string bound;
  if (!node.empty()) {
    auto n = admin->get(kube::resources::kNodes, "", node);
    if (!n.ok()) fatal("binding a token to node " + node + ": " + n.status().toString());
    bound = R"(,"boundObjectRef":{"apiVersion":"v1","kind":"Node","name":")" + node +
            R"(","uid":")" + kube::ObjectMeta::decode(*n).uid + R"("})";
  }
  auto resp = admin->raw("POST", "/api/v1/namespaces/" + ns + "/serviceaccounts/" + name + "/token",
                         R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest",)"
                         R"("spec":{"expirationSeconds":86400)" +
                             bound + "}}",
                         "application/json");
  if (!resp.ok() || resp->status != 201) {
    fatal("TokenRequest for " + ns + "/" + name + ": " +
          (resp.ok() ? std::to_string(resp->status) + " " + resp->body : resp.status().toString()));
  }
  auto answer = json::parse(resp->body);
  if (!answer.ok()) fatal("TokenRequest answer: " + answer.status().toString());
  const json::Value* token = json::at(*answer, {"status", "token"});
  if (token == nullptr || !token->IsString()) fatal("TokenRequest answer has no token");
  std::string path = dir_ + "/kubeconfig-sa-" + ns + "-" + name + (node.empty() ? "" : "-" + node);
  writeFile(path,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: " +
                server() + "\n    certificate-authority: " + dir_ +
                "/ca.crt\ncontexts:\n- name: test\n  context: {cluster: test, user: sa}\n"
                "current-context: test\nusers:\n- name: sa\n  user:\n    token: " +
                token->GetString() + "\n");
  return path;
}

http::Pem ControlPlane::clientCertificate(const std::string& user,
                                          const std::vector<std::string>& groups) const {
  return http::makeCert(
      client_ca_, {.common_name = user, .organizations = groups, .server = false, .client = true});
}

void ControlPlane::stopApiServer(int sig) { apiserver_.stop(sig, 15s); }

ControlPlane::FrozenApiServer::FrozenApiServer(pid_t pid) : pid_(pid) { ::kill(pid_, SIGSTOP); }

ControlPlane::FrozenApiServer::~FrozenApiServer() { ::kill(pid_, SIGCONT); }

void ControlPlane::startApiServer() {
  apiserver_ = launchApiServer(port_, "apiserver.log");
  waitReady(server(), 90s);
}

std::string ControlPlane::startSecondApiServer() {
  second_port_ = freePort();
  second_apiserver_ = launchApiServer(second_port_, "apiserver-2.log");
  std::string url = "https://127.0.0.1:" + std::to_string(second_port_);
  waitReady(url, 90s);
  return url;
}

void ControlPlane::stopSecondApiServer() { second_apiserver_.stop(SIGTERM, 15s); }

int64_t ControlPlane::compactEtcd() {
  auto transport = kube::Transport::create("http://127.0.0.1:" + std::to_string(etcd_port_), {});
  if (!transport.ok()) fatal(transport.status().toString());
  auto post = [&](const std::string& path, const std::string& body) {
    kube::HttpRequest req{"POST", path, body, "application/json"};
    auto resp = (*transport)->send(req, 10s);
    if (!resp.ok() || resp->status != 200) {
      fatal(
          "etcd " + path + " failed: " +
          (resp.ok() ? std::to_string(resp->status) + " " + resp->body : resp.status().toString()));
    }
    return resp->body;
  };
  auto range = json::parse(post("/v3/kv/range", R"({"key":"AA==","limit":1})"));
  if (!range.ok()) fatal("etcd range answer: " + range.status().toString());
  const json::Value* rev = json::at(*range, {"header", "revision"});
  if (rev == nullptr || !rev->IsString()) fatal("etcd range answer has no revision");
  std::string revision = rev->GetString();
  post("/v3/kv/compaction", R"({"revision":")" + revision + R"(","physical":true})");
  return std::stoll(revision);
}

std::string ControlPlane::newNamespace(const std::string& prefix) {
  std::string name = prefix + "-" + std::to_string(++namespace_counter_) + "-" + randomHex(3);
  json::Document ns = kube::newObject(kube::resources::kNamespaces, "", name);
  auto created = client()->create(kube::resources::kNamespaces, "", ns);
  if (!created.ok()) fatal("creating namespace " + name + ": " + created.status().toString());
  return name;
}

ProcessOutput ControlPlane::kubectl(const std::vector<std::string>& args, const std::string& user,
                                    std::chrono::seconds timeout) const {
  ProcessSpec spec;
  spec.argv = {kubernetesBinary("kubectl"), "--kubeconfig", kubeconfig(user)};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  auto out = runProcess(spec, timeout);
  if (!out.ok()) fatal("running kubectl: " + out.status().toString());
  return *out;
}

void ControlPlane::applyYamlFile(const std::string& path, const std::string& namespace_override) {
  auto text = readFile(path);
  if (!text.ok()) fatal(text.status().toString());
  applyYaml(*text, namespace_override);
}

void ControlPlane::bindRole(const std::string& kind, const std::string& role,
                            const std::string& user, const std::string& ns) {
  bool cluster = kind == "ClusterRole";
  std::string yaml = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ";
  static const std::string kServiceAccountPrefix = "system:serviceaccount:";
  std::string subject = "{apiGroup: rbac.authorization.k8s.io, kind: User, name: \"" + user + "\"}";
  std::string binding_name = role + "-" + ns + "-" + user;
  if (user.rfind(kServiceAccountPrefix, 0) == 0) {
    std::string rest = user.substr(kServiceAccountPrefix.size());
    std::string sa_ns = rest.substr(0, rest.find(':'));
    std::string sa = rest.substr(rest.find(':') + 1);
    subject = "{kind: ServiceAccount, namespace: " + sa_ns + ", name: " + sa + "}";
    binding_name = role + "-" + ns + "-sa-" + sa;
  }
  yaml.append(cluster ? "ClusterRoleBinding" : "RoleBinding").append("\nmetadata: {name: ");
  yaml.append(binding_name);
  if (!cluster) yaml.append(", namespace: ").append(ns);
  yaml.append("}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ").append(kind);
  yaml.append(", name: ").append(role).append("}\n");
  yaml.append("subjects:\n- ").append(subject).append("\n");
  applyYaml(yaml);
}

void ControlPlane::grantOperatorRbac(const std::string& user, const std::string& ns) {
  for (const char* file : {"role.yaml", "leader_election_role.yaml", "metrics_auth_role.yaml"}) {
    applyYamlFile(sourceDir() + "/config/rbac/" + file, ns);
  }
  bindRole("ClusterRole", "sriov-dra-operator", user, ns);
  bindRole("ClusterRole", "sriov-dra-metrics-auth", user, ns);
  bindRole("Role", "sriov-dra-operator", user, ns);
  bindRole("Role", "sriov-dra-operator-leader-election", user, ns);
}

void ControlPlane::grantOperatorDaemonSetRbac(const std::string& user, const std::string& ns) {
  applyYamlFile(sourceDir() + "/config/agent-daemonset-rbac/role.yaml", ns);
  bindRole("Role", "sriov-dra-operator-agent-daemonset", user, ns);
}

std::string ControlPlane::grantAgentRbac(const std::string& ns) {
  for (const char* file :
       {"agent_role.yaml", "agent_validating_admission_policy.yaml", "metrics_auth_role.yaml"}) {
    applyYamlFile(sourceDir() + "/config/rbac/" + file, ns);
  }
  std::string user = "system:serviceaccount:" + ns + ":sriov-dra-agent";
  bindRole("ClusterRole", "sriov-dra-agent", user, ns);
  bindRole("ClusterRole", "sriov-dra-agent-pod-network-status", user, ns);
  bindRole("ClusterRole", "sriov-dra-metrics-auth", user, ns);
  bindRole("Role", "sriov-dra-agent", user, ns);
  return user;
}

std::vector<AuditEvent> ControlPlane::auditEvents() const {
  size_t offset = 0;
  return auditEventsFrom(offset);
}

std::vector<AuditEvent> ControlPlane::auditEventsFrom(size_t& offset) const {
  std::vector<AuditEvent> out;
  std::ifstream in(dir_ + "/audit.log", std::ios::binary);
  if (!in) return out;
  in.seekg(static_cast<std::streamoff>(offset));
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a line the API server is still writing: read it next time
    offset += line.size() + 1;
    auto doc = json::parse(line);
    if (!doc.ok() || json::stringOr(*doc, "stage") != "ResponseComplete") continue;
    AuditEvent e;
    if (const json::Value* u = json::objectMember(*doc, "user"))
      e.user = json::stringOr(*u, "username");
    e.verb = json::stringOr(*doc, "verb");
    if (const json::Value* r = json::objectMember(*doc, "objectRef")) {
      e.resource = json::stringOr(*r, "resource");
      e.subresource = json::stringOr(*r, "subresource");
      e.namespace_ = json::stringOr(*r, "namespace");
      e.name = json::stringOr(*r, "name");
    }
    if (const json::Value* st = json::objectMember(*doc, "responseStatus")) {
      e.code = static_cast<int>(json::intOr(*st, "code", 0));
    }
    e.received = parseRfc3339(json::stringOr(*doc, "requestReceivedTimestamp")).valueOr({});
    e.completed = parseRfc3339(json::stringOr(*doc, "stageTimestamp")).valueOr({});
    out.push_back(std::move(e));
  }
  return out;
}

void ControlPlane::applyYaml(const std::string& yaml, const std::string& namespace_override) {
  auto docs = yamlToJson(yaml);
  if (!docs.ok()) fatal(docs.status().toString());
  auto admin = client();
  Discovery discovery(admin);
  for (auto& doc : *docs) {
    auto rt = discovery.resourceFor(doc);
    if (!rt.ok()) fatal("applying YAML: " + rt.status().toString());
    kube::ObjectMeta meta = kube::ObjectMeta::decode(doc);
    if (rt->namespaced && !namespace_override.empty()) {
      json::setString(json::ensureObject(doc, "metadata", doc.GetAllocator()), "namespace",
                      namespace_override, doc.GetAllocator());
      meta.namespace_ = namespace_override;
    }
    auto created = admin->create(*rt, meta.namespace_, doc);
    // An update over the existing object; a 409 means someone else wrote it in between (the API
    // server's own status writer, for a ValidatingAdmissionPolicy's type checking): read again.
    for (int attempt = 0; attempt < 5 && !created.ok() &&
                          (created.status().code() == Code::kAlreadyExists ||
                           (attempt > 0 && created.status().code() == Code::kConflict));
         ++attempt) {
      auto current = admin->get(*rt, meta.namespace_, meta.name);
      if (!current.ok()) fatal(current.status().toString());
      auto& md = json::ensureObject(doc, "metadata", doc.GetAllocator());
      json::setString(md, "resourceVersion", kube::ObjectMeta::decode(*current).resource_version,
                      doc.GetAllocator());
      created = admin->update(*rt, meta.namespace_, doc);
    }
    if (!created.ok())
      fatal("applying " + rt->kind + " " + meta.name + ": " + created.status().toString());
    if (rt->kind == "CustomResourceDefinition") {
      auto established = [&] {
        auto crd = admin->get(*rt, "", meta.name);
        const json::Value* conds = crd.ok() ? json::at(*crd, {"status", "conditions"}) : nullptr;
        if (conds == nullptr || !conds->IsArray()) return false;
        for (const auto& c : conds->GetArray()) {
          if (json::stringOr(c, "type") == "Established" && json::stringOr(c, "status") == "True") {
            return true;
          }
        }
        return false;
      };
      if (!pollUntil(established, 30s)) {
        fatal("CRD " + meta.name + " was not established within 30 s");
      }
    }
  }
}

}  // namespace sriovdra::testing
