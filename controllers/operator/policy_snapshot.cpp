#include "operator/policy_snapshot.h"

#include <algorithm>

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
  policy::Policies all;
  for (const auto& p : snap->node_policies) all.node_policies.push_back(p.get());
  for (const auto& p : snap->resource_policies) all.resource_policies.push_back(p.get());
  for (const auto& d : snap->device_attributes) all.device_attributes.push_back(d.get());
  snap->validated = policy::validatePolicies(all);
  snapshot_ = snap;
  return snapshot_;
}

void PolicySnapshots::invalidate() {
  std::lock_guard lock(mu_);
  snapshot_.reset();
}

}  // namespace sriovdra::op
