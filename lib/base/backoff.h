#pragma once
// Exponential backoff with jitter, as client-go's wait.Backoff/BackoffManager:
// delay_n = min(initial * factor^n, cap), each delay stretched by up to `jitter` times itself.
// reset() starts over; after `reset_after` without failures next() starts over by itself.
#include <chrono>
#include <random>

#include "base/clock.h"

namespace sriovdra {

struct BackoffPolicy {
  std::chrono::milliseconds initial{800};
  std::chrono::milliseconds cap{30'000};
  double factor = 2.0;
  double jitter = 1.0;
  std::chrono::milliseconds reset_after{120'000};
};

class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy, Clock& clock = realClock());
  // The delay to wait before the next attempt.
  std::chrono::milliseconds next();
  void reset();

 private:
  BackoffPolicy policy_;
  Clock& clock_;
  std::chrono::milliseconds current_{0};
  Clock::Steady::time_point last_failure_{};
  std::mt19937_64 rng_;
};

}  // namespace sriovdra
