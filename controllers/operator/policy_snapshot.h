#pragma once
// The policies of the operator's namespace, sorted by name and validated together, built once
// per change and shared by the reconcilers that render from them. Thread-safe: get() from any
// worker; invalidate() from informer handlers when a policy changes.
#include <memory>
#include <mutex>
#include <vector>

#include "operator/caches.h"
#include "policy/policy_set.h"

namespace sriovdra::op {

struct PolicySnapshot {
  std::vector<std::shared_ptr<const api::SriovNetworkNodePolicy>> node_policies;
  std::vector<std::shared_ptr<const api::SriovResourcePolicy>> resource_policies;
  std::vector<std::shared_ptr<const api::DeviceAttributes>> device_attributes;
  policy::ValidatedPolicies validated;  // points into the vectors above
};

class PolicySnapshots {
 public:
  explicit PolicySnapshots(const Caches& caches) : caches_(caches) {}
  std::shared_ptr<const PolicySnapshot> get();
  void invalidate();

 private:
  const Caches& caches_;
  std::mutex mu_;
  std::shared_ptr<const PolicySnapshot> snapshot_;  // guarded by mu_; null = rebuild
};

}  // namespace sriovdra::op
