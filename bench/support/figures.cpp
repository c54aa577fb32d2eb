#include "support/figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sriovdra::bench {
namespace {

std::string thousands(double v) {
  std::string digits = std::to_string(static_cast<long long>(std::llround(v)));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    size_t left = digits.size() - i;  // digits from here to the end
    if (i != 0 && left % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

std::string printf1(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

std::string formatValue(double v, Unit unit) {
  switch (unit) {
    case Unit::kSeconds:
      return v < 1 ? printf1("%.0f ms", v * 1000) : printf1("%.2f s", v);
    case Unit::kBytes:
      return v < 1024 * 1024 ? printf1("%.1f KiB", v / 1024.0)
                             : printf1("%.1f MiB", v / (1024.0 * 1024.0));
    case Unit::kCount:
      break;
  }
  return thousands(v);
}

bool Report::print() const {
  std::printf("# %s\n\n", title_.c_str());
  size_t what_width = 4;
  for (const auto& f : figures_) what_width = std::max(what_width, f.what.size());
  std::printf("| %-*s | %12s | %12s | %6s | %5s | floor |\n", static_cast<int>(what_width), "what",
              "ours", "floor", "ratio", "goal");
  std::printf("|%s|--------------|--------------|--------|-------|-------|\n",
              std::string(what_width + 2, '-').c_str());
  bool all_met = true;
  for (const auto& f : figures_) {
    all_met = all_met && f.meetsGoal();
    std::string goal = f.goal > 0 ? printf1("%.2f", f.goal) : "";
    std::printf("| %-*s | %12s | %12s | %6.2f | %5s | %s%s |\n", static_cast<int>(what_width),
                f.what.c_str(), formatValue(f.ours, f.unit).c_str(),
                formatValue(f.floor, f.unit).c_str(), f.ratio(), goal.c_str(), f.floor_is.c_str(),
                f.meetsGoal() ? "" : " (MISSES THE GOAL)");
  }
  if (!notes_.empty()) std::printf("\n");
  for (const auto& n : notes_) std::printf("%s\n", n.c_str());
  std::printf("\n");
  for (const auto& f : figures_) {
    std::printf("figure %s ours=%.6g floor=%.6g ratio=%.4f\n", f.name.c_str(), f.ours, f.floor,
                f.ratio());
  }
  std::fflush(stdout);
  return all_met;
}

void Report::addMedianAndP99(const std::string& name, const std::string& what,
                             const std::string& floor_is, const std::vector<double>& ours,
                             const std::vector<double>& floor) {
  add({.name = name,
       .what = what + " (p50)",
       .ours = percentile(ours, 0.5),
       .floor = percentile(floor, 0.5),
       .floor_is = floor_is + " (p50)"});
  add({.name = name + "_p99",
       .what = "the same, p99",
       .ours = percentile(ours, 0.99),
       .floor = percentile(floor, 0.99),
       .floor_is = floor_is + " (p99)"});
}

std::optional<long> countArgument(int argc, char** argv, long fallback, long min, long max,
                                  int index) {
  if (argc <= index) return fallback;
  const char* text = argv[index];
  char* end = nullptr;
  long n = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || n < min || n > max) return std::nullopt;
  return n;
}

double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  size_t i =
      std::min(samples.size() - 1, static_cast<size_t>(q * static_cast<double>(samples.size())));
  return samples[i];
}

}  // namespace sriovdra::bench
