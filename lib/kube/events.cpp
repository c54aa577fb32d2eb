#include "kube/events.h"

#include <cstdio>

#include <unistd.h>

#include "base/log.h"
#include "base/time.h"

namespace sriovdra::kube {
namespace {

constexpr size_t kMaxWritten = 4096;
constexpr int kMaxSimilarMessages = 10;
constexpr auto kSimilarWindow = std::chrono::minutes(10);
constexpr double kBurst = 25;
constexpr double kRefillPerSecond = 1.0 / 300;
constexpr int kMaxAttempts = 12;
constexpr size_t kMaxQueued = 1000;
constexpr size_t kMaxMessageBytes = 1024;

std::string hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

const char* typeName(EventType t) { return t == EventType::kWarning ? "Warning" : "Normal"; }

}  // namespace

ObjectReference ObjectReference::of(const ResourceType& rt, const ObjectMeta& meta) {
  return {rt.apiVersion(), rt.kind, meta.namespace_, meta.name, meta.uid, meta.resource_version};
}

EventRecorder::EventRecorder(std::shared_ptr<Client> client, std::string component,
                             std::string host, Clock& clock)
    : client_(std::move(client)),
      component_(std::move(component)),
      host_(host.empty() ? hostName() : std::move(host)),
      clock_(clock),
      thread_([this](const std::stop_token& stop) { loop(stop); }) {}

EventRecorder::~EventRecorder() {
  flush(std::chrono::seconds(5));
  thread_.request_stop();
  cv_.notify_all();
}

std::string EventRecorder::sourceKey(const ObjectReference& o) const {
  return component_ + "\x1f" + host_ + "\x1f" + o.kind + "\x1f" + o.namespace_ + "\x1f" + o.name +
         "\x1f" + o.uid;
}

void EventRecorder::event(const ObjectReference& object, EventType type, const std::string& reason,
                          const std::string& message) {
  std::string msg =
      message.size() > kMaxMessageBytes ? message.substr(0, kMaxMessageBytes) : message;
  auto now = clock_.now();
  std::string source = sourceKey(object);
  std::lock_guard lock(mu_);
  pruneLocked(now);

  // Spam filter per object.
  Bucket& bucket = buckets_[source];
  if (bucket.last == Clock::Steady::time_point{}) bucket.last = now;
  bucket.tokens =
      std::min(kBurst, bucket.tokens + std::chrono::duration<double>(now - bucket.last).count() *
                                           kRefillPerSecond);
  bucket.last = now;
  if (bucket.tokens < 1) {
    SDRA_VLOG(2) << "event dropped by the spam filter: " << object.kind << " " << object.name << " "
                 << reason;
    return;
  }
  bucket.tokens -= 1;

  // Aggregation of similar events (same object, type, reason; different messages).
  std::string similar_key = source + "\x1f" + typeName(type) + "\x1f" + reason;
  Similar& similar = similar_[similar_key];
  if (now - similar.window_start > kSimilarWindow) {
    similar.messages.clear();
    similar.window_start = now;
  }
  similar.messages[msg]++;
  std::string dedup_key = similar_key + "\x1f" + msg;
  if (static_cast<int>(similar.messages.size()) > kMaxSimilarMessages) {
    msg = "(combined from similar events): " + msg;
    dedup_key = similar_key + "\x1f(combined)";
  }
  if (queue_.size() >= kMaxQueued) {
    SDRA_LOG_WARN << "event queue full, dropping " << reason << " for " << object.kind << " "
                  << object.name;
    return;
  }
  queue_.push_back({object, type, reason, msg, dedup_key, clock_.wallNow()});
  cv_.notify_all();
}

void EventRecorder::pruneLocked(Clock::Steady::time_point now) {
  if (buckets_.size() > kMaxWritten) {
    // A bucket that has refilled completely behaves like a new one: forget it.
    std::erase_if(buckets_, [&](const auto& kv) {
      double refill =
          std::chrono::duration<double>(now - kv.second.last).count() * kRefillPerSecond;
      return kv.second.tokens + refill >= kBurst;
    });
  }
  if (similar_.size() > kMaxWritten) {
    std::erase_if(similar_,
                  [&](const auto& kv) { return now - kv.second.window_start > kSimilarWindow; });
  }
}

bool EventRecorder::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return queue_.empty() && in_flight_ == 0; });
}

void EventRecorder::loop(const std::stop_token& stop) {
  for (;;) {
    Pending p;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, stop, [this] { return !queue_.empty(); });
      if (queue_.empty()) return;  // stop requested
      p = std::move(queue_.front());
      queue_.pop_front();
      ++in_flight_;
    }
    for (int attempt = 1;; ++attempt) {
      Status st = write(p);
      if (st.isOk() || !st.isTransient() || attempt >= kMaxAttempts || stop.stop_requested()) {
        if (!st.isOk()) {
          SDRA_LOG_WARN << "could not write event " << p.reason << " for " << p.object.kind << " "
                        << p.object.namespace_ << "/" << p.object.name << ": " << st.toString();
        }
        break;
      }
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, stop, std::chrono::milliseconds(500 * attempt), [] { return false; });
    }
    std::lock_guard lock(mu_);
    --in_flight_;
    cv_.notify_all();
  }
}

Status EventRecorder::write(const Pending& p) {
  std::string ts = formatRfc3339(p.at);
  auto found = written_.find(p.dedup_key);
  if (found != written_.end()) {
    Written& w = found->second.first;
    lru_.splice(lru_.end(), lru_, found->second.second);
    json::Document patch(rapidjson::kObjectType);
    auto& a = patch.GetAllocator();
    patch.AddMember("count", w.count + 1, a);
    json::setString(patch, "lastTimestamp", ts, a);
    json::setString(patch, "message", p.message, a);
    auto patched = client_->patch(resources::kEvents, w.namespace_, w.name, PatchType::kMerge,
                                  json::dump(patch));
    if (patched.ok()) {
      ++w.count;
      return Status::ok();
    }
    if (patched.status().code() != Code::kNotFound) return patched.status();
    lru_.erase(found->second.second);
    written_.erase(found);  // the Event expired (TTL): create a new one below
  }

  std::string ns = p.object.namespace_.empty() ? "default" : p.object.namespace_;
  char suffix[32];
  std::snprintf(
      suffix, sizeof suffix, ".%llx",
      static_cast<unsigned long long>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(p.at.time_since_epoch()).count()));
  std::string name = p.object.name + suffix;
  json::Document ev = newObject(resources::kEvents, ns, name);
  auto& a = ev.GetAllocator();
  json::Value involved(rapidjson::kObjectType);
  json::setString(involved, "apiVersion", p.object.api_version, a);
  json::setString(involved, "kind", p.object.kind, a);
  if (!p.object.namespace_.empty()) json::setString(involved, "namespace", p.object.namespace_, a);
  json::setString(involved, "name", p.object.name, a);
  if (!p.object.uid.empty()) json::setString(involved, "uid", p.object.uid, a);
  if (!p.object.resource_version.empty()) {
    json::setString(involved, "resourceVersion", p.object.resource_version, a);
  }
  ev.AddMember("involvedObject", involved, a);
  json::setString(ev, "reason", p.reason, a);
  json::setString(ev, "message", p.message, a);
  json::setString(ev, "type", typeName(p.type), a);
  json::Value source(rapidjson::kObjectType);
  json::setString(source, "component", component_, a);
  json::setString(source, "host", host_, a);
  ev.AddMember("source", source, a);
  json::setString(ev, "firstTimestamp", ts, a);
  json::setString(ev, "lastTimestamp", ts, a);
  ev.AddMember("count", 1, a);
  json::setString(ev, "reportingComponent", component_, a);
  json::setString(ev, "reportingInstance", host_, a);
  auto created = client_->create(resources::kEvents, ns, ev);
  if (!created.ok()) return created.status();
  lru_.push_back(p.dedup_key);
  written_[p.dedup_key] = {Written{name, ns, 1, ts}, std::prev(lru_.end())};
  if (written_.size() > kMaxWritten) {
    written_.erase(lru_.front());
    lru_.pop_front();
  }
  return Status::ok();
}

}  // namespace sriovdra::kube
