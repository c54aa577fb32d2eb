#pragma once
// Time behind a seam: components that make time-based decisions (rate limiters, leader election,
// backoff) take a Clock so unit tests can drive time by hand.
#include <chrono>

namespace sriovdra {

class Clock {
 public:
  using Steady = std::chrono::steady_clock;
  using Wall = std::chrono::system_clock;
  virtual ~Clock() = default;
  virtual Steady::time_point now() const = 0;
  virtual Wall::time_point wallNow() const = 0;
};

// The process's real clocks.
Clock& realClock();

}  // namespace sriovdra
