#pragma once
// Records core/v1 Events about objects, like client-go's EventRecorder + EventCorrelator:
// * an event identical to a recent one (same object, type, reason, message, source) is not
//   created again: the existing Event's count and lastTimestamp are patched;
// * more than 10 events of the same object, type and reason with different messages within
//   10 minutes are combined into one Event whose message starts "(combined from similar events): ";
// * a per-object token bucket (burst 25, one more every 5 minutes) drops event storms.
// Writes happen on a background thread with retries, so recording never blocks a reconcile.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "base/clock.h"
#include "base/time.h"
#include "kube/client.h"

namespace sriovdra::kube {

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  static ObjectReference of(const ResourceType& rt, const ObjectMeta& meta);
};

enum class EventType { kNormal, kWarning };

class EventRecorder {
 public:
  EventRecorder(std::shared_ptr<Client> client, std::string component, std::string host = {},
                Clock& clock = realClock());
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // reason: UpperCamelCase, e.g. "PolicyConflict"; message: a sentence for the user.
  void event(const ObjectReference& object, EventType type, const std::string& reason,
             const std::string& message);
  void normal(const ObjectReference& o, const std::string& reason, const std::string& message) {
    event(o, EventType::kNormal, reason, message);
  }
  void warning(const ObjectReference& o, const std::string& reason, const std::string& message) {
    event(o, EventType::kWarning, reason, message);
  }
  // Waits until everything recorded so far has been written or given up; true if drained.
  bool flush(std::chrono::milliseconds timeout);

 private:
  struct Pending {
    ObjectReference object;
    EventType type = EventType::kNormal;
    std::string reason;
    std::string message;
    std::string dedup_key;
    WallTime at;
  };
  struct Written {
    std::string name;
    std::string namespace_;
    int64_t count = 0;
    std::string first_timestamp;
  };
  struct Similar {
    std::map<std::string, int> messages;
    Clock::Steady::time_point window_start;
  };
  struct Bucket {
    double tokens = 25;
    Clock::Steady::time_point last;
  };

  void loop(const std::stop_token& stop);
  void pruneLocked(Clock::Steady::time_point now);
  Status write(const Pending& p);
  std::string sourceKey(const ObjectReference& o) const;

  std::shared_ptr<Client> client_;
  const std::string component_;
  const std::string host_;
  Clock& clock_;

  std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<Pending> queue_;
  size_t in_flight_ = 0;
  std::unordered_map<std::string, Similar> similar_;  // guarded by mu_
  std::unordered_map<std::string, Bucket> buckets_;   // guarded by mu_
  // Written events by dedup key, least recently used first (bounded); writer thread only.
  std::list<std::string> lru_;
  std::unordered_map<std::string, std::pair<Written, std::list<std::string>::iterator>> written_;
  std::jthread thread_;
};

}  // namespace sriovdra::kube
