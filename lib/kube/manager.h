#pragma once
// A process as a list of parts (caches, HTTP servers, webhooks, leader election, controllers,
// plugins), run the way controller-runtime's Manager runs its runnables: started in the order
// they were added, each once the one before it serves, and stopped in the reverse order.
//
//   what happens                                          | run(stop) returns, after
//   ------------------------------------------------------|------------------------------------
//   every part started, then stop requested               | ok; every part's stop()
//   a part's start() fails                                | "<part>: <error>"; the stop() of the
//                                                         |   parts before it, none after it
//   stop requested while a start() waits (it returns       | ok; the stop() of the parts before
//     kCancelled)                                          |   it
//   a background part's function returns by itself       | nothing changes; its stop() joins
//
// A start() returns once its part serves and must return promptly when `stop` is requested; one
// that fails leaves nothing of its part running (its stop() is not called). A part
// that runs until stopped (leader election) is added with addBackground(): its function runs in
// a thread of its own with a stop token of its own, which its stop() requests before joining.
// Thread-safety: add*() and run() from one thread, run() once; every start() and stop() runs on
// the thread that called run().
#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace sriovdra::kube {

class Manager {
 public:
  using Start = std::function<Status(const std::stop_token& stop)>;
  using Stop = std::function<void()>;

  Manager& add(std::string name, Start start, Stop stop = nullptr);
  // A part whose start cannot fail and does not wait.
  Manager& add(std::string name, std::function<void()> start, Stop stop = nullptr);
  // A part with nothing to start: `cleanup` runs when the parts added after it have stopped.
  Manager& addCleanup(std::string name, Stop cleanup);
  Manager& addBackground(std::string name, std::function<void(std::stop_token)> run);
  Status run(const std::stop_token& stop);

 private:
  struct Part {
    std::string name;
    Start start;
    Stop stop;
  };
  void stopStarted(size_t count);

  std::vector<Part> parts_;
  std::vector<std::unique_ptr<std::jthread>> background_;
};

// Calls done() every 10 ms until it is true, the timeout passes or stop is requested; returns
// done(). What a start() uses to wait for caches.
bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               const std::stop_token& stop);

}  // namespace sriovdra::kube
