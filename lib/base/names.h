#pragma once
// Kubernetes' name grammars (k8s.io/apimachinery/pkg/util/validation) as character scans:
// they run for every attribute of every published device and every label of every node, where
// std::regex cost microseconds per call. Pure, no allocation.
//   DNS label       [a-z0-9]([-a-z0-9]*[a-z0-9])?                  at most `max` (63)
//   DNS subdomain   DNS labels joined by '.'                        at most `max` (253)
//   C identifier    [A-Za-z_][A-Za-z0-9_]*
//   name part       [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?        label names and values
#include <cstddef>
#include <string_view>

namespace sriovdra {

namespace names_detail {
constexpr bool lowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
constexpr bool alnum(char c) { return lowerAlnum(c) || (c >= 'A' && c <= 'Z'); }
}  // namespace names_detail

constexpr bool isDnsLabel(std::string_view s, size_t max = 63) {
  using names_detail::lowerAlnum;
  if (s.empty() || s.size() > max || !lowerAlnum(s.front()) || !lowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!lowerAlnum(c) && c != '-') return false;
  }
  return true;
}

constexpr bool isDnsSubdomain(std::string_view s, size_t max = 253) {
  if (s.empty() || s.size() > max) return false;
  for (size_t start = 0;;) {
    size_t dot = s.find('.', start);
    if (!isDnsLabel(s.substr(start, dot == std::string_view::npos ? dot : dot - start), max)) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

constexpr bool isCIdentifier(std::string_view s) {
  using names_detail::alnum;
  if (s.empty() || (!alnum(s.front()) && s.front() != '_') ||
      (s.front() >= '0' && s.front() <= '9'))
    return false;
  for (char c : s) {
    if (!alnum(c) && c != '_') return false;
  }
  return true;
}

constexpr bool isNamePart(std::string_view s) {
  using names_detail::alnum;
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace sriovdra
