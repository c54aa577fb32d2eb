#include "kube/manager.h"

#include <atomic>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

using sriovdra::Code;
using sriovdra::Status;
using sriovdra::kube::Manager;

namespace {

// Parts "a", "b", "c" that log their starts and stops; `failing` fails its start with `code`,
// and the part named `stopper` requests the run's stop from its start (so run() returns without
// another thread).
struct Case {
  const char* name;
  const char* failing;  // "" = none
  Code code;
  const char* stopper;  // "" = none: stop is requested before run()
  std::vector<std::string> log;
  Code result;
  const char* message;  // of run()'s result
};

}  // namespace

TEST_CASE("parts start in order and stop in reverse; a failed start stops only those before it",
          "[manager][unit]") {
  const std::vector<Case> cases = {
      {"all start, then stop",
       "",
       Code::kOk,
       "c",
       {"start a", "start b", "start c", "stop c", "stop b", "stop a"},
       Code::kOk,
       ""},
      {"b fails: a stops, c never starts",
       "b",
       Code::kTimeout,
       "",
       {"start a", "start b", "stop a"},
       Code::kTimeout,
       "b: broken"},
      {"b gives up because stop was requested: a clean stop",
       "b",
       Code::kCancelled,
       "a",
       {"start a", "start b", "stop a"},
       Code::kOk,
       ""},
      {"b says cancelled while nobody asked to stop: an error",
       "b",
       Code::kCancelled,
       "",
       {"start a", "start b", "stop a"},
       Code::kCancelled,
       "b: broken"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      std::vector<std::string> log;
      std::stop_source stop;
      Manager m;
      for (std::string part : {"a", "b", "c"}) {
        m.add(
            part,
            [&, part](const std::stop_token&) {
              log.push_back("start " + part);
              if (part == c.stopper) stop.request_stop();
              return part == c.failing ? Status(c.code, "broken") : Status::ok();
            },
            [&, part] { log.push_back("stop " + part); });
      }
      Status ran = m.run(stop.get_token());
      CHECK(log == c.log);
      CHECK(ran.code() == c.result);
      CHECK(ran.message() == c.message);
    }
  }
}

TEST_CASE("a background part runs on its own thread until the run stops", "[manager][unit]") {
  std::stop_source stop;
  std::atomic<bool> running = false, stopped_by_its_token = false;
  Manager m;
  m.addBackground("loop", [&](std::stop_token token) {
    running = true;
    while (!token.stop_requested()) std::this_thread::yield();
    stopped_by_its_token = true;
  });
  m.add("stopper", [&] {
    while (!running) std::this_thread::yield();  // the loop is running now
    stop.request_stop();
  });
  CHECK(m.run(stop.get_token()).isOk());
  CHECK(stopped_by_its_token);  // joined before run() returned
}

TEST_CASE("a cleanup part runs once the parts added after it have stopped", "[manager][unit]") {
  std::vector<std::string> log;
  std::stop_source stop;
  Manager m;
  m.addCleanup("flush", [&] { log.push_back("flush"); });
  m.add(
      "server", [&] { stop.request_stop(); }, [&] { log.push_back("stop server"); });
  CHECK(m.run(stop.get_token()).isOk());
  CHECK(log == std::vector<std::string>{"stop server", "flush"});
}

TEST_CASE("waitUntil returns as soon as stop is requested", "[manager][unit]") {
  std::stop_source stop;
  stop.request_stop();
  CHECK_FALSE(
      sriovdra::kube::waitUntil([] { return false; }, std::chrono::hours(1), stop.get_token()));
  CHECK(sriovdra::kube::waitUntil([] { return true; }, std::chrono::hours(1), stop.get_token()));
}
