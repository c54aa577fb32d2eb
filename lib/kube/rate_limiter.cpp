#include "kube/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace sriovdra::kube {

using std::chrono::nanoseconds;

ItemExponentialRateLimiter::ItemExponentialRateLimiter(nanoseconds base, nanoseconds cap)
    : base_(base), cap_(cap) {}

nanoseconds ItemExponentialRateLimiter::when(const std::string& item) {
  std::lock_guard lock(mu_);
  int exp = failures_[item]++;
  // Computed in floating point so large exponents saturate at the cap instead of overflowing.
  double delay = static_cast<double>(base_.count()) * std::pow(2.0, exp);
  if (delay >= static_cast<double>(cap_.count())) return cap_;
  return nanoseconds(static_cast<int64_t>(delay));
}

void ItemExponentialRateLimiter::forget(const std::string& item) {
  std::lock_guard lock(mu_);
  failures_.erase(item);
}

int ItemExponentialRateLimiter::numRequeues(const std::string& item) {
  std::lock_guard lock(mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(double qps, int burst, Clock& clock)
    : qps_(qps), burst_(burst), clock_(clock), tokens_(burst), last_(clock.now()) {}

nanoseconds BucketRateLimiter::when(const std::string&) {
  std::lock_guard lock(mu_);
  auto now = clock_.now();
  double elapsed = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  tokens_ -= 1.0;  // reserve one token, possibly going into debt
  if (tokens_ >= 0) return nanoseconds(0);
  return std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(-tokens_ / qps_));
}

nanoseconds MaxOfRateLimiter::when(const std::string& item) {
  nanoseconds longest{0};
  for (auto& l : limiters_) longest = std::max(longest, l->when(item));
  return longest;
}

void MaxOfRateLimiter::forget(const std::string& item) {
  for (auto& l : limiters_) l->forget(item);
}

int MaxOfRateLimiter::numRequeues(const std::string& item) {
  int most = 0;
  for (auto& l : limiters_) most = std::max(most, l->numRequeues(item));
  return most;
}

std::unique_ptr<RateLimiter> defaultControllerRateLimiter(Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialRateLimiter>(std::chrono::milliseconds(5),
                                                                  std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(10.0, 100, clock));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace sriovdra::kube
