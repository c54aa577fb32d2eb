#include "metrics/registry.h"

#include <cmath>
#include <limits>
#include <sstream>

#include <prometheus/text_serializer.h>

namespace sriovdra::metrics {

std::shared_ptr<prometheus::Registry> registryPtr() {
  static auto r = std::make_shared<prometheus::Registry>();
  return r;
}

prometheus::Registry& registry() { return *registryPtr(); }

std::string renderText(prometheus::Registry& r) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, r.Collect());
  return out.str();
}

double sampleValue(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
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
  for (double v = 0.1; v <= 0.5001; v += 0.05) b.push_back(std::round(v * 100) / 100);
  for (double v = 0.6; v <= 1.0001; v += 0.1) b.push_back(std::round(v * 10) / 10);
  for (double v = 1.25; v <= 2.0001; v += 0.25) b.push_back(v);
  for (double v = 2.5; v <= 5.0001; v += 0.5) b.push_back(v);
  for (double v = 6; v <= 10; v += 1) b.push_back(v);
  for (double v = 15; v <= 30; v += 5) b.push_back(v);
  b.push_back(40);
  b.push_back(50);
  b.push_back(60);
  return b;
}

}  // namespace sriovdra::metrics
