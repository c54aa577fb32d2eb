#include "kube/controller.h"

#include <exception>

#include "base/log.h"
#include "kube/metrics.h"
#include "metrics/registry.h"

namespace sriovdra::kube {

Controller::Controller(std::string name, Reconciler reconciler, ControllerOptions options)
    : name_(std::move(name)),
      reconciler_(std::move(reconciler)),
      workers_(std::max(1, options.workers)),
      on_drained_(std::move(options.on_drained)),
      queue_(name_, std::move(options.rate_limiter)) {
  for (const char* result : {"success", "error", "requeue", "requeue_after"}) {
    metrics::reconcileTotal().Add({{"controller", name_}, {"result", result}});
  }
  metrics::reconcileErrors().Add({{"controller", name_}});
  metrics::terminalReconcileErrors().Add({{"controller", name_}});
  metrics::reconcilePanics().Add({{"controller", name_}});
  metrics::maxConcurrentReconciles().Add({{"controller", name_}}).Set(workers_);
  metrics::activeWorkers().Add({{"controller", name_}}).Set(0);
}

Controller::~Controller() { stop(); }

void Controller::start() {
  SDRA_CHECK(threads_.empty());
  for (int i = 0; i < workers_; ++i) threads_.emplace_back([this] { work(); });
  SDRA_LOG_INFO << "controller " << name_ << ": started " << workers_ << " worker(s)";
}

void Controller::stop() {
  if (threads_.empty()) return;
  queue_.shutDownWithDrain();
  threads_.clear();  // joins
  SDRA_LOG_INFO << "controller " << name_ << ": stopped";
}

void Controller::work() {
  while (auto key = queue_.get()) {
    reconcileOne(*key);
    if (queue_.done(*key) && on_drained_) on_drained_();
  }
}

void Controller::reconcileOne(const std::string& key) {
  auto& active = metrics::activeWorkers().Add({{"controller", name_}});
  active.Increment();
  auto start = std::chrono::steady_clock::now();
  Result<ReconcileResult> result = Status(Code::kInternal, "reconcile did not run");
  try {
    result = reconciler_(key);
  } catch (const std::exception& e) {
    metrics::reconcilePanics().Add({{"controller", name_}}).Increment();
    result = Status(Code::kInternal, std::string("reconciler threw: ") + e.what());
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  metrics::reconcileTime()
      .Add({{"controller", name_}}, sriovdra::metrics::reconcileTimeBuckets())
      .Observe(secs);
  active.Decrement();

  auto count = [&](const char* label) {
    metrics::reconcileTotal().Add({{"controller", name_}, {"result", label}}).Increment();
  };
  if (!result.ok()) {
    count("error");
    metrics::reconcileErrors().Add({{"controller", name_}}).Increment();
    SDRA_LOG_ERROR << "controller " << name_ << ": reconciling " << key << " failed (retry "
                   << queue_.numRequeues(key) + 1 << "): " << result.status().toString();
    queue_.addRateLimited(key);
    return;
  }
  if (!result->terminal_error.isOk()) {
    count("error");
    metrics::reconcileErrors().Add({{"controller", name_}}).Increment();
    metrics::terminalReconcileErrors().Add({{"controller", name_}}).Increment();
    SDRA_LOG_ERROR << "controller " << name_ << ": reconciling " << key
                   << " failed, not retried with backoff: " << result->terminal_error.toString();
    queue_.forget(key);
    if (result->requeue_after.count() > 0) queue_.addAfter(key, result->requeue_after);
  } else if (result->requeue_after.count() > 0) {
    count("requeue_after");
    queue_.forget(key);
    queue_.addAfter(key, result->requeue_after);
  } else if (result->requeue) {
    count("requeue");
    queue_.addRateLimited(key);
  } else {
    count("success");
    queue_.forget(key);
  }
}

Result<ReconcileResult> errorResult(Status error, std::chrono::milliseconds retry) {
  switch (error.code()) {
    case Code::kBadRequest:
    case Code::kTooLarge:
    case Code::kInvalid:
      return ReconcileResult::terminal(std::move(error), retry);
    default:
      return error;
  }
}

}  // namespace sriovdra::kube
