#pragma once
// Views of a vector as pointers to its elements, for the pure functions that take
// `std::vector<const T*>` (so that callers choose which objects count without copying them).
// For a vector of shared pointers (informer caches), the vector keeps the objects alive.
#include <memory>
#include <vector>

namespace sriovdra {

template <typename T>
std::vector<const T*> pointers(const std::vector<T>& items) {
  std::vector<const T*> out;
  out.reserve(items.size());
  for (const auto& i : items) out.push_back(&i);
  return out;
}

// As pointers to T or a base class of it: pointersAs<api::SriovNodeState>(cached_states).
template <typename Base, typename T>
std::vector<const Base*> pointersAs(const std::vector<std::shared_ptr<const T>>& items) {
  std::vector<const Base*> out;
  out.reserve(items.size());
  for (const auto& i : items) out.push_back(i.get());
  return out;
}

template <typename T>
std::vector<const T*> pointers(const std::vector<std::shared_ptr<const T>>& items) {
  return pointersAs<T>(items);
}

}  // namespace sriovdra
