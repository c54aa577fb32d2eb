#pragma once
// Small string helpers: join({"a", "b"}, ", ") == "a, b"; ASCII case folding for the
// case-insensitive names of the APIs (link types, HTTP header names, hex ids, YAML words).
#include <algorithm>
#include <string>
#include <string_view>

namespace sriovdra {

inline std::string asciiLower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  return out;
}

inline bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && asciiLower(a) == asciiLower(b);
}

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
