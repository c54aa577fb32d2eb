#pragma once
// Runs a reconcile function over the keys of a WorkQueue with N workers, with
// controller-runtime's result semantics:
//   error          -> addRateLimited(key)                 result="error"
//   terminal error -> forget(key), logged; addAfter(key,   result="error", also counted in
//                     after) when it has one              _terminal_reconcile_errors_total
//   requeue_after  -> forget(key), addAfter(key, after)   result="requeue_after"
//   requeue        -> addRateLimited(key)                 result="requeue"
//   success        -> forget(key)                         result="success"
// A terminal error (controller-runtime's reconcile.TerminalError) is one no quick retry fixes:
// bad input the API server refused as such (errorResult()); the key runs again on its next
// event, or after its slow retry (`requeue_after`) for what can change unwatched (an admission
// policy or webhook, an API server upgraded to accept the field).
// An exception escaping the reconciler is logged, counted as a panic and treated as an error.
// After a reconcile that left the queue drained (nothing ready, nothing running), on_drained
// runs on that worker: an explicit event for whoever waits for this controller to settle.
// Metrics: controller_runtime_reconcile_total{controller,result}, _errors_total,
// _terminal_reconcile_errors_total, _panics_total, _reconcile_time_seconds,
// _max_concurrent_reconciles, _active_workers.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "kube/workqueue.h"

namespace sriovdra::kube {

struct ReconcileResult {
  std::chrono::milliseconds requeue_after{0};
  bool requeue = false;
  Status terminal_error;  // not OK: a terminal error (see the table above)
  static ReconcileResult done() { return {}; }
  static ReconcileResult after(std::chrono::milliseconds d) { return {d, false}; }
  static ReconcileResult terminal(Status error,
                                  std::chrono::milliseconds retry = std::chrono::milliseconds(0)) {
    return {retry, false, std::move(error)};
  }
};

using Reconciler = std::function<Result<ReconcileResult>(const std::string& key)>;

// What a reconciler returns for a failed write: a terminal error (retried after `retry`, if
// any) when the API server refused the object itself (400 BadRequest, 413 too large, 422
// Invalid: a retry with backoff does not fix it), the error to retry with backoff otherwise.
Result<ReconcileResult> errorResult(Status error,
                                    std::chrono::milliseconds retry = std::chrono::milliseconds(0));

struct ControllerOptions {
  int workers = 1;
  std::unique_ptr<RateLimiter> rate_limiter;  // default: defaultControllerRateLimiter()
  std::function<void()> on_drained;
};

class Controller {
 public:
  Controller(std::string name, Reconciler reconciler, ControllerOptions options = {});
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  WorkQueue& queue() { return queue_; }
  const std::string& name() const { return name_; }
  void start();
  // Stops taking work, lets running reconciles finish, joins the workers. Idempotent.
  void stop();

 private:
  void work();
  void reconcileOne(const std::string& key);

  const std::string name_;
  Reconciler reconciler_;
  const int workers_;
  std::function<void()> on_drained_;
  WorkQueue queue_;
  std::vector<std::jthread> threads_;
};

}  // namespace sriovdra::kube
