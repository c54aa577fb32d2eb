#pragma once
// Kubernetes resource quantities ("80Gi", "1.5", "500m", "1e3") and semantic versions
// ("595.71.5", "1.2.3-rc.1+build"), the two value types DRA compares. Pure.
// Quantity: exact to 1e-9 (nano units, as Kubernetes' canonical form), magnitude up to 2^90;
// sums and differences (shared counters) are exact and written in the largest binary or decimal
// unit that divides them ("40Gi", "1500m").
// Semver: SemVer 2.0.0 (no "v" prefix, no leading zeros); precedence ignores build metadata.
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sriovdra::scheduling {

class Quantity {
 public:
  static Result<Quantity> parse(std::string_view text);
  std::strong_ordering operator<=>(const Quantity& o) const { return nanos_ <=> o.nanos_; }
  bool operator==(const Quantity& o) const { return nanos_ == o.nanos_; }
  Quantity operator+(const Quantity& o) const { return fromNanos(nanos_ + o.nanos_); }
  Quantity operator-(const Quantity& o) const { return fromNanos(nanos_ - o.nanos_); }
  static Quantity ofInteger(int64_t v) {
    return fromNanos(static_cast<__int128>(v) * 1'000'000'000);
  }
  bool isInteger() const;
  // The value rounded up to an integer, as Kubernetes' Quantity.Value(); saturates at int64.
  int64_t roundedUp() const;
  int sign() const { return nanos_ < 0 ? -1 : nanos_ > 0 ? 1 : 0; }
  // The value rounded toward zero; InvalidArgument when it does not fit an int64.
  Result<int64_t> asInteger() const;
  const std::string& text() const { return text_; }

 private:
  static Quantity fromNanos(__int128 nanos);
  __int128 nanos_ = 0;
  std::string text_;
};

class Semver {
 public:
  static Result<Semver> parse(std::string_view text);
  // -1, 0, 1 by SemVer precedence.
  int compare(const Semver& o) const;
  bool operator==(const Semver& o) const { return compare(o) == 0; }
  int64_t major() const { return major_; }
  int64_t minor() const { return minor_; }
  int64_t patch() const { return patch_; }
  const std::string& text() const { return text_; }

 private:
  int64_t major_ = 0, minor_ = 0, patch_ = 0;
  std::vector<std::string> prerelease_;
  std::string text_;
};

}  // namespace sriovdra::scheduling
