#include "support/poll.h"

#include <thread>

namespace sriovdra::testing {

bool pollUntil(const std::function<bool()>& cond, std::chrono::milliseconds timeout,
               std::chrono::milliseconds interval) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return cond();
    std::this_thread::sleep_for(interval);
  }
  return true;
}

}  // namespace sriovdra::testing
