#pragma once
// RFC 3339 timestamps as Kubernetes writes them: metav1.Time "2026-11-30T09:38:48Z" and
// metav1.MicroTime "2026-11-30T09:38:48.123456Z". Parsing accepts fractions and numeric offsets.
#include <chrono>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sriovdra {

using WallTime = std::chrono::system_clock::time_point;

Result<WallTime> parseRfc3339(std::string_view text);
std::string formatRfc3339(WallTime t);       // seconds precision, UTC, "Z"
std::string formatRfc3339Micro(WallTime t);  // microseconds, UTC, "Z"
std::string nowRfc3339();                    // formatRfc3339 of the system clock's now

}  // namespace sriovdra
