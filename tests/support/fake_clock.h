#pragma once
// A Clock that moves only when the test says so.
#include <mutex>

#include "base/clock.h"

namespace sriovdra::testing {

class FakeClock final : public Clock {
 public:
  Steady::time_point now() const override {
    std::lock_guard lock(mu_);
    return steady_;
  }
  Wall::time_point wallNow() const override {
    std::lock_guard lock(mu_);
    return wall_;
  }
  void advance(std::chrono::nanoseconds d) {
    std::lock_guard lock(mu_);
    steady_ += std::chrono::duration_cast<Steady::duration>(d);
    wall_ += std::chrono::duration_cast<Wall::duration>(d);
  }

 private:
  mutable std::mutex mu_;
  Steady::time_point steady_{std::chrono::hours(1000)};
  Wall::time_point wall_{std::chrono::system_clock::now()};
};

}  // namespace sriovdra::testing
