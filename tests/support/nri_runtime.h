#pragma once
// The container runtime's side of NRI for tests: tools/nri-runtime (containerd's own NRI
// adaptation, built by scripts/build-nri-runtime.sh; its path in SRIOV_DRA_NRI_RUNTIME) as a
// child process serving an NRI socket. Commands go to its stdin (a FIFO), one JSON line each;
// each gets one answer line on its stdout (a file this class reads).
#include <chrono>
#include <string>

#include "base/process.h"
#include "nri/plugin.h"

namespace sriovdra::testing {

class NriRuntime {
 public:
  // Keeps its files in `dir` and serves `socket`, <dir>/nri.sock by default (unix socket paths
  // are limited to 107 bytes).
  explicit NriRuntime(const std::string& dir, const std::string& socket = "");
  ~NriRuntime();
  NriRuntime(const NriRuntime&) = delete;
  NriRuntime& operator=(const NriRuntime&) = delete;

  const std::string& socket() const { return socket_; }
  // "" when the runtime answered ok, else its error (what containerd would return to kubelet).
  std::string runPodSandbox(const nri::Pod& pod);
  std::string stopPodSandbox(const nri::Pod& pod);
  std::string removePodSandbox(const nri::Pod& pod);
  std::string createContainer(const nri::Pod& pod, const std::string& container);
  // The pod runs (later synchronizations list it) but no plugin heard its RunPodSandbox, as when
  // it started while no plugin was connected.
  std::string runUnseen(const nri::Pod& pod);
  // Until `count` plugin connections (cumulative) are synchronized; "" or the error.
  std::string waitPlugins(int count, std::chrono::milliseconds timeout = std::chrono::seconds(20));
  // The runtime's own log (stderr).
  std::string logs() const;

 private:
  std::string command(const std::string& json, std::chrono::milliseconds timeout);
  std::string podCommand(const std::string& op, const nri::Pod& pod,
                         const std::string& container = "");

  std::string dir_;
  std::string socket_;
  ChildProcess process_;
  int commands_ = -1;   // write end of the stdin FIFO
  size_t answers_ = 0;  // answer lines read so far
};

}  // namespace sriovdra::testing
