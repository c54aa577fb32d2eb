// The metrics endpoint's review budgets: one flooding source cannot spend what other sources
// need, and all sources together stay within the overall rate. Table-driven, the clock given.
#include <catch2/catch.hpp>

#include "serving/metrics_endpoint.h"

using namespace sriovdra;
using namespace std::chrono_literals;

namespace {

using SteadyClock = std::chrono::steady_clock;

// How many of `n` requests from `source` at `at` are given a review.
int granted(serving::ReviewBudgets& b, const std::string& source, int n,
            SteadyClock::time_point at) {
  int got = 0;
  for (int i = 0; i < n; ++i) got += b.take(source, at) ? 1 : 0;
  return got;
}

}  // namespace

TEST_CASE("review budgets: per source first, then overall", "[metrics][unit]") {
  const serving::ReviewBudget budget{
      .review_rate = 5, .review_burst = 20, .source_rate = 2, .source_burst = 8};
  const SteadyClock::time_point t0{};
  struct Step {
    std::string source;
    int requests;
    std::chrono::milliseconds at;
    int expected;
  };
  // Each row continues from the one before it.
  const std::vector<Step> steps = {
      {"10.0.0.66", 100, 0ms, 8},     // a flood gets its source's burst only
      {"10.0.0.66", 100, 1000ms, 2},  // then its source's rate: 2 a second
      {"10.0.0.7", 1, 1000ms, 1},     // another source is not shut out
      {"10.0.0.8", 8, 1000ms, 8},     // each source has its own burst...
      {"10.0.0.9", 8, 1000ms, 6},     // ...within the overall one: 20 + 5 refilled - 19 taken
      {"10.0.0.9", 8, 1500ms, 2},     // the overall rate refills 5 a second
      {"10.0.0.10", 1, 1500ms, 0},    // nothing is left for anyone until it refills
      {"10.0.0.10", 1, 1700ms, 1},
  };
  serving::ReviewBudgets budgets(budget, t0);
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    INFO("step " << i << ": " << s.requests << " from " << s.source << " at " << s.at.count()
                 << " ms");
    CHECK(granted(budgets, s.source, s.requests, t0 + s.at) == s.expected);
  }
}

TEST_CASE("review budgets: a bounded number of sources, none gains by being forgotten",
          "[metrics][unit]") {
  const serving::ReviewBudget budget{.review_rate = 1000,
                                     .review_burst = 1000,
                                     .source_rate = 1,
                                     .source_burst = 2,
                                     .max_sources = 2};
  const SteadyClock::time_point t0{};
  serving::ReviewBudgets budgets(budget, t0);
  CHECK(granted(budgets, "a", 5, t0) == 2);
  CHECK(granted(budgets, "b", 5, t0 + 1ms) == 2);
  // A third source: both remembered ones are spent, so the one that asked longest ago ("a") is
  // forgotten and comes back with a full bucket; that is the price of the bound, paid by the
  // source that asked least recently.
  CHECK(granted(budgets, "c", 5, t0 + 2ms) == 2);
  CHECK(granted(budgets, "b", 5, t0 + 3ms) == 0);  // still remembered: still spent
  // Once a source's bucket is full again it is forgotten first, and loses nothing by it.
  CHECK(granted(budgets, "b", 5, t0 + 3s) == 2);
  CHECK(granted(budgets, "d", 1, t0 + 6s) == 1);
  CHECK(granted(budgets, "c", 5, t0 + 6s) == 2);
}
