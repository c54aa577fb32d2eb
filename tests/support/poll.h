#pragma once
// The test harness's one deadline loop: calls cond every `interval` until it returns true
// (pollUntil returns true) or `timeout` has passed since the call (false; cond ran at least once,
// and once more after the deadline, so a condition reached at the last moment counts). No Catch2:
// the harness's processes and the demo use it too; eventually.h is its Catch2 form.
#include <chrono>
#include <functional>

namespace sriovdra::testing {

bool pollUntil(const std::function<bool()>& cond, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval = std::chrono::milliseconds(50));

}  // namespace sriovdra::testing
