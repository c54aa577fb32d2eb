#pragma once
// Small string helpers: join({"a", "b"}, ", ") == "a, b"; splitList("a::b", ':') == {"a", "b"}
// (search paths: KUBECONFIG, CNI_PATH); ASCII case folding for the case-insensitive names of the
// APIs (link types, HTTP header names, hex ids, YAML words).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace sriovdra {

// Letters from..from+25 become to..to+25; everything else stays.
inline std::string asciiShift(std::string_view s, char from, char to) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [from, to](char c) {
    return static_cast<char>(c >= from && c <= from + 25 ? c - from + to : c);
  });
  return out;
}

inline std::string asciiLower(std::string_view s) { return asciiShift(s, 'A', 'a'); }
inline std::string asciiUpper(std::string_view s) { return asciiShift(s, 'a', 'A'); }

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

// The non-empty parts of `list` between `sep`s.
inline std::vector<std::string> splitList(std::string_view list, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = std::min(list.find(sep, start), list.size());
    if (end > start) parts.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

}  // namespace sriovdra
