#include "kube/workqueue.h"

#include <algorithm>

#include "kube/metrics.h"

namespace sriovdra::kube {
namespace {

prometheus::Labels labelsFor(const std::string& name) {
  return {{"name", name}, {"controller", name}};
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

WorkQueue::WorkQueue(std::string name, std::unique_ptr<RateLimiter> limiter, Clock& clock)
    : name_(std::move(name)),
      limiter_(limiter ? std::move(limiter) : defaultControllerRateLimiter(clock)),
      clock_(clock),
      depth_(metrics::workqueueDepth().Add(labelsFor(name_))),
      adds_(metrics::workqueueAdds().Add(labelsFor(name_))),
      queue_duration_(metrics::workqueueQueueDuration().Add(labelsFor(name_),
                                                            metrics::workqueueDurationBuckets())),
      work_duration_(metrics::workqueueWorkDuration().Add(labelsFor(name_),
                                                          metrics::workqueueDurationBuckets())),
      retries_(metrics::workqueueRetries().Add(labelsFor(name_))),
      unfinished_(metrics::workqueueUnfinishedWork().Add(labelsFor(name_))),
      longest_running_(metrics::workqueueLongestRunningProcessor().Add(labelsFor(name_))),
      waiting_thread_([this](const std::stop_token& stop) { waitingLoop(stop); }) {}

WorkQueue::~WorkQueue() {
  shutDown();
  waiting_thread_.request_stop();
  waiting_thread_.join();
}

void WorkQueue::add(const std::string& item) {
  std::lock_guard lock(mu_);
  addLocked(item);
}

void WorkQueue::addLocked(const std::string& item) {
  if (shutting_down_) return;
  if (dirty_.count(item) != 0) return;
  adds_.Increment();
  dirty_.insert(item);
  if (processing_.count(item) != 0) return;  // re-queued by done()
  queue_.push_back(item);
  added_at_.emplace(item, clock_.now());
  depth_.Set(static_cast<double>(queue_.size()));
  cv_.notify_one();
}

void WorkQueue::addAfter(const std::string& item, Duration delay) {
  if (delay <= Duration::zero()) {
    add(item);
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) return;
    TimePoint ready = clock_.now() + delay;
    auto [it, added] = waiting_for_.try_emplace(item, ready);
    if (!added) {
      if (it->second <= ready) return;  // already due at least as early
      it->second = ready;               // the heap's later entry for it is now stale
    }
    waiting_.push({ready, item});
    ++waiting_version_;
  }
  waiting_cv_.notify_one();
}

void WorkQueue::addRateLimited(const std::string& item) {
  retries_.Increment();
  addAfter(item, std::chrono::duration_cast<Duration>(limiter_->when(item)));
}

void WorkQueue::forget(const std::string& item) { limiter_->forget(item); }

int WorkQueue::numRequeues(const std::string& item) { return limiter_->numRequeues(item); }

void WorkQueue::promoteReadyLocked() {
  auto now = clock_.now();
  while (!waiting_.empty() && waiting_.top().ready <= now) {
    Waiting top = waiting_.top();
    waiting_.pop();
    auto it = waiting_for_.find(top.item);
    if (it == waiting_for_.end() || it->second != top.ready) continue;  // superseded
    waiting_for_.erase(it);
    addLocked(top.item);
  }
}

std::optional<std::string> WorkQueue::get() {
  std::unique_lock lock(mu_);
  promoteReadyLocked();
  cv_.wait(lock, [this] { return !queue_.empty() || shutting_down_; });
  if (queue_.empty()) return std::nullopt;
  std::string item = std::move(queue_.front());
  queue_.pop_front();
  depth_.Set(static_cast<double>(queue_.size()));
  auto now = clock_.now();
  if (auto it = added_at_.find(item); it != added_at_.end()) {
    queue_duration_.Observe(seconds(now - it->second));
    added_at_.erase(it);
  }
  processing_[item] = now;
  dirty_.erase(item);
  return item;
}

bool WorkQueue::done(const std::string& item) {
  std::lock_guard lock(mu_);
  auto it = processing_.find(item);
  if (it == processing_.end()) return false;
  work_duration_.Observe(seconds(clock_.now() - it->second));
  processing_.erase(it);
  if (dirty_.count(item) != 0) {
    queue_.push_back(item);
    added_at_.emplace(item, clock_.now());
    depth_.Set(static_cast<double>(queue_.size()));
    cv_.notify_one();
  }
  updateUnfinishedLocked();
  if (!processing_.empty()) return false;
  drain_cv_.notify_all();
  promoteReadyLocked();
  return queue_.empty();
}

size_t WorkQueue::len() {
  std::lock_guard lock(mu_);
  promoteReadyLocked();
  return queue_.size();
}

void WorkQueue::shutDown() {
  {
    std::lock_guard lock(mu_);
    shutting_down_ = true;
  }
  cv_.notify_all();
  waiting_cv_.notify_all();
}

void WorkQueue::shutDownWithDrain() {
  std::unique_lock lock(mu_);
  shutting_down_ = true;
  draining_ = true;
  cv_.notify_all();
  waiting_cv_.notify_all();
  drain_cv_.wait(lock, [this] { return processing_.empty(); });
}

bool WorkQueue::shuttingDown() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

void WorkQueue::updateUnfinishedLocked() {
  auto now = clock_.now();
  double total = 0;
  double longest = 0;
  for (const auto& [item, start] : processing_) {
    double s = seconds(now - start);
    total += s;
    longest = std::max(longest, s);
  }
  unfinished_.Set(total);
  longest_running_.Set(longest);
}

void WorkQueue::waitingLoop(const std::stop_token& stop) {
  std::unique_lock lock(mu_);
  while (!stop.stop_requested() && !shutting_down_) {
    promoteReadyLocked();
    updateUnfinishedLocked();
    // Wake for the next ready item (by the clock), and at least every 500 ms of real time to
    // refresh the in-progress gauges and to notice a clock that jumped.
    auto wait = std::chrono::milliseconds(500);
    if (!waiting_.empty()) {
      auto until_ready = std::chrono::duration_cast<std::chrono::milliseconds>(
          waiting_.top().ready - clock_.now() + std::chrono::milliseconds(1));
      wait = std::clamp(until_ready, std::chrono::milliseconds(0), wait);
    }
    uint64_t seen = waiting_version_;
    waiting_cv_.wait_for(lock, stop, wait,
                         [&] { return waiting_version_ != seen || shutting_down_; });
  }
}

}  // namespace sriovdra::kube
