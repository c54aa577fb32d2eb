#pragma once
// The files the SR-IOV CNI plugins keep per VF and per attachment under their state directory,
// in upstream's layouts, so that our plugin and upstream's each find what the other wrote:
//   <dir>/<containerID>-<ifName>   the cache of an ADD (sriovcni/netconf.h, ib_netconf.h), read
//                                  by DEL; directory 0700, file 0600, written atomically (both)
//   <dir>/pci/<BDF>                the VF is allocated: the CNI_NETNS of the pod holding it
//                                  (`sriov`, /var/lib/cni/sriov)
//   <dir>/pci/vf_lock/<BDF>.lock   flock(LOCK_EX) while an ADD or DEL works on the VF (`sriov`)
// `ib-sriov` (/var/lib/cni/ib-sriov) has one lock for the node's VFs (lockFile) and, as upstream,
// no allocation files.
// The lock is waited for at most a given time (upstream waits 60 s; a runtime's budget for a
// whole ADD is shorter), then fails with upstream's message. An allocation whose namespace no
// longer exists is stale: removed, and the VF free.
// Thread-safety: none needed (one command per process); the lock serializes processes.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sriovdra::cni_plugin {

// An flock held until destroyed.
class HeldLock {
 public:
  explicit HeldLock(int fd) : fd_(fd) {}
  HeldLock(HeldLock&& other) noexcept;
  HeldLock& operator=(HeldLock&&) = delete;
  ~HeldLock();

 private:
  int fd_;
};

class VfFiles {
 public:
  explicit VfFiles(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  std::string cachePath(std::string_view container_id, std::string_view if_name) const;

  Result<HeldLock> lock(std::string_view pci_address, std::chrono::milliseconds timeout) const;
  Result<bool> allocated(std::string_view pci_address) const;
  // The network namespace the allocation names, "" when there is none.
  std::string holder(std::string_view pci_address) const;
  Status saveAllocation(std::string_view pci_address, std::string_view netns) const;
  Status deleteAllocation(std::string_view pci_address) const;

  Status saveCache(std::string_view container_id, std::string_view if_name,
                   std::string_view content) const;
  // kNotFound when there is none.
  Result<std::string> readCache(std::string_view container_id, std::string_view if_name) const;
  Status removeCache(std::string_view container_id, std::string_view if_name) const;
  // The names of every cache file (<containerID>-<ifName>), sorted.
  std::vector<std::string> cacheNames() const;

 private:
  std::string dir_;
};

// Holds the flock of `path` (created 0600 with its directory 0700 if missing), waiting at most
// `timeout`: kTimeout "time out while waiting to acquire exclusive lock on [path]".
Result<HeldLock> lockFile(const std::string& path, std::chrono::milliseconds timeout);

}  // namespace sriovdra::cni_plugin
