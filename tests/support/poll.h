#pragma once
// The test harness's one deadline loop: calls cond every `interval` until it returns true
// (pollUntil returns true) or `timeout` has passed since the call (false; cond ran at least once,
// and once more after the deadline, so a condition reached at the last moment counts). No Catch2:
// the harness's processes and the demo use it too; eventually.h is its Catch2 form.
#include <chrono>
#include <functional>
#include <stop_token>

namespace sriovdra::testing {

bool pollUntil(const std::function<bool()>& cond, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval = std::chrono::milliseconds(50));

// A background watcher's loop: runs `round` every `interval` until `stop` is requested (a request
// ends the wait at once). An exception from a round is printed to stderr after `what` and the
// next round runs: a watcher outlives what it watches going away for a while.
void repeatUntilStopped(const std::stop_token& stop, std::chrono::milliseconds interval,
                        const char* what, const std::function<void()>& round);

}  // namespace sriovdra::testing
