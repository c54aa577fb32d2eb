#pragma once
// The process-wide Prometheus registry (prometheus-cpp core), like controller-runtime's global
// metrics.Registry: every component registers its families here and /metrics serves it.
// Families whose samples are read when scraped (the agent's per-VF counters) come from
// collectables added beside it.
// Also the bucket layouts controller-runtime and client-go use, so dashboards carry over.
#include <memory>
#include <string>

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace sriovdra::metrics {

prometheus::Registry& registry();
std::shared_ptr<prometheus::Registry> registryPtr();

// Adds a collectable whose families every renderText() includes while it lives (held weakly:
// dropping the last reference removes it). Thread-safe.
void addCollectable(const std::shared_ptr<prometheus::Collectable>& collectable);

// Text exposition format 0.0.4 of everything in the registry and of the live collectables.
std::string renderText();

prometheus::Histogram::BucketBoundaries exponentialBuckets(double start, double factor, int count);
// controller_runtime_reconcile_time_seconds buckets.
prometheus::Histogram::BucketBoundaries reconcileTimeBuckets();

}  // namespace sriovdra::metrics
