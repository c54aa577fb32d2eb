#pragma once
// The list+watch loop behind an informer (client-go's Reflector), independent of the object
// type. It lists (consistent reads, paging with `limit`/`continue`, pages sized by bytes as well
// as by count), hands the full state to a
// ReflectorSink page by page (and gives the freed list memory back to the system: a large list
// otherwise leaves its size in the heap; so do a watch event over 1 MiB and every 16 MiB of
// smaller ones), then watches from the list's resourceVersion with
// bookmarks and a randomised 5-10 min timeoutSeconds, resuming from the last seen
// resourceVersion when a stream ends or breaks.
// A 410 Gone (compacted history, restarted apiserver) leads to a relist, after which the sink
// reconciles its state (objects that vanished meanwhile are reported as deleted). Failures back
// off 0.8 s -> 30 s with jitter, reset after 2 min of health. Runs on its own thread.
#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/backoff.h"
#include "kube/client.h"

namespace sriovdra::kube {

struct InformerOptions {
  std::string name;        // for logs and metrics; defaults to the resource's plural
  std::string namespace_;  // "" = all namespaces / cluster-scoped
  std::string label_selector;
  std::string field_selector;
  // Lists come in pages of at most page_size objects and about page_bytes of decoded JSON: the
  // first page holds kFirstPageLimit objects, each later one as many as fit page_bytes at the
  // size of those seen so far, so a list of large objects (a SriovNodeState with thousands of
  // VFs, a ResourceSlice of 128 devices) never holds hundreds of them in memory at once.
  int64_t page_size = 500;
  size_t page_bytes = 1 << 20;
  std::chrono::milliseconds resync_period{0};  // 0 = never replay the cache to handlers
  // The watch brings only metadata (PartialObjectMetadata); the sink completes each change (see
  // Informer::setCompletion). Lists still bring whole objects.
  bool watch_metadata_only = false;
  // A watch that delivers nothing (not even the ~1/min bookmarks) for this long is restarted.
  std::chrono::milliseconds watch_idle_timeout{std::chrono::minutes(3)};
  BackoffPolicy backoff;
};

inline constexpr int64_t kFirstPageLimit = 16;

// The limit of a list's next page: as many objects as fit `page_bytes` at the mean size of the
// `objects` that took `bytes` so far, within [1, max_objects]. Pure.
int64_t nextPageLimit(size_t objects, size_t bytes, size_t page_bytes, int64_t max_objects);

// Receives what the reflector learns; called only from the reflector's thread.
// A list (the initial one and every relist) arrives page by page: listPage() with each page's
// objects, whose JSON is freed right after the call (so a sink keeps what it needs, decoded, and a
// list of thousands of large objects never exists as JSON all at once), then listDone(): the
// pages together are the complete state at a resourceVersion. A list that fails part way ends
// with listAbandoned() instead, and the pages seen must be forgotten. apply() gets watch events
// in the server's order, bookmarks aside: one at a time, or with watch_metadata_only all that had
// arrived together (at most kMaxWatchBatch), so a sink can complete them at once. It returns how
// many it applied: all, or those before the first it could not apply, with that error, which
// ends the watch before that event counts as seen, so it and those after it come again when the
// watch resumes (after the usual backoff).
inline constexpr size_t kMaxWatchBatch = 64;
struct Applied {
  size_t count = 0;
  Status failed;  // OK when count is all of them
};
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  virtual void listPage(const std::vector<const json::Value*>& items) = 0;
  virtual void listDone() = 0;
  virtual void listAbandoned() = 0;
  virtual Applied apply(std::span<const WatchEvent> events) = 0;
};
class Reflector {
 public:
  Reflector(std::shared_ptr<Client> client, ResourceType resource, InformerOptions options,
            ReflectorSink& sink);
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void start();
  void stop();  // idempotent; joins the thread
  bool hasSynced() const { return synced_.load(); }
  std::string lastSyncResourceVersion() const;
  // Number of completed lists (1 after the initial sync); relists add to it.
  int64_t listCount() const { return lists_.load(); }

 private:
  void run(const std::stop_token& stop);
  Status list();
  Status watch(const std::stop_token& stop);
  void setResourceVersion(std::string rv);  // "" leaves the last one

  std::shared_ptr<Client> client_;
  const ResourceType resource_;
  const InformerOptions options_;
  ReflectorSink& sink_;
  std::atomic<bool> synced_{false};
  std::atomic<int64_t> lists_{0};
  mutable std::mutex mu_;
  std::string resource_version_;         // guarded by mu_
  std::unique_ptr<Watch> active_watch_;  // guarded by mu_, so stop() can cancel it
  std::jthread thread_;
};

}  // namespace sriovdra::kube
