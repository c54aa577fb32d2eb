#include "support/real_node.h"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <sys/mount.h>
#include <unistd.h>

#include "base/files.h"
#include "kube/client.h"
#include "kube/transport.h"
#include "support/poll.h"
#include "support/ports.h"

namespace sriovdra::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

[[noreturn]] void fatal(const std::string& what) { throw std::runtime_error(what); }

constexpr const char* kBridge = "sdra-cni0";
constexpr const char* kNatChain = "SRIOV-DRA-NODE-TEST";
// What the kubelet writes at start (kubelet's setupKernelTunables and friends).
constexpr const char* kSysctls[] = {"/proc/sys/kernel/panic",
                                    "/proc/sys/kernel/panic_on_oops",
                                    "/proc/sys/vm/overcommit_memory",
                                    "/proc/sys/vm/panic_on_oom",
                                    "/proc/sys/kernel/keys/root_maxkeys",
                                    "/proc/sys/kernel/keys/root_maxbytes"};

std::string root(const std::string& sub) { return std::string(RealNode::kRoot) + "/" + sub; }
std::string runRoot(const std::string& sub) { return std::string(RealNode::kRunRoot) + "/" + sub; }

void write(const std::string& path, const std::string& content) {
  fs::create_directories(fs::path(path).parent_path());
  Status st = writeFileAtomic(path, content, 0600);
  if (!st.isOk()) fatal(st.toString());
}

ProcessOutput run(const std::vector<std::string>& argv, std::chrono::seconds timeout = 60s) {
  ProcessSpec spec;
  spec.argv = argv;
  auto out = runProcess(spec, timeout);
  if (!out.ok()) fatal(argv[0] + ": " + out.status().toString());
  return *out;
}

// containerd's bin directory: SRIOV_DRA_CONTAINERD (scripts/build-containerd.sh prints it).
std::string containerdBinDir() {
  const char* dir = std::getenv("SRIOV_DRA_CONTAINERD");
  std::string d = dir != nullptr ? dir : "";
  if (d.empty() || ::access((d + "/containerd").c_str(), X_OK) != 0) {
    fatal("containerd not found (SRIOV_DRA_CONTAINERD=\"" + d +
          "\"); run scripts/build-containerd.sh and set SRIOV_DRA_CONTAINERD to the directory it "
          "printed (scripts/test.sh does)");
  }
  return d;
}

std::string tail(const std::string& path, size_t bytes = 3000) {
  std::string text = readFile(path).valueOr("");
  return path + ":\n" + (text.size() > bytes ? text.substr(text.size() - bytes) : text);
}

// Mount points under any of the prefixes, deepest first.
std::vector<std::string> mountsUnder(const std::vector<std::string>& prefixes) {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, source, point;
    fields >> id >> parent >> dev >> source >> point;
    for (const auto& p : prefixes) {
      if (point.rfind(p, 0) == 0) out.push_back(point);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return out;
}

// Processes whose command line names one of the markers (the node's daemons and shims, also
// those of an earlier run that crashed), and every process in the kubepods cgroups (containers).
// The processes whose /proc/<pid> directory `pick` chooses.
std::vector<pid_t> processesWhere(const std::function<bool(const fs::path&)>& pick) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string name = e.path().filename();
    if (!std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    if (pick(e.path())) out.push_back(std::stoi(name));
  }
  return out;
}

std::set<pid_t> nodeProcesses() {
  std::set<pid_t> pids;
  for (pid_t pid : processesWhere([](const fs::path& dir) {
         std::string cmdline = readFile(dir.string() + "/cmdline").valueOr("");
         std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
         return cmdline.find(RealNode::kRoot) != std::string::npos ||
                cmdline.find(RealNode::kRunRoot) != std::string::npos;
       })) {
    pids.insert(pid);
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator("/sys/fs/cgroup/pids/kubepods", ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() != "cgroup.procs") continue;
    std::istringstream procs(readFile(it->path().string()).valueOr(""));
    pid_t pid;
    while (procs >> pid) pids.insert(pid);
  }
  pids.erase(::getpid());
  return pids;
}

// rmdir of a cgroup tree, leaves first (cgroup directories cannot be removed recursively).
void removeCgroup(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory()) removeCgroup(e.path());
  }
  ::rmdir(dir.c_str());
}

std::string iptablesNat(std::vector<std::string> args) {
  args.insert(args.begin(), {"iptables", "-w", "5", "-t", "nat"});
  auto out = run(args);
  return out.exit_code == 0 ? "" : out.err;
}

}  // namespace

RealNode::RealNode(ControlPlane& cp) : cp_(cp) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  name_ = host;
  address_ = hostAddress();
}

std::string RealNode::kubeletDir() const { return root("kubelet"); }
std::string RealNode::logPath(const std::string& name) const { return cp_.dir() + "/" + name; }
std::string RealNode::cdiDir() { return root("cdi"); }

std::unique_ptr<RealNode> RealNode::start(ControlPlane& cp,
                                          const std::vector<std::string>& image_archives) {
  if (::geteuid() != 0) fatal("a real node needs root");
  std::unique_ptr<RealNode> node(new RealNode(cp));
  node->cleanUp();
  for (const char* path : kSysctls) {
    auto value = readFile(path);
    if (value.ok()) node->sysctls_.emplace_back(path, *value);
  }
  node->addServiceNat();
  node->startContainerd();
  for (const auto& archive : image_archives) node->importImage(archive);
  node->startKubelet();
  node->waitReady();
  return node;
}

RealNode::~RealNode() {
  kubelet_.stop(SIGTERM, 10s);
  containerd_.stop(SIGTERM, 10s);
  try {
    cleanUp();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "real node clean-up: %s\n", e.what());
  }
  for (const auto& [path, value] : sysctls_) {
    std::ofstream out(path);  // in place: /proc/sys takes no renamed files
    out << value;
  }
}

void RealNode::addServiceNat() {
  // Pods and host-network pods reach the API server as the kubernetes Service: what kube-proxy
  // would do for this one Service.
  std::string to = address_ + ":" + std::to_string(cp_.port());
  for (const auto& err : {iptablesNat({"-N", kNatChain}),
                          iptablesNat({"-A", kNatChain, "-d", "10.0.0.1/32", "-p", "tcp", "--dport",
                                       "443", "-j", "DNAT", "--to-destination", to}),
                          iptablesNat({"-I", "PREROUTING", "-j", kNatChain}),
                          iptablesNat({"-I", "OUTPUT", "-j", kNatChain})}) {
    if (!err.empty()) fatal("iptables: " + err);
  }
}

void RealNode::startContainerd() {
  containerd_bin_ = containerdBinDir();
  for (const char* sub : {"cni/net.d", "cni/ipam", "cdi", "pod-logs"}) {
    fs::create_directories(root(sub));
  }
  fs::create_directories(runRoot("nri"));
  write(root("cni/net.d/10-pods.conflist"),
        R"({"cniVersion":"1.0.0","name":"sriov-dra-node-test","plugins":[)"
        R"({"type":"bridge","bridge":")" +
            std::string(kBridge) +
            R"(","isGateway":true,"ipMasq":false,"hairpinMode":true,)"
            R"("ipam":{"type":"host-local","ranges":[[{"subnet":"10.244.0.0/24"}]],)"
            R"("routes":[{"dst":"0.0.0.0/0"}],"dataDir":")" +
            root("cni/ipam") + R"("}},{"type":"loopback"}]})");
  // containerd's configuration version 4 (containerd 2.4). restrict_oom_score_adj: this VM has no
  // CAP_SYS_RESOURCE in its bounding set, so runc may not lower a container's OOM score.
  write(root("containerd.toml"),
        "version = 4\nroot = \"" + root("containerd") + "\"\nstate = \"" + runRoot("containerd") +
            "\"\n\n[plugins.'io.containerd.server.v1.grpc']\n  address = \"" +
            runRoot("containerd.sock") +
            "\"\n[plugins.'io.containerd.server.v1.ttrpc']\n  address = \"" +
            runRoot("containerd.sock.ttrpc") +
            "\"\n\n[plugins.'io.containerd.cri.v1.runtime']\n  cdi_spec_dirs = [\"" + cdiDir() +
            "\"]\n  restrict_oom_score_adj = true\n"
            "  [plugins.'io.containerd.cri.v1.runtime'.cni]\n    bin_dirs = [\"/usr/lib/cni\"]\n"
            "    conf_dir = \"" +
            root("cni/net.d") +
            "\"\n  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n"
            "    runtime_type = \"io.containerd.runc.v2\"\n"
            "    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n"
            "      BinaryName = \"/usr/sbin/runc\"\n      SystemdCgroup = false\n\n"
            "[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = \"" +
            kSandboxImage +
            "\"\n\n[plugins.'io.containerd.nri.v1.nri']\n  disable = false\n  socket_path = \"" +
            runRoot("nri/nri.sock") + "\"\n  plugin_path = \"" + runRoot("nri/plugins") +
            "\"\n  plugin_config_path = \"" + runRoot("nri/conf.d") +
            "\"\n  [plugins.'io.containerd.nri.v1.nri'.default_validator]\n    enable = true\n");
  ProcessSpec spec;
  spec.argv = {containerd_bin_ + "/containerd", "--config", root("containerd.toml")};
  spec.env = {
      {"PATH", containerd_bin_ + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
  spec.kill_with_parent = true;
  spec.new_session = true;
  spec.stdout_path = logPath("containerd.log");
  spec.stderr_path = logPath("containerd.log");
  auto child = ChildProcess::spawn(spec);
  if (!child.ok()) fatal("starting containerd: " + child.status().toString());
  containerd_ = std::move(*child);
  bool exited = false;
  auto serving = [&] {
    exited = containerd_.exited();
    return exited || ctr({"version"}).exit_code == 0;
  };
  if (!pollUntil(serving, 30s, 100ms) || exited) fatal("containerd did not start:\n" + logs());
}

ProcessOutput RealNode::ctr(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {containerd_bin_ + "/ctr", "--address",
                                   runRoot("containerd.sock"), "--namespace", "k8s.io"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, 120s);
}

void RealNode::importImage(const std::string& archive) const {
  auto out = ctr({"images", "import", "--local", archive});
  if (out.exit_code != 0) fatal("ctr images import " + archive + ": " + out.err + out.out);
}

void RealNode::startKubelet() {
  http::Pem cert = cp_.clientCertificate("system:node:" + name_, {"system:nodes"});
  write(root("kubelet-pki/client.crt"), cert.cert);
  write(root("kubelet-pki/client.key"), cert.key);
  write(root("kubelet-pki/ca.crt"), cp_.ca().cert);
  write(root("kubelet-pki/client-ca.crt"), cp_.clientCa().cert);
  write(root("kubelet.kubeconfig"),
        "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: " +
            cp_.server() + "\n    certificate-authority: " + root("kubelet-pki/ca.crt") +
            "\ncontexts:\n- name: test\n  context: {cluster: test, user: node}\n"
            "current-context: test\nusers:\n- name: node\n  user:\n    client-certificate: " +
            root("kubelet-pki/client.crt") + "\n    client-key: " + root("kubelet-pki/client.key") +
            "\n");
  // cgroupfs and failCgroupV1 false: this VM has the cgroup v1 hybrid hierarchy. Eviction and
  // image garbage collection stay out of the way of a small test disk: the images are imported,
  // a removed one could not be pulled again.
  kubelet_healthz_port_ = freePort();
  write(root("kubelet.yaml"),
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "address: 127.0.0.1\nport: " +
            std::to_string(freePort()) +
            "\nreadOnlyPort: 0\nhealthzBindAddress: 127.0.0.1\nhealthzPort: " +
            std::to_string(kubelet_healthz_port_) +
            "\nauthentication:\n  anonymous: {enabled: false}\n  webhook: {enabled: false}\n"
            "  x509: {clientCAFile: " +
            root("kubelet-pki/client-ca.crt") +
            "}\nauthorization: {mode: AlwaysAllow}\ncgroupDriver: cgroupfs\n"
            "failSwapOn: false\nfailCgroupV1: false\ncontainerRuntimeEndpoint: unix://" +
            runRoot("containerd.sock") + "\npodLogsDir: " + root("pod-logs") +
            "\nresolvConf: /etc/resolv.conf\nevictionHard: {memory.available: 1Mi, "
            "nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}\n"
            "imageGCHighThresholdPercent: 100\nimageGCLowThresholdPercent: 99\n"
            "serializeImagePulls: false\nnodeStatusReportFrequency: 10s\n");
  ProcessSpec spec;
  spec.argv = {kubernetesBinary("kubelet"),
               "--config=" + root("kubelet.yaml"),
               "--kubeconfig=" + root("kubelet.kubeconfig"),
               "--root-dir=" + kubeletDir(),
               "--cert-dir=" + root("kubelet-pki/serving"),
               "--node-ip=" + address_,
               "--hostname-override=" + name_,
               "--v=2"};
  // No iptables on the kubelet's PATH: it would add chains of its own to the host's tables.
  spec.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  spec.kill_with_parent = true;
  spec.new_session = true;
  spec.stdout_path = logPath("kubelet.log");
  spec.stderr_path = logPath("kubelet.log");
  auto child = ChildProcess::spawn(spec);
  if (!child.ok()) fatal("starting the kubelet: " + child.status().toString());
  kubelet_ = std::move(*child);
}

void RealNode::waitReady() {
  auto admin = cp_.client();
  std::string seen = "no Node object";
  bool ready = false;
  auto settled = [&] {
    if (kubelet_.exited()) return true;
    auto got = admin->get(kube::resources::kNodes, "", name_);
    if (!got.ok()) return false;
    seen = "not Ready";
    const json::Value* conditions = json::at(*got, {"status", "conditions"});
    if (conditions == nullptr || !conditions->IsArray()) return false;
    for (const auto& c : conditions->GetArray()) {
      if (json::stringOr(c, "type") != "Ready") continue;
      ready = json::stringOr(c, "status") == "True";
      seen = "Ready " + std::string(json::stringOr(c, "status")) + ": " +
             std::string(json::stringOr(c, "message"));
    }
    return ready;
  };
  if (pollUntil(settled, 90s, 200ms) && ready) return;
  fatal("node " + name_ + " did not become Ready (" + seen + ")\n" + logs());
}

void RealNode::restartContainerd() {
  containerd_.stop(SIGKILL);
  startContainerd();
}

void RealNode::restartKubelet() {
  kubelet_.stop(SIGKILL);
  startKubelet();
  waitHealthy();
}

void RealNode::waitHealthy() {
  auto healthy = [&] {
    if (kubelet_.exited()) return true;
    auto t =
        kube::Transport::create("http://127.0.0.1:" + std::to_string(kubelet_healthz_port_), {});
    if (!t.ok()) return false;
    auto resp = (*t)->send({"GET", "/healthz", "", "", "*/*", {}}, 2s);
    return resp.ok() && resp->status == 200;
  };
  if (!pollUntil(healthy, 90s, 200ms) || kubelet_.exited()) {
    fatal("the kubelet did not start again:\n" + logs());
  }
}

std::vector<pid_t> RealNode::containerProcesses(const std::string& executable) {
  return processesWhere([&](const fs::path& dir) {
    std::error_code ec;
    auto exe = fs::read_symlink(dir / "exe", ec);
    // The kubelet's cgroups (cgroupDriver cgroupfs): never a process of another test.
    return !ec && exe.filename() == executable &&
           readFile(dir.string() + "/cgroup").valueOr("").find("/kubepods") != std::string::npos;
  });
}

int RealNode::killContainerProcesses(const std::string& executable) {
  int killed = 0;
  for (pid_t pid : containerProcesses(executable)) killed += ::kill(pid, SIGKILL) == 0;
  return killed;
}

std::string RealNode::logs() const {
  return tail(logPath("kubelet.log")) + "\n" + tail(logPath("containerd.log"));
}

void RealNode::reboot(const std::function<void()>& while_off) {
  kubelet_.stop(SIGKILL);
  containerd_.stop(SIGKILL);
  powerOff();
  if (while_off) while_off();
  // What lives in tmpfs on a real node: the runtime's state, CDI specs (/var/run/cdi) and the
  // Multus device-info files (/var/run/k8s.cni.cncf.io).
  std::error_code ec;
  fs::remove_all(kRunRoot, ec);
  for (const char* dir : {"cdi", "devinfo"}) {
    for (const auto& e : fs::directory_iterator(root(dir), ec)) fs::remove_all(e.path(), ec);
  }
  startContainerd();
  startKubelet();
  waitHealthy();
}

void RealNode::powerOff() {
  // Containers first (their processes), then the daemons and shims, then what they left.
  for (int round = 0; round < 50; ++round) {
    auto pids = nodeProcesses();
    if (pids.empty()) break;
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(100ms);
  }
  std::vector<std::string> prefixes = {std::string(kRoot) + "/", std::string(kRunRoot) + "/",
                                       "/run/netns/cni-"};
  for (const auto& point : mountsUnder(prefixes)) ::umount2(point.c_str(), MNT_DETACH);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/run/netns", ec)) {
    if (e.path().filename().string().rfind("cni-", 0) == 0) fs::remove(e.path(), ec);
  }
  for (const auto& controller : fs::directory_iterator("/sys/fs/cgroup", ec)) {
    removeCgroup(controller.path() / "kubepods");
  }
  run({"ip", "link", "del", kBridge});
}

void RealNode::cleanUp() {
  powerOff();
  iptablesNat({"-D", "PREROUTING", "-j", kNatChain});
  iptablesNat({"-D", "OUTPUT", "-j", kNatChain});
  iptablesNat({"-F", kNatChain});
  iptablesNat({"-X", kNatChain});
  auto left = mountsUnder({std::string(kRoot) + "/", std::string(kRunRoot) + "/"});
  if (!left.empty()) fatal("mounts left under the node's directories, not removed: " + left[0]);
  std::error_code ec;
  fs::remove_all(kRoot, ec);
  fs::remove_all(kRunRoot, ec);
}

}  // namespace sriovdra::testing
