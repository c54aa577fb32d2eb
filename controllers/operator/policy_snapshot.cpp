#include "operator/policy_snapshot.h"

#include <algorithm>

#include "base/pointers.h"

namespace sriovdra::op {
namespace {

template <typename T>
std::vector<std::shared_ptr<const T>> sortedByName(const kube::Informer<T>& informer) {
  auto items = informer.list();
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a->metadata.name < b->metadata.name; });
  return items;
}

}  // namespace

std::shared_ptr<const PolicySnapshot> PolicySnapshots::get() {
  std::lock_guard lock(mu_);
  if (snapshot_) return snapshot_;
  auto snap = std::make_shared<PolicySnapshot>();
  snap->node_policies = sortedByName(caches_.node_policies);
  snap->resource_policies = sortedByName(caches_.resource_policies);
  snap->device_attributes = sortedByName(caches_.device_attributes);
  policy::Policies all{pointers(snap->node_policies), pointers(snap->resource_policies),
                       pointers(snap->device_attributes)};
  snap->validated = policy::validatePolicies(all);
  snapshot_ = snap;
  return snapshot_;
}

void PolicySnapshots::invalidate() {
  std::lock_guard lock(mu_);
  snapshot_.reset();
}

}  // namespace sriovdra::op
