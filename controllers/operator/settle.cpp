#include "operator/settle.h"

#include <algorithm>

namespace sriovdra::op {

void Settle::changed(TimePoint now) {
  std::lock_guard lock(mu_);
  if (!first_) first_ = now;
  last_ = now;
}

std::chrono::milliseconds Settle::wait(TimePoint now) {
  std::lock_guard lock(mu_);
  if (!first_) return std::chrono::milliseconds(0);
  auto until = std::min(last_ + quiet_, *first_ + max_);
  if (now >= until) {
    first_.reset();
    return std::chrono::milliseconds(0);
  }
  return std::chrono::ceil<std::chrono::milliseconds>(until - now);
}

}  // namespace sriovdra::op
