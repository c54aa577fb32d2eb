#pragma once
// The process-wide Prometheus registry (prometheus-cpp core), like controller-runtime's global
// metrics.Registry: every component registers its families here and /metrics serves it.
// Also the bucket layouts controller-runtime and client-go use, so dashboards carry over.
#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace sriovdra::metrics {

prometheus::Registry& registry();
std::shared_ptr<prometheus::Registry> registryPtr();

// Text exposition format 0.0.4 of everything in the registry.
std::string renderText(prometheus::Registry& r = registry());

prometheus::Histogram::BucketBoundaries exponentialBuckets(double start, double factor, int count);
// controller_runtime_reconcile_time_seconds buckets.
prometheus::Histogram::BucketBoundaries reconcileTimeBuckets();

}  // namespace sriovdra::metrics
