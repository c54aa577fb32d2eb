#pragma once
// What a writer's own writes put into objects, kept until its metadata-only watch brings each
// write back, so that its informer's completion (Informer::setCompletion) builds the cached object
// from it instead of reading the object again. A write is known by the resourceVersion of the
// API server's answer; the watch often delivers a write before that answer reaches the writer,
// so take() may wait for the answer of a write in flight.
//
//   call                       | effect
//   ---------------------------+-----------------------------------------------------------------
//   start(key, content)        | before sending a write of key: what it writes, answer awaited
//   answered(key, rv)          | its answer's resourceVersion; "" (the write failed) forgets key
//   take(key, rv, wait)        | the content when the last write of key was answered with rv, and
//                              | then forgets it; while that write is unanswered, waits at most
//                              | `wait` for the answer; otherwise nullopt (read the object)
//   forget(key)                | drops what is known (the writer deleted the object)
//
// An entry whose event never comes (the watch relisted past it) is replaced by the next write of
// its key. Thread-safe: the writer's workers call start/answered, the informer's thread take.
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace sriovdra::kube {

// How long a completion waits for the answer of its own write in flight before it reads instead.
inline constexpr std::chrono::milliseconds kWriteAnswerWait{2000};

template <typename Content>
class WriteCompletions {
 public:
  void start(const std::string& key, Content content) {
    std::lock_guard lock(mu_);
    writes_[key] = Write{.content = std::move(content)};
  }

  void answered(const std::string& key, const std::string& resource_version) {
    {
      std::lock_guard lock(mu_);
      if (resource_version.empty()) {
        writes_.erase(key);
      } else if (auto it = writes_.find(key); it != writes_.end()) {
        it->second.answered = true;
        it->second.resource_version = resource_version;
      }
    }
    answered_.notify_all();
  }

  std::optional<Content> take(const std::string& key, const std::string& resource_version,
                              std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    answered_.wait_for(lock, wait, [&] {
      auto it = writes_.find(key);
      return it == writes_.end() || it->second.answered;
    });
    auto it = writes_.find(key);
    if (it == writes_.end() || !it->second.answered ||
        it->second.resource_version != resource_version) {
      return std::nullopt;
    }
    std::optional<Content> out(std::move(it->second.content));
    writes_.erase(it);
    return out;
  }

  void forget(const std::string& key) {
    std::lock_guard lock(mu_);
    writes_.erase(key);
  }

 private:
  struct Write {
    bool answered = false;
    std::string resource_version;  // of the answer
    Content content;
  };
  std::mutex mu_;
  std::condition_variable answered_;
  std::map<std::string, Write> writes_;  // guarded by mu_
};

}  // namespace sriovdra::kube
