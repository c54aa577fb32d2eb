#pragma once
// VF index ranges as the SR-IOV operator writes them: nicSelector.pfNames entries
// "ibp14s0" or "ibp14s0#0-3" (one inclusive, 0-based range) and VfGroup.vfRange "0-3".
#include <optional>
#include <string>

#include "base/status.h"

namespace sriovdra::api {

struct VfRange {
  int64_t first = 0;
  int64_t last = 0;
  bool contains(int64_t i) const { return i >= first && i <= last; }
  bool overlaps(const VfRange& o) const { return first <= o.last && o.first <= last; }
  int64_t size() const { return last - first + 1; }
  std::string toString() const { return std::to_string(first) + "-" + std::to_string(last); }
  bool operator==(const VfRange&) const = default;
};

struct PfName {
  std::string name;
  std::optional<VfRange> range;
};

// "ibp14s0#0-3" -> {ibp14s0, 0-3}. Errors say what is wrong with the entry.
Result<PfName> parsePfName(const std::string& entry);
// "0-3" -> {0, 3}.
Result<VfRange> parseVfRange(const std::string& text);

}  // namespace sriovdra::api
