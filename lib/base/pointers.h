#pragma once
// Views of a vector as pointers to its elements, for the pure functions that take
// `std::vector<const T*>` (so that callers choose which objects count without copying them).
#include <vector>

namespace sriovdra {

template <typename T>
std::vector<const T*> pointers(const std::vector<T>& items) {
  std::vector<const T*> out;
  out.reserve(items.size());
  for (const auto& i : items) out.push_back(&i);
  return out;
}

}  // namespace sriovdra
