#include "support/poll.h"

#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
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

void repeatUntilStopped(const std::stop_token& stop, std::chrono::milliseconds interval,
                        const char* what, const std::function<void()>& round) {
  std::mutex mu;
  std::condition_variable_any woken;
  while (!stop.stop_requested()) {
    try {
      round();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", what, e.what());
    }
    std::unique_lock lock(mu);
    woken.wait_for(lock, stop, interval, [] { return false; });
  }
}

}  // namespace sriovdra::testing
