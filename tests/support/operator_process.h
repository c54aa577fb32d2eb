#pragma once
// Runs the product's binaries (sriov-dra-operator, sriov-dra-agent) as real processes against
// the test control plane, each under an identity that has exactly its RBAC.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/process.h"
#include "support/control_plane.h"

namespace sriovdra::testing {

struct OperatorProcessOptions {
  std::string user = "operator";
  std::string namespace_;
  bool leader_elect = false;
  std::string webhook_cert_dir;  // "" = webhook off
  std::vector<std::string> extra_args;
  std::string name = "operator";  // log file name
  std::string metrics_cert_dir;   // "" = plain HTTP /metrics (--metrics-secure=false)
};

struct AgentProcessOptions {
  // The agent runs as the ServiceAccount <namespace_>/sriov-dra-agent with a token bound to its
  // node, like the DaemonSet's pods (see ControlPlane::grantAgentRbac).
  std::string namespace_;
  std::string node;
  std::string sysfs_root;  // a fixture tree: sriov-dra-agent-simulated runs on it
  std::string state_dir;
  int resync_seconds = 30;
  std::string name = "agent";
  // "" = --kubelet-plugin=false; else the kubelet directories live below it (keep it short: unix
  // socket paths are limited to 107 bytes).
  std::string kubelet_dir;
  std::string metrics_cert_dir;  // "" = plain HTTP /metrics (--metrics-secure=false)
  // With the kubelet plugin the agent is in standalone mode; its NRI socket is <kubelet_dir>/
  // nri.sock (absent unless a test serves it), never the machine's runtime.
  std::vector<std::string> extra_args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the agent's environment
};

// The kubelet directories of an agent started with AgentProcessOptions::kubelet_dir.
struct KubeletDirs {
  std::string registry;     // <dir>/plugins_registry
  std::string plugins;      // <dir>/plugins
  std::string cdi;          // <dir>/cdi
  std::string device_info;  // <dir>/devinfo
  static KubeletDirs under(const std::string& dir);
};

class OperatorProcess {
 public:
  static std::unique_ptr<OperatorProcess> start(const ControlPlane& cp, OperatorProcessOptions o);
  static std::unique_ptr<OperatorProcess> startAgent(const ControlPlane& cp,
                                                     const AgentProcessOptions& o);
  ~OperatorProcess();

  // Waits until /readyz answers 200 (informers synced).
  void waitReady() const;
  bool healthy() const;
  // The HTTP status of a probe endpoint ("/readyz"), 0 when it does not answer.
  int probeStatus(const std::string& path) const;
  void stop(int sig);
  bool running() { return !exitCode().has_value(); }
  // The exit code once the process has exited (-N: killed by signal N).
  std::optional<int> exitCode();
  std::string logs() const;
  int webhookPort() const { return webhook_port_; }
  int metricsPort() const { return metrics_port_; }
  // The body of GET /metrics ("" when it cannot be read).
  std::string metrics() const;
  pid_t pid() const { return process_.pid(); }
  // Resident memory (VmRSS) in KiB, -1 when it cannot be read.
  long residentKiB() const;
  // The most it has been resident so far (VmHWM) in KiB, -1 when it cannot be read.
  long peakResidentKiB() const;

 private:
  OperatorProcess() = default;
  void launch(const ControlPlane& cp, const std::string& name, const std::string& metrics_cert_dir,
              std::vector<std::string> argv,
              std::vector<std::pair<std::string, std::string>> env = {});

  ChildProcess process_;
  std::optional<int> exit_code_;
  std::string log_path_;
  int probe_port_ = 0;
  int webhook_port_ = 0;
  int metrics_port_ = 0;
};

std::string binDir();

}  // namespace sriovdra::testing
