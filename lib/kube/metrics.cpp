#include "kube/metrics.h"

#include "metrics/registry.h"

namespace sriovdra::kube::metrics {
namespace {

using sriovdra::metrics::registry;

CounterFamily& counter(const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry());
}
GaugeFamily& gauge(const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry());
}
HistogramFamily& histogram(const char* name, const char* help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry());
}

}  // namespace

CounterFamily& restClientRequests() {
  static auto& f =
      counter("rest_client_requests_total",
              "Number of HTTP requests, partitioned by status code, method, and host.");
  return f;
}

HistogramFamily& restClientResponseSize() {
  static auto& f = histogram("rest_client_response_size_bytes",
                             "Response size in bytes. Broken down by verb and host.");
  return f;
}
prometheus::Histogram::BucketBoundaries responseSizeBuckets() {
  return {64, 256, 1024, 4096, 16384, 65536, 262144, 1048576};  // client-go's: 64 x 4^n
}

GaugeFamily& workqueueDepth() {
  static auto& f = gauge("workqueue_depth", "Current depth of workqueue");
  return f;
}
CounterFamily& workqueueAdds() {
  static auto& f = counter("workqueue_adds_total", "Total number of adds handled by workqueue");
  return f;
}
HistogramFamily& workqueueQueueDuration() {
  static auto& f = histogram("workqueue_queue_duration_seconds",
                             "How long in seconds an item stays in workqueue before being "
                             "requested");
  return f;
}
HistogramFamily& workqueueWorkDuration() {
  static auto& f = histogram("workqueue_work_duration_seconds",
                             "How long in seconds processing an item from workqueue takes.");
  return f;
}
CounterFamily& workqueueRetries() {
  static auto& f =
      counter("workqueue_retries_total", "Total number of retries handled by workqueue");
  return f;
}
GaugeFamily& workqueueUnfinishedWork() {
  static auto& f = gauge("workqueue_unfinished_work_seconds",
                         "How many seconds of work has been done that is in progress and hasn't "
                         "been observed by work_duration. Large values indicate stuck threads. "
                         "One can deduce the number of stuck threads by observing the rate at "
                         "which this increases.");
  return f;
}
GaugeFamily& workqueueLongestRunningProcessor() {
  static auto& f = gauge("workqueue_longest_running_processor_seconds",
                         "How many seconds has the longest running processor for workqueue been "
                         "running.");
  return f;
}
prometheus::Histogram::BucketBoundaries workqueueDurationBuckets() {
  return sriovdra::metrics::exponentialBuckets(10e-9, 10, 12);
}

CounterFamily& reconcileTotal() {
  static auto& f = counter("controller_runtime_reconcile_total",
                           "Total number of reconciliations per controller");
  return f;
}
CounterFamily& reconcileErrors() {
  static auto& f = counter("controller_runtime_reconcile_errors_total",
                           "Total number of reconciliation errors per controller");
  return f;
}
CounterFamily& terminalReconcileErrors() {
  static auto& f = counter("controller_runtime_terminal_reconcile_errors_total",
                           "Total number of terminal reconciliation errors per controller");
  return f;
}
CounterFamily& reconcilePanics() {
  static auto& f = counter("controller_runtime_reconcile_panics_total",
                           "Total number of reconciliation panics per controller");
  return f;
}
HistogramFamily& reconcileTime() {
  static auto& f = histogram("controller_runtime_reconcile_time_seconds",
                             "Length of time per reconciliation per controller");
  return f;
}
GaugeFamily& maxConcurrentReconciles() {
  static auto& f = gauge("controller_runtime_max_concurrent_reconciles",
                         "Maximum number of concurrent reconciles per controller");
  return f;
}
GaugeFamily& activeWorkers() {
  static auto& f =
      gauge("controller_runtime_active_workers", "Number of currently used workers per controller");
  return f;
}

GaugeFamily& leaderElectionMasterStatus() {
  static auto& f = gauge("leader_election_master_status",
                         "Gauge of if the reporting system is master of the relevant lease, 0 "
                         "indicates backup, 1 indicates master. 'name' is the string used to "
                         "identify the lease. Please make sure to group by name.");
  return f;
}
CounterFamily& leaderElectionSlowpath() {
  static auto& f = counter("leader_election_slowpath_total",
                           "Total number of slow path exercised in renewing leader leases. 'name' "
                           "is the string used to identify the lease. Please make sure to group "
                           "by name.");
  return f;
}

}  // namespace sriovdra::kube::metrics
