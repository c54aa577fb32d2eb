#pragma once
// A typed informer: a Reflector feeding a cache of decoded objects, and event handlers
// (add/update/delete) called in the order the server reported the changes.
// T needs `static Result<T> decode(const json::Value&)` and a `metadata` member (ObjectMeta).
// After a relist, objects that vanished are delivered to on_delete with final_state_unknown set
// (client-go's DeletedFinalStateUnknown); objects whose resourceVersion changed to on_update.
// An object that fails to decode is logged and treated as absent; the informer keeps serving.
// Handlers run one at a time on the informer's threads and must not block for long (enqueue
// keys). Cache reads are thread-safe and return immutable snapshots (shared_ptr<const T>).
// A transform (client-go's SetTransform) trims each decoded object before it enters the cache
// and reaches the handlers, so a cache holds only the fields its readers use.
// With InformerOptions::watch_metadata_only the watch brings metadata alone, and a change is
// completed, in this order: nothing to do when the cache holds that resourceVersion or a later
// one; the completion (setCompletion) when it can build the object from the cached one (a
// writer's own write, whose content it knows); otherwise a read of the object at that version or
// later (Client::getNotOlderThan), whose failure makes the watch resume and deliver the change
// again. So a writer's own writes cost neither the API server's encoding of whole objects for
// the watch nor their decoding here; everyone else's cost a read each, and the changes that
// arrived together are read at once (eight at a time, one read per object), on threads of their
// own: then T::decode and the transform run on several threads at once.
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/log.h"
#include "base/parallel.h"
#include "kube/object_meta.h"
#include "kube/reflector.h"

namespace sriovdra::kube {

template <typename T>
concept KubeObject = requires(const json::Value& v, const T& t) {
  { T::decode(v) } -> std::same_as<Result<T>>;
  { t.metadata } -> std::convertible_to<const ObjectMeta&>;
};

template <KubeObject T>
struct EventHandlers {
  using Ptr = std::shared_ptr<const T>;
  std::function<void(const Ptr&)> on_add;
  std::function<void(const Ptr& old_obj, const Ptr& new_obj)> on_update;
  std::function<void(const Ptr& last_known, bool final_state_unknown)> on_delete;
};

// Any object, kept as its compact JSON plus decoded metadata.
struct Unstructured {
  ObjectMeta metadata;
  std::string json;
  static Result<Unstructured> decode(const json::Value& v) {
    return Unstructured{ObjectMeta::decode(v), json::dump(v)};
  }
};

template <KubeObject T>
class Informer final : private ReflectorSink {
 public:
  using Ptr = std::shared_ptr<const T>;

  Informer(std::shared_ptr<Client> client, ResourceType resource, InformerOptions options = {})
      : client_(client),
        resource_(resource),
        options_(named(std::move(options), resource)),
        reflector_(std::move(client), resource, options_, *this) {}
  ~Informer() override { stop(); }

  // Before start().
  void addHandlers(EventHandlers<T> handlers) { handlers_.push_back(std::move(handlers)); }
  // Before start(). Runs on every decoded object, on the informer's threads (with
  // watch_metadata_only on several at once, so it must be thread-safe).
  void setTransform(std::function<void(T&)> transform) { transform_ = std::move(transform); }
  // Before start(); with watch_metadata_only. Given an event's metadata and the cached object
  // (null if none), the object at that metadata, or null to read it. Runs on the informer's
  // thread; the transform is not applied to what it returns.
  void setCompletion(std::function<Ptr(const ObjectMeta& meta, const Ptr& cached)> completion) {
    completion_ = std::move(completion);
  }

  void start() {
    reflector_.start();
    if (options_.resync_period.count() > 0) {
      resync_thread_ = std::jthread([this](const std::stop_token& stop) { resyncLoop(stop); });
    }
  }
  void stop() {
    reflector_.stop();
    if (resync_thread_.joinable()) {
      resync_thread_.request_stop();
      resync_thread_.join();
    }
  }
  bool hasSynced() const { return reflector_.hasSynced(); }
  // Blocks until synced or the timeout passes; returns hasSynced().
  bool waitForSync(std::chrono::milliseconds timeout) const {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!reflector_.hasSynced() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return reflector_.hasSynced();
  }
  const Reflector& reflector() const { return reflector_; }

  Ptr get(const std::string& key) const {
    std::shared_lock lock(mu_);
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second;
  }
  Ptr get(std::string_view ns, std::string_view name) const { return get(objectKey(ns, name)); }
  std::vector<Ptr> list() const {
    std::shared_lock lock(mu_);
    std::vector<Ptr> out;
    out.reserve(items_.size());
    for (const auto& [k, v] : items_) out.push_back(v);
    return out;
  }
  std::vector<std::string> keys() const {
    std::shared_lock lock(mu_);
    std::vector<std::string> out;
    out.reserve(items_.size());
    for (const auto& [k, v] : items_) out.push_back(k);
    return out;
  }
  size_t size() const {
    std::shared_lock lock(mu_);
    return items_.size();
  }

 private:
  static InformerOptions named(InformerOptions o, const ResourceType& rt) {
    if (o.name.empty()) o.name = rt.qualifiedName();
    return o;
  }

  Ptr decode(const json::Value& obj) {
    auto decoded = T::decode(obj);
    if (!decoded.ok()) {
      ObjectMeta meta = ObjectMeta::decode(obj);
      SDRA_LOG_WARN << "informer " << options_.name << ": ignoring " << resource_.kind << " "
                    << meta.key() << " (resourceVersion " << meta.resource_version
                    << "): " << decoded.status().message();
      return nullptr;
    }
    if (transform_) transform_(*decoded);
    return std::make_shared<const T>(std::move(*decoded));
  }

  // mu_ held exclusively.
  void put(const std::string& key, Ptr obj) { items_[key] = std::move(obj); }
  Ptr erase(const std::string& key) {
    auto it = items_.find(key);
    if (it == items_.end()) return nullptr;
    Ptr old = it->second;
    items_.erase(it);
    return old;
  }

  struct Change {
    enum Kind { kAdd, kUpdate, kDelete } kind;
    Ptr old_obj;
    Ptr new_obj;
    bool final_state_unknown = false;
  };

  void dispatch(const std::vector<Change>& changes) {
    std::lock_guard lock(handler_mu_);
    for (const auto& c : changes) {
      for (const auto& h : handlers_) {
        if (c.kind == Change::kAdd && h.on_add) h.on_add(c.new_obj);
        if (c.kind == Change::kUpdate && h.on_update) h.on_update(c.old_obj, c.new_obj);
        if (c.kind == Change::kDelete && h.on_delete) h.on_delete(c.old_obj, c.final_state_unknown);
      }
    }
  }

  // A list's objects are decoded page by page into staged_, then replace the cache at once.
  void listPage(const std::vector<const json::Value*>& items) override {
    for (const json::Value* item : items) {
      if (Ptr obj = decode(*item)) staged_.push_back(std::move(obj));
    }
  }
  void listAbandoned() override { staged_.clear(); }
  void listDone() override {
    std::vector<Ptr> listed;
    listed.swap(staged_);
    std::vector<Change> changes;
    {
      std::unique_lock lock(mu_);
      std::set<std::string> seen;
      for (Ptr& obj : listed) {
        std::string key = obj->metadata.key();
        seen.insert(key);
        auto it = items_.find(key);
        if (it == items_.end()) {
          changes.push_back({Change::kAdd, nullptr, obj});
        } else if (it->second->metadata.resource_version != obj->metadata.resource_version) {
          changes.push_back({Change::kUpdate, it->second, obj});
        } else {
          continue;
        }
        put(key, std::move(obj));
      }
      std::vector<std::string> gone;
      for (const auto& [key, obj] : items_) {
        if (seen.count(key) == 0) gone.push_back(key);
      }
      for (const auto& key : gone) changes.push_back({Change::kDelete, erase(key), nullptr, true});
    }
    dispatch(changes);
  }

  Applied apply(std::span<const WatchEvent> events) override {
    if (options_.watch_metadata_only) return applyMetadata(events);
    std::vector<Change> changes;
    {
      std::unique_lock lock(mu_);
      for (const WatchEvent& event : events) {
        const json::Value& object = event.object();
        std::string key = ObjectMeta::decode(object).key();
        if (event.type == WatchEventType::kDeleted) {
          Ptr last = decode(object);
          if (Ptr old = erase(key))
            changes.push_back({Change::kDelete, last ? last : old, nullptr});
        } else {
          store(key, decode(object), changes);
        }
      }
    }
    dispatch(changes);
    return {events.size(), Status::ok()};
  }

  // An added or modified object enters the cache; one that failed to decode (null) leaves it, as
  // a deletion whose final state is unknown. mu_ held exclusively.
  void store(const std::string& key, Ptr obj, std::vector<Change>& changes) {
    if (!obj) {
      if (Ptr gone = erase(key)) changes.push_back({Change::kDelete, gone, nullptr, true});
      return;
    }
    Ptr old = getLocked(key);
    changes.push_back(old ? Change{Change::kUpdate, old, obj} : Change{Change::kAdd, nullptr, obj});
    put(key, std::move(obj));
  }

  // The events of a metadata-only watch that arrived together (see the header comment). Each is
  // resolved in order: nothing to do, the completion's object, or a read; an object's later change
  // in the batch widens its read to that version instead of reading it twice. The reads run
  // kParallelReads at a time. Then the changes enter the cache in the server's order, all but
  // those whose read failed: the first failure is returned, the events from it on come again and
  // find the others already cached.
  static constexpr size_t kParallelReads = 8;
  Applied applyMetadata(std::span<const WatchEvent> events) {
    struct Step {
      WatchEventType type = WatchEventType::kAdded;
      ObjectMeta meta;
      std::string key;
      // Nothing to store: cached already, read by an earlier step, or deleted since it changed
      // (its DELETED event follows).
      bool skip = false;
      Ptr obj;        // the completion's object or the read's (null: undecodable)
      Status failed;  // the read's failure
    };
    std::vector<Step> steps;
    steps.reserve(events.size());
    std::unordered_map<std::string, Ptr> latest;      // the cache after the steps so far
    std::unordered_map<std::string, size_t> reading;  // the step that reads an object
    std::vector<size_t> reads;  // the steps read at their meta.resource_version or later
    for (const WatchEvent& event : events) {
      Step& step = steps.emplace_back(Step{event.type, ObjectMeta::decode(event.object())});
      step.key = step.meta.key();
      if (step.type == WatchEventType::kDeleted) {
        latest[step.key] = nullptr;
        reading.erase(step.key);
        continue;
      }
      if (auto r = reading.find(step.key); r != reading.end()) {
        steps[r->second].meta.resource_version = step.meta.resource_version;
        step.skip = true;
        continue;
      }
      auto cached = latest.find(step.key);
      Ptr old = cached != latest.end() ? cached->second : get(step.key);
      if (old && atOrAfter(old->metadata.resource_version, step.meta.resource_version)) {
        step.skip = true;
        continue;
      }
      step.obj = completion_ ? completion_(step.meta, old) : nullptr;
      if (step.obj) {
        latest[step.key] = step.obj;
        continue;
      }
      reading[step.key] = steps.size() - 1;
      reads.push_back(steps.size() - 1);
    }
    forEachConcurrently(reads.size(), kParallelReads, [&](size_t i) {
      Step& step = steps[reads[i]];
      auto got = client_->getNotOlderThan(resource_, step.meta.namespace_, step.meta.name,
                                          step.meta.resource_version);
      if (got.ok()) {
        step.obj = decode(*got);
      } else if (got.status().code() == Code::kNotFound) {
        step.skip = true;
      } else {
        step.failed = got.status();
        step.failed.prepend("reading " + std::string(resource_.kind) + " " + step.key);
      }
    });
    Applied applied{events.size(), Status::ok()};
    std::vector<Change> changes;
    {
      std::unique_lock lock(mu_);
      for (size_t i = 0; i < steps.size(); ++i) {
        Step& step = steps[i];
        if (!step.failed.isOk()) {
          if (applied.failed.isOk()) applied = {i, std::move(step.failed)};
        } else if (step.type == WatchEventType::kDeleted) {
          if (Ptr old = erase(step.key)) changes.push_back({Change::kDelete, old, nullptr});
        } else if (!step.skip) {
          store(step.key, std::move(step.obj), changes);
        }
      }
    }
    dispatch(changes);
    return applied;
  }

  // Whether resourceVersion `held` is `seen` or a later one (comparable resourceVersions only).
  static bool atOrAfter(std::string_view held, std::string_view seen) {
    return held == seen ||
           (newerResourceVersion(held, seen) == held && newerResourceVersion(seen, held) == held);
  }

  Ptr getLocked(const std::string& key) const {
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second;
  }

  void resyncLoop(const std::stop_token& stop) {
    std::mutex m;
    std::condition_variable_any cv;
    for (;;) {
      {
        std::unique_lock lock(m);
        if (cv.wait_for(lock, stop, options_.resync_period, [] { return false; }) ||
            stop.stop_requested()) {
          return;
        }
      }
      if (!hasSynced()) continue;
      std::vector<Change> changes;
      for (const auto& obj : list()) changes.push_back({Change::kUpdate, obj, obj});
      dispatch(changes);
    }
  }

  const std::shared_ptr<Client> client_;
  const ResourceType resource_;
  const InformerOptions options_;
  Reflector reflector_;
  std::vector<EventHandlers<T>> handlers_;
  std::function<void(T&)> transform_;
  std::function<Ptr(const ObjectMeta&, const Ptr&)> completion_;
  std::vector<Ptr> staged_;  // the pages of a list in progress; the reflector's thread only
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, Ptr> items_;  // guarded by mu_
  std::mutex handler_mu_;
  std::jthread resync_thread_;
};

}  // namespace sriovdra::kube
