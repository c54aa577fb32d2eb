#include "support/operator_process.h"

#include <fstream>
#include <stdexcept>
#include <thread>

#include <sys/wait.h>

#include "base/files.h"
#include "kube/transport.h"
#include "support/poll.h"

namespace sriovdra::testing {

std::string binDir() { return SRIOV_DRA_BIN_DIR; }

void OperatorProcess::launch(const ControlPlane& cp, const std::string& name,
                             const std::string& metrics_cert_dir, std::vector<std::string> argv,
                             std::vector<std::pair<std::string, std::string>> env) {
  log_path_ = cp.dir() + "/" + name + ".log";
  argv.push_back("--health-probe-bind-address=127.0.0.1:" + std::to_string(probe_port_));
  argv.push_back("--metrics-bind-address=127.0.0.1:" + std::to_string(metrics_port_));
  if (metrics_cert_dir.empty()) {
    argv.push_back("--metrics-secure=false");
  } else {
    argv.push_back("--metrics-cert-dir=" + metrics_cert_dir);
  }
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.env = std::move(env);
  spec.kill_with_parent = true;
  spec.stdout_path = log_path_;
  spec.stderr_path = log_path_;
  auto child = ChildProcess::spawn(spec);
  if (!child.ok()) throw std::runtime_error(child.status().toString());
  process_ = std::move(*child);
}

std::unique_ptr<OperatorProcess> OperatorProcess::start(const ControlPlane& cp,
                                                        OperatorProcessOptions o) {
  std::unique_ptr<OperatorProcess> p(new OperatorProcess());
  p->probe_port_ = freePort();
  p->metrics_port_ = freePort();
  std::vector<std::string> argv = {binDir() + "/sriov-dra-operator",
                                   "--kubeconfig=" + cp.kubeconfig(o.user),
                                   "--namespace=" + o.namespace_, "--v=1"};
  if (o.webhook_cert_dir.empty()) {
    argv.push_back("--webhook-port=0");
  } else {
    p->webhook_port_ = freePort();
    argv.push_back("--webhook-port=" + std::to_string(p->webhook_port_));
    argv.push_back("--webhook-cert-dir=" + o.webhook_cert_dir);
  }
  if (o.leader_elect) argv.push_back("--leader-elect");
  argv.insert(argv.end(), o.extra_args.begin(), o.extra_args.end());
  p->launch(cp, o.name, o.metrics_cert_dir, std::move(argv));
  return p;
}

std::unique_ptr<OperatorProcess> OperatorProcess::startAgent(const ControlPlane& cp,
                                                             const AgentProcessOptions& o) {
  std::unique_ptr<OperatorProcess> p(new OperatorProcess());
  p->probe_port_ = freePort();
  p->metrics_port_ = freePort();
  std::vector<std::string> argv = {
      binDir() + "/sriov-dra-agent-simulated",
      "--kubeconfig=" + cp.serviceAccountKubeconfig(o.namespace_, "sriov-dra-agent", o.node),
      "--namespace=" + o.namespace_,
      "--node-name=" + o.node,
      "--sysfs-root=" + o.sysfs_root,
      "--state-dir=" + o.state_dir,
      "--resync-period=" + std::to_string(o.resync_seconds),
      "--v=1"};
  if (o.kubelet_dir.empty()) {
    argv.push_back("--kubelet-plugin=false");
  } else {
    auto dirs = KubeletDirs::under(o.kubelet_dir);
    argv.push_back("--registry-dir=" + dirs.registry);
    argv.push_back("--plugins-dir=" + dirs.plugins);
    argv.push_back("--cdi-root=" + dirs.cdi);
    argv.push_back("--device-info-dir=" + dirs.device_info);
    argv.push_back("--nri-socket=" + o.kubelet_dir + "/nri.sock");
  }
  argv.insert(argv.end(), o.extra_args.begin(), o.extra_args.end());
  p->launch(cp, o.name, o.metrics_cert_dir, std::move(argv), o.env);
  return p;
}

KubeletDirs KubeletDirs::under(const std::string& dir) {
  return {dir + "/plugins_registry", dir + "/plugins", dir + "/cdi", dir + "/devinfo"};
}

OperatorProcess::~OperatorProcess() { process_.stop(SIGTERM, std::chrono::seconds(10)); }

void OperatorProcess::stop(int sig) { process_.stop(sig, std::chrono::seconds(15)); }

int OperatorProcess::probeStatus(const std::string& path) const {
  auto t = kube::Transport::create("http://127.0.0.1:" + std::to_string(probe_port_), {});
  if (!t.ok()) return 0;
  auto resp = (*t)->send({"GET", path, "", "", "*/*", {}}, std::chrono::seconds(2));
  return resp.ok() ? resp->status : 0;
}

std::string OperatorProcess::metrics() const {
  auto t = kube::Transport::create("http://127.0.0.1:" + std::to_string(metrics_port_), {});
  if (!t.ok()) return "";
  auto resp = (*t)->send({"GET", "/metrics", "", "", "*/*", {}}, std::chrono::seconds(5));
  return resp.ok() && resp->status == 200 ? resp->body : "";
}

namespace {

// A "Vm...:" line of /proc/<pid>/status in KiB, -1 when it cannot be read.
long statusKiB(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(field.size()));
  }
  return -1;
}

}  // namespace

long OperatorProcess::residentKiB() const { return statusKiB(pid(), "VmRSS:"); }

long OperatorProcess::peakResidentKiB() const { return statusKiB(pid(), "VmHWM:"); }

bool OperatorProcess::healthy() const { return probeStatus("/healthz") == 200; }

void OperatorProcess::waitReady() const {
  auto ready = [&] { return probeStatus("/readyz") == 200; };
  if (pollUntil(ready, std::chrono::seconds(60), std::chrono::milliseconds(100))) return;
  throw std::runtime_error("operator did not become ready; log:\n" + logs());
}

std::optional<int> OperatorProcess::exitCode() {
  int status = 0;
  if (!exit_code_ && process_.exited(&status)) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  return exit_code_;
}

std::string OperatorProcess::logs() const {
  auto text = readFile(log_path_);
  return text.ok() ? *text : "(no log)";
}

}  // namespace sriovdra::testing
