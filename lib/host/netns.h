#pragma once
// Network namespaces as a CNI plugin uses them: the pod's (a path the runtime gives, such as
// /var/run/netns/cni-...), the host's (where the plugin started) and a temporary one to rename a
// netdev in without clashing with a name in either. Entering one needs CAP_SYS_ADMIN.
// A namespace is held by its file descriptor (close-on-exec); moving it transfers that hold.
// run() enters the namespace on a thread of its own, so the caller's thread (and with it every
// other netlink socket of the process) never changes namespace: sockets created inside `fn`
// belong to the namespace, which is how netdev.h's calls reach it.
// Thread-safety: a NetNamespace may be shared; run() may be called from any thread.
#include <functional>
#include <string>

#include "base/status.h"

namespace sriovdra::host {

class NetNamespace {
 public:
  // The calling thread's namespace.
  static Result<NetNamespace> current();
  // The namespace bound at `path` (a bind mount or /proc/<pid>/ns/net). kNotFound when the path
  // no longer exists (the pod is gone); kInvalidArgument when it is not a network namespace.
  static Result<NetNamespace> open(const std::string& path);
  // A new, empty namespace that lives as long as this object (and the netdevs in it: a netdev
  // left in it when it goes moves back to the initial namespace, as Linux does for physical
  // devices).
  static Result<NetNamespace> createTemporary();

  NetNamespace(NetNamespace&& other) noexcept;
  NetNamespace& operator=(NetNamespace&& other) noexcept;
  NetNamespace(const NetNamespace&) = delete;
  NetNamespace& operator=(const NetNamespace&) = delete;
  ~NetNamespace();

  int fd() const { return fd_; }
  // Whether both name the same namespace (device and inode of the nsfs file).
  bool sameAs(const NetNamespace& other) const;
  // Runs `fn` on a new thread inside this namespace and returns its status (or why the thread
  // could not enter).
  Status run(const std::function<Status()>& fn) const;

 private:
  explicit NetNamespace(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace sriovdra::host
