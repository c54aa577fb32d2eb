#include "kube/own_writes.h"

#include <algorithm>

namespace sriovdra::kube {

void OwnWrites::start(const std::string& key) {
  std::lock_guard lock(mu_);
  writes_[key] = {.in_flight = true};
}

bool OwnWrites::finish(const std::string& key, const std::string& resource_version) {
  std::lock_guard lock(mu_);
  auto it = writes_.find(key);
  if (it == writes_.end()) return false;
  std::vector<std::string> held = std::move(it->second.held);
  if (resource_version.empty()) {
    writes_.erase(it);
    return !held.empty();
  }
  bool others = std::any_of(held.begin(), held.end(),
                            [&](const std::string& rv) { return rv != resource_version; });
  bool ours_seen = std::find(held.begin(), held.end(), resource_version) != held.end();
  it->second = {.resource_version = resource_version, .look_again = others && !ours_seen};
  return others && ours_seen;
}

bool OwnWrites::isOwn(const std::string& key, const std::string& resource_version) {
  std::lock_guard lock(mu_);
  auto it = writes_.find(key);
  if (it == writes_.end()) return false;
  Write& w = it->second;
  if (w.in_flight) {
    w.held.push_back(resource_version);
    return true;
  }
  if (w.resource_version != resource_version) return false;
  if (w.look_again) {
    w.look_again = false;
    return false;
  }
  return true;
}

void OwnWrites::forget(const std::string& key) {
  std::lock_guard lock(mu_);
  writes_.erase(key);
}

}  // namespace sriovdra::kube
