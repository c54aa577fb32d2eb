#pragma once
// Small string helpers: join({"a", "b"}, ", ") == "a, b"; splitList("a::b", ':') == {"a", "b"}
// (search paths: KUBECONFIG, CNI_PATH); keyValueLines() of state files; ASCII case folding for the
// case-insensitive names of the APIs (link types, HTTP header names, hex ids, YAML words);
// printable() for text someone else wrote that goes into a message, a log line or a terminal.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>
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

// s without the whitespace (std::isspace) at either end.
inline std::string_view trimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
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

// The KEY=VALUE lines of a text, in order (lines without '=' left out; the value is the rest of
// the line after the first '=').
inline std::vector<std::pair<std::string, std::string>> keyValueLines(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    auto eq = line.find('=');
    if (eq != std::string_view::npos) out.emplace_back(line.substr(0, eq), line.substr(eq + 1));
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

// s with every byte outside printable ASCII written as an escape (\r, \n, \t, \\, \x1b; UTF-8
// byte by byte), cut after max bytes of s with "..." appended: a value from an
// object can neither end a log line, nor forge one, nor send a terminal an escape sequence.
inline std::string printable(std::string_view s, size_t max = 256) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(s.size(), max) + 8);
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        }
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace sriovdra
