#pragma once
// What the pod attach tests need of this machine: a network namespace standing in for a pod's,
// and a host interface (ifb: this kernel has no dummy links) standing in for a VF's netdev, both
// created by `ip` and removed with the object. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN).
#include <string>
#include <vector>

#include "base/process.h"
#include "support/skip.h"

namespace sriovdra::testing {

// `ip ARGS...`, expected to finish within 10 s.
ProcessOutput ip(const std::vector<std::string>& args);

class PodNetwork {
 public:
  // A stale interface of the name (from a crashed run) is removed first.
  PodNetwork(std::string netns, std::string device);
  ~PodNetwork();
  PodNetwork(const PodNetwork&) = delete;
  PodNetwork& operator=(const PodNetwork&) = delete;

  const std::string& netns() const { return netns_; }
  const std::string& device() const { return device_; }
  std::string path() const { return "/var/run/netns/" + netns_; }
  // `ip -br addr` of an interface inside the namespace, "" when it is not there.
  std::string inPod(const std::string& ifname) const;
  bool deviceOnHost() const;

 private:
  std::string netns_;
  std::string device_;
};

}  // namespace sriovdra::testing
