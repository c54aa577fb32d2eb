#pragma once
// Polls cond every 50 ms until it returns true or the timeout passes; then fails the current
// Catch2 test with describe()'s account of what was seen. (Defined in the test main library.)
#include <chrono>
#include <functional>
#include <string>

namespace sriovdra::testing {

void eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout,
                const std::function<std::string()>& describe);

}  // namespace sriovdra::testing
