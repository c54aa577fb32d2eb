#include "kube/manager.h"

#include <condition_variable>
#include <mutex>

namespace sriovdra::kube {

Manager& Manager::add(std::string name, Start start, Stop stop) {
  parts_.push_back({std::move(name), std::move(start), std::move(stop)});
  return *this;
}

Manager& Manager::add(std::string name, std::function<void()> start, Stop stop) {
  return add(
      std::move(name),
      [start = std::move(start)](const std::stop_token&) {
        start();
        return Status::ok();
      },
      std::move(stop));
}

Manager& Manager::addCleanup(std::string name, Stop cleanup) {
  return add(
      std::move(name), [](const std::stop_token&) { return Status::ok(); }, std::move(cleanup));
}

Manager& Manager::addBackground(std::string name, std::function<void(std::stop_token)> run) {
  std::jthread* thread = background_.emplace_back(std::make_unique<std::jthread>()).get();
  return add(
      std::move(name),
      [thread, run = std::move(run)](const std::stop_token&) {
        *thread = std::jthread(run);
        return Status::ok();
      },
      [thread] {
        thread->request_stop();
        if (thread->joinable()) thread->join();
      });
}

Status Manager::run(const std::stop_token& stop) {
  for (size_t i = 0; i < parts_.size(); ++i) {
    Status started = parts_[i].start(stop);
    if (started.isOk()) continue;
    stopStarted(i);
    if (started.code() == Code::kCancelled && stop.stop_requested()) return Status::ok();
    return started.prepend(parts_[i].name);
  }
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait(lock, stop, [] { return false; });
  stopStarted(parts_.size());
  return Status::ok();
}

void Manager::stopStarted(size_t count) {
  for (size_t i = count; i-- > 0;) {
    if (parts_[i].stop) parts_[i].stop();
  }
}

bool waitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               const std::stop_token& stop) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    if (cv.wait_for(lock, stop, std::chrono::milliseconds(10), [] { return false; }) ||
        stop.stop_requested()) {
      break;
    }
  }
  return done();
}

}  // namespace sriovdra::kube
