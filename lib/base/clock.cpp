#include "base/clock.h"

#include <algorithm>

#include "base/backoff.h"

namespace sriovdra {
namespace {

class RealClock final : public Clock {
 public:
  Steady::time_point now() const override { return Steady::now(); }
  Wall::time_point wallNow() const override { return Wall::now(); }
};

}  // namespace

Clock& realClock() {
  static RealClock clock;
  return clock;
}

Backoff::Backoff(BackoffPolicy policy, Clock& clock)
    : policy_(policy), clock_(clock), rng_(std::random_device{}()) {}

std::chrono::milliseconds Backoff::next() {
  auto now = clock_.now();
  if (current_.count() == 0 || now - last_failure_ > policy_.reset_after) {
    current_ = policy_.initial;
  } else {
    auto grown = std::chrono::milliseconds(
        static_cast<int64_t>(static_cast<double>(current_.count()) * policy_.factor));
    current_ = std::min(grown, policy_.cap);
  }
  last_failure_ = now;
  auto delay = current_;
  if (policy_.jitter > 0) {
    std::uniform_real_distribution<double> dist(0.0, policy_.jitter);
    delay += std::chrono::milliseconds(
        static_cast<int64_t>(static_cast<double>(current_.count()) * dist(rng_)));
  }
  return delay;
}

void Backoff::reset() { current_ = std::chrono::milliseconds(0); }

}  // namespace sriovdra
