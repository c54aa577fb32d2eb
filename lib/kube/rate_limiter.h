#pragma once
// Per-item and overall rate limiters for work queues, with client-go's semantics:
// ItemExponential: base * 2^failures, capped; Bucket: a token bucket (rate, burst) whose
// reservations may run into debt, as golang.org/x/time/rate; MaxOf: the longest of several.
// defaultControllerRateLimiter() = MaxOf(ItemExponential(5 ms, 1000 s), Bucket(10 qps, 100)).
// Thread-safe.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"

namespace sriovdra::kube {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long the item should wait before its next processing; counts a failure.
  virtual std::chrono::nanoseconds when(const std::string& item) = 0;
  // Stops tracking the item (after a success).
  virtual void forget(const std::string& item) = 0;
  virtual int numRequeues(const std::string& item) = 0;
};

class ItemExponentialRateLimiter final : public RateLimiter {
 public:
  ItemExponentialRateLimiter(std::chrono::nanoseconds base, std::chrono::nanoseconds cap);
  std::chrono::nanoseconds when(const std::string& item) override;
  void forget(const std::string& item) override;
  int numRequeues(const std::string& item) override;

 private:
  const std::chrono::nanoseconds base_;
  const std::chrono::nanoseconds cap_;
  std::mutex mu_;
  std::map<std::string, int> failures_;
};

class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(double qps, int burst, Clock& clock = realClock());
  std::chrono::nanoseconds when(const std::string& item) override;
  void forget(const std::string&) override {}
  int numRequeues(const std::string&) override { return 0; }

 private:
  const double qps_;
  const double burst_;
  Clock& clock_;
  std::mutex mu_;
  double tokens_;
  Clock::Steady::time_point last_;
};

class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  std::chrono::nanoseconds when(const std::string& item) override;
  void forget(const std::string& item) override;
  int numRequeues(const std::string& item) override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

std::unique_ptr<RateLimiter> defaultControllerRateLimiter(Clock& clock = realClock());

}  // namespace sriovdra::kube
