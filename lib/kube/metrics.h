#pragma once
// The metric families of the Kubernetes client stack, with controller-runtime's and client-go's
// names, help texts, labels and buckets, registered in metrics::registry() on first use.
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>

namespace sriovdra::kube::metrics {

using CounterFamily = prometheus::Family<prometheus::Counter>;
using GaugeFamily = prometheus::Family<prometheus::Gauge>;
using HistogramFamily = prometheus::Family<prometheus::Histogram>;

CounterFamily& restClientRequests();        // {code, method, host}
HistogramFamily& restClientResponseSize();  // {verb, host}, bytes of each answer's body
prometheus::Histogram::BucketBoundaries responseSizeBuckets();

GaugeFamily& workqueueDepth();                    // {name, controller}
CounterFamily& workqueueAdds();                   // {name, controller}
HistogramFamily& workqueueQueueDuration();        // {name, controller}
HistogramFamily& workqueueWorkDuration();         // {name, controller}
CounterFamily& workqueueRetries();                // {name, controller}
GaugeFamily& workqueueUnfinishedWork();           // {name, controller}
GaugeFamily& workqueueLongestRunningProcessor();  // {name, controller}
prometheus::Histogram::BucketBoundaries workqueueDurationBuckets();

CounterFamily& reconcileTotal();           // {controller, result}
CounterFamily& reconcileErrors();          // {controller}
CounterFamily& terminalReconcileErrors();  // {controller}
CounterFamily& reconcilePanics();          // {controller}
HistogramFamily& reconcileTime();          // {controller}
GaugeFamily& maxConcurrentReconciles();    // {controller}
GaugeFamily& activeWorkers();              // {controller}

GaugeFamily& leaderElectionMasterStatus();  // {name}
CounterFamily& leaderElectionSlowpath();    // {name}

}  // namespace sriovdra::kube::metrics
