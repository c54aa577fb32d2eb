#pragma once
// Runs build/bin/sriov-dra-operator as a real process against the test control plane, under a
// test user that has exactly the operator's RBAC.
#include <memory>
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
};

class OperatorProcess {
 public:
  static std::unique_ptr<OperatorProcess> start(const ControlPlane& cp, OperatorProcessOptions o);
  ~OperatorProcess();

  // Waits until /readyz answers 200 (informers synced).
  void waitReady() const;
  bool healthy() const;
  void stop(int sig);
  bool running() { return !process_.exited(); }
  std::string logs() const;
  int webhookPort() const { return webhook_port_; }
  int metricsPort() const { return metrics_port_; }
  pid_t pid() const { return process_.pid(); }

 private:
  OperatorProcess() = default;
  int probeStatus(const std::string& path) const;

  ChildProcess process_;
  std::string log_path_;
  int probe_port_ = 0;
  int webhook_port_ = 0;
  int metrics_port_ = 0;
};

std::string binDir();

}  // namespace sriovdra::testing
