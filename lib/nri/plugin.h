#pragma once
// An NRI plugin (containerd/nri's protocol, written here because no C++ implementation exists):
// connects to the container runtime's NRI socket, registers, and hands the pod events to a
// PodHandler.
//   1. connect to the unix socket; multiplex it (wire.h): the plugin serves connection 1, calls
//      the runtime on connection 2;
//   2. call Runtime.RegisterPlugin{name, index}; meanwhile the runtime calls Plugin.Configure
//      (answered with the events RunPodSandbox, StopPodSandbox, RemovePodSandbox,
//      CreateContainer) and then
//      Plugin.Synchronize with the pods it has (possibly in several requests, `more` set on all
//      but the last): PodHandler::synchronize gets them all at once, after a (re)connection;
//   3. RunPodSandbox, StopPodSandbox, RemovePodSandbox, CreateContainer: the handler's error
//      goes back as the ttrpc status (code Unknown, its message), which the runtime returns to
//      its caller, so a failed RunPodSandbox fails the pod sandbox with it and a failed
//      CreateContainer the container (the kubelet tries both again). CreateContainer is answered
//      with no adjustment;
//   4. Shutdown, a closed socket or a framing error end the connection: the plugin connects
//      again with backoff (the runtime restarted), and synchronizes again. A request that does
//      not parse fails alone (InvalidArgument, as ttrpc's server answers it).
// Threads: one connection thread reads and dispatches; handlers run on `workers` threads, so a
// slow handler (CNI) neither blocks the connection nor other pods. The handler may be called
// for different pods at once; the runtime sends one pod's events one after the other.
// start() and stop() from one thread; synchronized() and lastError() from any.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace sriovdra::nri {

struct Pod {
  std::string id;  // the sandbox ID (CNI_CONTAINERID)
  std::string uid;
  std::string name;
  std::string namespace_;
  std::string netns;  // path of its network namespace, "" when the runtime gave none
  // Its k8s.v1.cni.cncf.io/networks annotation, "" when it has none (the runtime passes the
  // pod's annotations on its sandbox; this is the one the attacher reads, as Multus does).
  std::string networks;
  bool operator==(const Pod&) const = default;
};

class PodHandler {
 public:
  virtual ~PodHandler() = default;
  // Every pod the runtime has, after each (re)connection.
  virtual Status synchronize(const std::vector<Pod>& pods) = 0;
  virtual Status runPodSandbox(const Pod& pod) = 0;
  virtual Status stopPodSandbox(const Pod& pod) = 0;
  virtual Status removePodSandbox(const Pod& pod) = 0;
  // Before each container of the pod is created (init containers too), `container` its name.
  virtual Status createContainer(const Pod& pod, const std::string& container) = 0;
};

// A Synchronize split over several requests ("more") may carry at most this many pods in all;
// more is refused (InvalidArgument) and what came so far is dropped: a runtime that never ends
// one cannot grow the plugin's memory without bound.
inline constexpr size_t kMaxSyncPods = 16384;

struct PluginOptions {
  std::string socket_path = "/var/run/nri/nri.sock";
  std::string name = "sriov-dra";
  std::string index = "42";  // two digits: the runtime calls plugins in index order
  int workers = 4;
  std::chrono::milliseconds call_timeout{5000};  // RegisterPlugin
  std::chrono::milliseconds max_backoff{5000};   // between connection attempts
};

class Plugin {
 public:
  Plugin(PluginOptions options, PodHandler& handler);
  ~Plugin();
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  void start();
  void stop();
  // Registered and synchronized on the current connection.
  bool synchronized() const { return synchronized_; }
  // Why the last connection ended or could not be made ("" before any failure).
  std::string lastError() const;

 private:
  class Session;
  void run(const std::stop_token& stop);
  void setError(const std::string& e);

  const PluginOptions options_;
  PodHandler& handler_;
  std::atomic<bool> synchronized_{false};
  mutable std::mutex mu_;
  std::string last_error_;            // guarded by mu_
  std::shared_ptr<Session> session_;  // guarded by mu_: the current connection, to end it on stop
  std::jthread thread_;
};

}  // namespace sriovdra::nri
