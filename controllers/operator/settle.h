#pragma once
// Waiting for a burst of policy changes to end before rendering the nodes. A policy set usually
// arrives as several objects in a row (kubectl apply -f dir/, a GitOps sync), and a node rendered
// in the middle of it is written twice. The nodes are rendered once no change came for `quiet`,
// and at the latest `max` after the first change of the burst, so that a steady stream of changes
// is still rendered. No clock of its own: callers pass the time.
// Thread-safe.
#include <chrono>
#include <mutex>
#include <optional>

namespace sriovdra::op {

class Settle {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  Settle(std::chrono::milliseconds quiet, std::chrono::milliseconds max)
      : quiet_(quiet), max_(max) {}
  // A change at `now`.
  void changed(TimePoint now);
  // How long to wait yet before rendering; zero: render now (the burst is over and forgotten,
  // or there was none).
  std::chrono::milliseconds wait(TimePoint now);

 private:
  const std::chrono::milliseconds quiet_;
  const std::chrono::milliseconds max_;
  std::mutex mu_;
  std::optional<TimePoint> first_;  // guarded by mu_: the burst's first change
  TimePoint last_;                  // guarded by mu_: its latest
};

}  // namespace sriovdra::op
