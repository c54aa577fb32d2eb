#pragma once
// Joining strings for messages: join({"a", "b"}, ", ") == "a, b".
#include <string>
#include <string_view>

namespace sriovdra {

template <typename Range>
std::string join(const Range& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out.append(sep);
    out.append(item);
  }
  return out;
}

}  // namespace sriovdra
