#include "kube/workqueue.h"

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "kube/controller.h"
#include "kube/rate_limiter.h"
#include "metrics/registry.h"
#include "support/control_plane.h"
#include "support/fake_clock.h"
#include "support/metrics_text.h"

using namespace sriovdra;
using namespace sriovdra::kube;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::FakeClock;

TEST_CASE("per-item exponential backoff doubles from 5 ms and caps at 1000 s",
          "[workqueue][unit]") {
  ItemExponentialRateLimiter limiter(5ms, 1000s);
  struct Row {
    int failure;
    std::chrono::nanoseconds expected;
  };
  std::vector<Row> rows = {{1, 5ms},     {2, 10ms},      {3, 20ms},   {4, 40ms},
                           {10, 2560ms}, {18, 655360ms}, {19, 1000s}, {60, 1000s}};
  int failures = 0;
  for (const auto& row : rows) {
    std::chrono::nanoseconds got{};
    while (failures < row.failure) {
      got = limiter.when("key");
      ++failures;
    }
    INFO("failure " << row.failure);
    CHECK(got == row.expected);
  }
  CHECK(limiter.numRequeues("key") == 60);
  CHECK(limiter.when("other") == 5ms);
  limiter.forget("key");
  CHECK(limiter.numRequeues("key") == 0);
  CHECK(limiter.when("key") == 5ms);
}

TEST_CASE("the token bucket allows a burst of 100 then 10 per second", "[workqueue][unit]") {
  FakeClock clock;
  BucketRateLimiter bucket(10, 100, clock);
  for (int i = 0; i < 100; ++i) REQUIRE(bucket.when("x") == 0ns);
  CHECK(bucket.when("x") == 100ms);
  CHECK(bucket.when("x") == 200ms);
  clock.advance(1s);  // 10 tokens refill, the debt of 2 is paid: 8 immediate
  for (int i = 0; i < 8; ++i) REQUIRE(bucket.when("x") == 0ns);
  CHECK(bucket.when("x") == 100ms);
}

TEST_CASE("the default controller limiter is the slower of backoff and bucket",
          "[workqueue][unit]") {
  FakeClock clock;
  auto limiter = defaultControllerRateLimiter(clock);
  CHECK(limiter->when("a") == 5ms);
  CHECK(limiter->when("a") == 10ms);
  for (int i = 0; i < 98; ++i) limiter->when("b" + std::to_string(i));
  CHECK(limiter->when("c") == 100ms);  // bucket exhausted: 100 ms > c's 5 ms backoff
  CHECK(limiter->numRequeues("a") == 2);
  limiter->forget("a");
  CHECK(limiter->numRequeues("a") == 0);
}

TEST_CASE("adding an item twice queues it once", "[workqueue][unit]") {
  WorkQueue q("dedup-test");
  q.add("a");
  q.add("a");
  q.add("b");
  CHECK(q.len() == 2);
  CHECK(q.get() == "a");
  CHECK(q.get() == "b");
  CHECK(q.len() == 0);
}

TEST_CASE("an item added while processed is queued again once after done()", "[workqueue][unit]") {
  WorkQueue q("processing-test");
  q.add("a");
  auto item = q.get();
  REQUIRE(item == "a");
  q.add("a");
  q.add("a");
  CHECK(q.len() == 0);  // not handed out while a worker has it
  q.done("a");
  CHECK(q.len() == 1);
  CHECK(q.get() == "a");
  q.done("a");
  CHECK(q.len() == 0);
}

TEST_CASE("done() says when it left the queue drained", "[workqueue][unit]") {
  WorkQueue q("drained-test");
  q.add("a");
  q.add("b");
  auto a = q.get();
  auto b = q.get();
  REQUIRE((a == "a" && b == "b"));
  CHECK_FALSE(q.done("a"));  // b still running
  q.add("c");
  CHECK_FALSE(q.done("b"));  // c waiting
  REQUIRE(q.get() == "c");
  q.add("c");  // dirty: done() queues it again
  CHECK_FALSE(q.done("c"));
  REQUIRE(q.get() == "c");
  q.addAfter("later", std::chrono::hours(1));  // not ready: does not count
  CHECK(q.done("c"));
  CHECK_FALSE(q.done("c"));  // not being processed: no event
}

TEST_CASE("no item is processed by two workers at the same time", "[workqueue][unit]") {
  WorkQueue q("concurrency-test");
  std::mutex mu;
  std::map<std::string, int> active;
  std::atomic<int> violations{0};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  workers.reserve(4);
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto item = q.get()) {
        {
          std::lock_guard lock(mu);
          if (++active[*item] > 1) ++violations;
        }
        std::this_thread::yield();
        {
          std::lock_guard lock(mu);
          --active[*item];
        }
        ++processed;
        q.done(*item);
      }
    });
  }
  for (int i = 0; i < 20000; ++i) q.add("key-" + std::to_string(i % 3));
  eventually([&] { return q.len() == 0; }, 10s, [&] { return "queue not drained"; });
  q.shutDownWithDrain();
  for (auto& t : workers) t.join();
  CHECK(violations == 0);
  CHECK(processed > 0);
  CHECK(processed <= 20000);
}

TEST_CASE("addAfter makes the item available exactly when the delay has passed, not before",
          "[workqueue][unit]") {
  FakeClock clock;
  WorkQueue q("delay-test", nullptr, clock);
  q.addAfter("later", 300ms);
  q.addAfter("much-later", 1s);
  CHECK(q.len() == 0);
  clock.advance(299ms);
  CHECK(q.len() == 0);  // the lower bound: not a moment early
  clock.advance(1ms);
  CHECK(q.len() == 1);
  CHECK(q.get() == "later");
  clock.advance(699ms);
  CHECK(q.len() == 0);
  clock.advance(1ms);
  CHECK(q.get() == "much-later");
}

TEST_CASE("delayed adds of one item keep its earliest time and make it ready once",
          "[workqueue][unit]") {
  FakeClock clock;
  WorkQueue q("delay-dedup-test", nullptr, clock);
  q.addAfter("status", 30s);
  clock.advance(10s);
  q.addAfter("status", 30s);  // later than the first: no effect
  clock.advance(19s);
  CHECK(q.len() == 0);
  q.addAfter("status", 500ms);  // earlier: replaces it
  clock.advance(500ms);
  REQUIRE(q.len() == 1);
  CHECK(q.get() == "status");
  q.done("status");
  clock.advance(60s);  // the superseded entries are gone
  CHECK(q.len() == 0);
}

TEST_CASE(
    "a failed item comes back after its backoff: 5 ms, then 10 ms, then at once when forgotten",
    "[workqueue][unit]") {
  FakeClock clock;
  WorkQueue q("backoff-test", nullptr, clock);
  q.addRateLimited("flaky");
  clock.advance(4ms);
  CHECK(q.len() == 0);
  clock.advance(1ms);
  REQUIRE(q.get() == "flaky");
  q.done("flaky");
  q.addRateLimited("flaky");
  clock.advance(9ms);
  CHECK(q.len() == 0);
  clock.advance(1ms);
  REQUIRE(q.get() == "flaky");
  q.done("flaky");
  CHECK(q.numRequeues("flaky") == 2);
  q.forget("flaky");
  CHECK(q.numRequeues("flaky") == 0);
  q.addRateLimited("flaky");
  clock.advance(5ms);  // back to the first step
  CHECK(q.len() == 1);
}

TEST_CASE("a delayed item is moved by the queue itself on the real clock", "[workqueue][unit]") {
  WorkQueue q("real-delay-test");
  q.addAfter("later", 50ms);
  std::atomic<bool> got{false};
  std::thread worker([&] { got = q.get() == "later"; });  // get() blocks until it is moved
  worker.join();
  CHECK(got);
}

TEST_CASE("shutdown wakes waiting workers with no item", "[workqueue][unit]") {
  WorkQueue q("shutdown-test");
  std::atomic<bool> got_nothing{false};
  std::thread worker([&] { got_nothing = !q.get().has_value(); });
  q.shutDown();
  worker.join();
  CHECK(got_nothing);
  q.add("ignored");
  CHECK(q.len() == 0);
}

TEST_CASE("shutDownWithDrain waits for items in progress", "[workqueue][unit]") {
  WorkQueue q("drain-test");
  q.add("a");
  auto item = q.get();
  std::atomic<bool> drained{false};
  std::thread stopper([&] {
    q.shutDownWithDrain();
    drained = true;
  });
  eventually([&] { return q.shuttingDown(); }, 5s, [] { return "not shutting down"; });
  CHECK_FALSE(drained);
  q.done(*item);
  stopper.join();
  CHECK(drained);
}

TEST_CASE("controller results map to queue actions and metrics", "[controller][unit]") {
  std::mutex mu;
  std::map<std::string, int> calls;
  auto reconcile = [&](const std::string& key) -> Result<ReconcileResult> {
    int n;
    {
      std::lock_guard lock(mu);
      n = ++calls[key];
    }
    if (key == "fails-twice" && n <= 2) return Status(Code::kUnavailable, "transient");
    if (key == "refused") return errorResult(Status(Code::kInvalid, "the server refused it"));
    if (key == "again-soon" && n == 1) return ReconcileResult::after(50ms);
    return ReconcileResult::done();
  };
  Controller c("unit-results", reconcile, {.workers = 2});
  c.start();
  c.queue().add("ok");
  c.queue().add("fails-twice");
  c.queue().add("again-soon");
  c.queue().add("refused");
  auto count = [&](const std::string& key) {
    std::lock_guard lock(mu);
    return calls[key];
  };
  eventually([&] { return count("fails-twice") == 3 && count("again-soon") == 2; }, 10s,
             [&] {
               return "fails-twice=" + std::to_string(count("fails-twice")) +
                      " again-soon=" + std::to_string(count("again-soon"));
             });
  eventually([&] { return c.queue().numRequeues("fails-twice") == 0; }, 5s,
             [] { return "success did not forget the backoff"; });
  // A terminal error runs once and is not retried: no backoff is kept for its key.
  eventually([&] { return count("refused") == 1; }, 5s, [] { return "refused did not run"; });
  CHECK(c.queue().numRequeues("refused") == 0);
  c.stop();
  CHECK(count("ok") == 1);
  CHECK(count("refused") == 1);

  std::string text = metrics::renderText();
  auto sample = [&](const std::string& result) {
    return testing::sampleValue(
        text, "controller_runtime_reconcile_total{controller=\"unit-results\",result=\"" + result +
                  "\"}");
  };
  CHECK(sample("error") == 3);
  CHECK(sample("requeue_after") == 1);
  CHECK(sample("success") == 3);
  CHECK(sample("requeue") == 0);
  CHECK(testing::sampleValue(
            text, "controller_runtime_reconcile_errors_total{controller=\"unit-results\"}") == 3);
  CHECK(testing::sampleValue(text,
                             "controller_runtime_terminal_reconcile_errors_total{controller="
                             "\"unit-results\"}") == 1);
  CHECK(testing::sampleValue(
            text, "workqueue_retries_total{controller=\"unit-results\",name=\"unit-results\"}") ==
        2);
}
