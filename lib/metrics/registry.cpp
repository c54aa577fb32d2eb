#include "metrics/registry.h"

#include <iterator>
#include <mutex>
#include <sstream>
#include <vector>

#include <prometheus/text_serializer.h>

namespace sriovdra::metrics {

std::shared_ptr<prometheus::Registry> registryPtr() {
  static auto r = std::make_shared<prometheus::Registry>();
  return r;
}

prometheus::Registry& registry() { return *registryPtr(); }

namespace {

std::mutex collectables_mu;
std::vector<std::weak_ptr<prometheus::Collectable>> collectables;  // guarded by collectables_mu

}  // namespace

void addCollectable(const std::shared_ptr<prometheus::Collectable>& collectable) {
  std::lock_guard lock(collectables_mu);
  collectables.push_back(collectable);
}

std::string renderText() {
  auto families = registry().Collect();
  std::vector<std::shared_ptr<prometheus::Collectable>> live;
  {
    std::lock_guard lock(collectables_mu);
    std::erase_if(collectables, [](const auto& c) { return c.expired(); });
    for (const auto& c : collectables) {
      if (auto held = c.lock()) live.push_back(std::move(held));
    }
  }
  for (const auto& c : live) {
    auto more = c->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

prometheus::Histogram::BucketBoundaries exponentialBuckets(double start, double factor, int count) {
  prometheus::Histogram::BucketBoundaries out;
  double v = start;
  for (int i = 0; i < count; ++i) {
    out.push_back(v);
    v *= factor;
  }
  return out;
}

prometheus::Histogram::BucketBoundaries reconcileTimeBuckets() {
  prometheus::Histogram::BucketBoundaries b{0.005, 0.01, 0.025, 0.05};
  for (int i = 10; i <= 50; i += 5) b.push_back(i / 100.0);  // 0.1 .. 0.5
  for (int i = 6; i <= 10; ++i) b.push_back(i / 10.0);       // 0.6 .. 1.0
  for (int i = 5; i <= 8; ++i) b.push_back(i / 4.0);         // 1.25 .. 2.0
  for (int i = 5; i <= 10; ++i) b.push_back(i / 2.0);        // 2.5 .. 5.0
  for (int i = 6; i <= 10; ++i) b.push_back(i);              // 6 .. 10
  for (int i = 15; i <= 30; i += 5) b.push_back(i);          // 15 .. 30
  b.push_back(40);
  b.push_back(50);
  b.push_back(60);
  return b;
}

}  // namespace sriovdra::metrics
