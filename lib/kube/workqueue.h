#pragma once
// A rate-limited work queue of string keys with client-go's guarantees:
// * de-duplication: an item waiting in the queue is stored once, however often it is added;
// * an item is never handed to two workers at once: adding it while it is being processed
//   marks it dirty, and done() puts it back exactly once;
// * delayed adds (addAfter) and per-item backoff (addRateLimited, via a RateLimiter; forget()
//   resets it), timed by a Clock; an item already waiting keeps the earlier of its two times (so
//   many delayed adds of one item make it ready once): a delayed item is ready once clock.now()
//   reaches its time, and
//   len() and get() see it from then on (a background thread also moves it, at least every
//   500 ms of real time, for clocks that do not wake anyone);
// * shutDown() wakes every get() with nullopt; shutDownWithDrain() also waits until the items
//   being processed are done.
// Metrics: workqueue_depth/adds_total/queue_duration_seconds/work_duration_seconds/
// retries_total/unfinished_work_seconds/longest_running_processor_seconds{name,controller}.
// Thread-safe.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <thread>

#include "base/clock.h"
#include "kube/rate_limiter.h"

namespace prometheus {
class Gauge;
class Counter;
class Histogram;
}  // namespace prometheus

namespace sriovdra::kube {

class WorkQueue {
 public:
  using Duration = Clock::Steady::duration;

  explicit WorkQueue(std::string name, std::unique_ptr<RateLimiter> limiter = nullptr,
                     Clock& clock = realClock());
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void add(const std::string& item);
  void addAfter(const std::string& item, Duration delay);
  void addRateLimited(const std::string& item);
  void forget(const std::string& item);
  int numRequeues(const std::string& item);

  // Blocks until an item is ready; nullopt once the queue is shut down.
  std::optional<std::string> get();
  // True when this call left the queue drained: no item ready, none being processed (items
  // delayed for later do not count). Of workers finishing together, one sees it.
  bool done(const std::string& item);

  size_t len();  // also moves delayed items that are ready
  void shutDown();
  void shutDownWithDrain();
  bool shuttingDown() const;
  const std::string& name() const { return name_; }

 private:
  using TimePoint = Clock::Steady::time_point;
  void addLocked(const std::string& item);
  void promoteReadyLocked();  // delayed items whose time has come join the queue
  void waitingLoop(const std::stop_token& stop);
  void updateUnfinishedLocked();

  const std::string name_;
  std::unique_ptr<RateLimiter> limiter_;
  Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable drain_cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;
  std::map<std::string, TimePoint> processing_;  // item -> processing start
  std::map<std::string, TimePoint> added_at_;    // item -> first add while waiting
  bool shutting_down_ = false;
  bool draining_ = false;

  // Delayed items: a min-heap on ready time, served by waiting_thread_.
  struct Waiting {
    TimePoint ready;
    std::string item;
    bool operator>(const Waiting& o) const { return ready > o.ready; }
  };
  std::priority_queue<Waiting, std::vector<Waiting>, std::greater<>> waiting_;
  std::map<std::string, TimePoint> waiting_for_;  // item -> its one live ready time in waiting_
  std::condition_variable_any waiting_cv_;
  uint64_t waiting_version_ = 0;  // bumped by addAfter() to wake the waiting loop

  prometheus::Gauge& depth_;
  prometheus::Counter& adds_;
  prometheus::Histogram& queue_duration_;
  prometheus::Histogram& work_duration_;
  prometheus::Counter& retries_;
  prometheus::Gauge& unfinished_;
  prometheus::Gauge& longest_running_;

  std::jthread waiting_thread_;  // last: started after everything above exists
};

}  // namespace sriovdra::kube
