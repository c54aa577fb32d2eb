#include "api/vf_range.h"

#include <charconv>

namespace sriovdra::api {
namespace {

std::optional<int64_t> number(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

Result<VfRange> parseVfRange(const std::string& text) {
  auto dash = text.find('-');
  if (dash == std::string::npos || text.find('-', dash + 1) != std::string::npos) {
    return Status(Code::kInvalidArgument,
                  "VF range \"" + text + "\" must be \"first-last\", e.g. 0-3");
  }
  auto first = number(std::string_view(text).substr(0, dash));
  auto last = number(std::string_view(text).substr(dash + 1));
  if (!first || !last) {
    return Status(Code::kInvalidArgument,
                  "VF range \"" + text + "\" must be two non-negative integers \"first-last\"");
  }
  if (*last < *first) {
    return Status(Code::kInvalidArgument, "VF range \"" + text + "\" ends before it starts");
  }
  return VfRange{*first, *last};
}

Result<PfName> parsePfName(const std::string& entry) {
  auto hash = entry.find('#');
  if (hash == std::string::npos) {
    if (entry.empty()) return Status(Code::kInvalidArgument, "a pfNames entry is empty");
    return PfName{entry, std::nullopt};
  }
  if (entry.find('#', hash + 1) != std::string::npos) {
    return Status(Code::kInvalidArgument,
                  "pfNames entry \"" + entry + "\" has more than one '#'; write name#first-last");
  }
  if (hash == 0) {
    return Status(Code::kInvalidArgument, "pfNames entry \"" + entry + "\" has no PF name");
  }
  std::string range_text = entry.substr(hash + 1);
  if (range_text.find(',') != std::string::npos) {
    return Status(
        Code::kInvalidArgument,
        "pfNames entry \"" + entry +
            "\" lists several ranges; one range per entry is supported (name#first-last)");
  }
  auto range = parseVfRange(range_text);
  if (!range.ok()) {
    return Status(Code::kInvalidArgument,
                  "pfNames entry \"" + entry + "\": " + range.status().message());
  }
  return PfName{entry.substr(0, hash), *range};
}

}  // namespace sriovdra::api
