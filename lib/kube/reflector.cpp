#include "kube/reflector.h"

#include <algorithm>
#include <condition_variable>
#include <random>

#include "base/log.h"
#include "base/process.h"

namespace sriovdra::kube {
namespace {

using namespace std::chrono_literals;

int randomWatchTimeoutSeconds() {
  thread_local std::mt19937 rng(std::random_device{}());
  return std::uniform_int_distribution<int>(300, 600)(rng);
}

// Sleeps for d unless stop is requested first; returns false when stopping.
bool sleepFor(const std::stop_token& stop, std::chrono::milliseconds d) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  return !cv.wait_for(lock, stop, d, [] { return false; }) && !stop.stop_requested();
}

// The object's metadata.resourceVersion, "" when it has none.
std::string resourceVersionOf(const json::Value& obj) {
  const json::Value* md = json::objectMember(obj, "metadata");
  return md != nullptr ? std::string(json::stringOr(*md, "resourceVersion")) : "";
}

}  // namespace

int64_t nextPageLimit(size_t objects, size_t bytes, size_t page_bytes, int64_t max_objects) {
  if (max_objects <= 1) return 1;
  if (objects == 0 || bytes == 0) return max_objects;
  double per_object = static_cast<double>(bytes) / static_cast<double>(objects);
  double fit = static_cast<double>(page_bytes) / per_object;
  if (fit >= static_cast<double>(max_objects)) return max_objects;
  return std::max<int64_t>(1, static_cast<int64_t>(fit));
}

Reflector::Reflector(std::shared_ptr<Client> client, ResourceType resource, InformerOptions options,
                     ReflectorSink& sink)
    : client_(std::move(client)),
      resource_(std::move(resource)),
      options_(std::move(options)),
      sink_(sink) {}

Reflector::~Reflector() { stop(); }

void Reflector::start() {
  SDRA_CHECK(!thread_.joinable());
  thread_ = std::jthread([this](const std::stop_token& stop) { run(stop); });
}

void Reflector::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  {
    std::lock_guard lock(mu_);
    if (active_watch_) active_watch_->cancel();
  }
  thread_.join();
}

std::string Reflector::lastSyncResourceVersion() const {
  std::lock_guard lock(mu_);
  return resource_version_;
}

void Reflector::setResourceVersion(std::string rv) {
  if (rv.empty()) return;
  std::lock_guard lock(mu_);
  resource_version_ = std::move(rv);
}

void Reflector::run(const std::stop_token& stop) {
  Backoff backoff(options_.backoff);
  const std::string& name = options_.name;
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      Status st = list();
      if (st.code() == Code::kGone) {
        // Our resourceVersion is older than the server's history: list the latest state now.
        SDRA_LOG_INFO << "informer " << name << ": " << st.message()
                      << "; listing the latest state";
        continue;
      }
      if (!st.isOk()) {
        auto delay = backoff.next();
        SDRA_LOG_WARN << "informer " << name << ": list failed, retrying in " << delay.count()
                      << " ms: " << st.toString();
        if (!sleepFor(stop, delay)) return;
        continue;
      }
      need_list = false;
    }
    Status st = watch(stop);
    if (stop.stop_requested()) return;
    if (st.code() == Code::kGone) {
      auto delay = backoff.next();
      SDRA_LOG_INFO << "informer " << name << ": watch history expired (" << st.message()
                    << "); relisting in " << delay.count() << " ms";
      if (!sleepFor(stop, delay)) return;
      need_list = true;
      continue;
    }
    if (st.isOk()) {
      backoff.reset();
      continue;  // the server ended the stream; resume from the last resourceVersion
    }
    auto delay = backoff.next();
    SDRA_LOG_WARN << "informer " << name << ": watch failed, resuming in " << delay.count()
                  << " ms: " << st.toString();
    if (!sleepFor(stop, delay)) return;
  }
}

// Lists are consistent reads (resourceVersion unset), in pages of page_size: a list served from
// the watch cache (resourceVersion "0" or the last one seen) comes back in one piece whatever
// the limit (Kubernetes 1.37), which for the ResourceSlices of 5,000 nodes is over 300 MB; and
// after a 410 a list at our own version could be answered with the version the watch just
// refused, the two alternating forever.
Status Reflector::list() {
  ListOptions opts;
  opts.label_selector = options_.label_selector;
  opts.field_selector = options_.field_selector;
  opts.limit = std::min(options_.page_size, kFirstPageLimit);
  std::string list_rv;
  size_t listed = 0;
  size_t listed_bytes = 0;  // decoded JSON of the pages so far
  for (;;) {
    auto page = client_->list(resource_, options_.namespace_, opts);
    if (!page.ok()) {
      sink_.listAbandoned();  // a 410 (continue token too old) makes run() list again at once
      return page.status();
    }
    const json::Value* md = json::objectMember(*page, "metadata");
    std::string next = md != nullptr ? std::string(json::stringOr(*md, "continue")) : "";
    if (md != nullptr) list_rv = json::stringOr(*md, "resourceVersion");
    std::vector<const json::Value*> items;
    if (const json::Value* list = json::arrayMember(*page, "items")) {
      for (const auto& item : list->GetArray()) items.push_back(&item);
    }
    listed += items.size();
    listed_bytes += page->GetAllocator().Size();
    sink_.listPage(items);
    if (next.empty()) break;
    opts.continue_token = next;  // it pins the snapshot of the first page
    opts.limit = nextPageLimit(listed, listed_bytes, options_.page_bytes, options_.page_size);
  }
  sink_.listDone();
  trimHeap();
  {
    std::lock_guard lock(mu_);
    resource_version_ = list_rv;
  }
  ++lists_;
  synced_ = true;
  SDRA_VLOG(1) << "informer " << options_.name << ": listed " << listed
               << " objects at resourceVersion " << list_rv;
  return Status::ok();
}

Status Reflector::watch(const std::stop_token& stop) {
  ListOptions opts;
  opts.label_selector = options_.label_selector;
  opts.field_selector = options_.field_selector;
  opts.resource_version = lastSyncResourceVersion();
  opts.allow_watch_bookmarks = true;
  opts.timeout_seconds = randomWatchTimeoutSeconds();
  opts.metadata_only = options_.watch_metadata_only;
  auto opened = client_->watch(resource_, options_.namespace_, opts);
  if (!opened.ok()) return opened.status();
  {
    std::lock_guard lock(mu_);
    active_watch_ = std::move(*opened);
    if (stop.stop_requested()) active_watch_->cancel();
  }
  Watch* w = active_watch_.get();
  const size_t max_batch = options_.watch_metadata_only ? kMaxWatchBatch : 1;
  Status result;
  // Decoding leaves freed memory in the heap: give it back after a large event (a node's
  // SriovNodeState with thousands of VFs) and after every kTrimAfterBytes of small ones.
  constexpr size_t kLargeEventBytes = 1 << 20;
  constexpr size_t kTrimAfterBytes = 16 << 20;
  size_t decoded = 0;  // since the heap was last trimmed
  bool ended = false;
  while (!ended && result.isOk()) {
    // The events received so far, up to a bookmark, the end or an error, applied together.
    std::vector<WatchEvent> batch;
    std::string bookmark;  // the resourceVersion of a bookmark that ends the batch
    do {
      auto ev = w->next(options_.watch_idle_timeout);
      if (!ev.ok()) {
        result = ev.status();
        break;
      }
      if (!ev->has_value()) {  // server-side timeout: a normal end
        ended = true;
        break;
      }
      WatchEvent& event = **ev;
      const json::Value& obj = event.object();
      if (event.type == WatchEventType::kError) {
        int code = static_cast<int>(json::intOr(obj, "code", 500));
        result = apiError(code, json::dump(obj), "WATCH", resource_.qualifiedName());
        break;
      }
      if (event.type == WatchEventType::kBookmark) {
        bookmark = resourceVersionOf(obj);
        break;
      }
      batch.push_back(std::move(event));
    } while (batch.size() < max_batch && w->hasBufferedEvent());
    Applied applied = batch.empty() ? Applied{} : sink_.apply(batch);
    if (applied.count > 0) setResourceVersion(resourceVersionOf(batch[applied.count - 1].object()));
    if (!applied.failed.isOk()) {
      result = applied.failed;
      break;
    }
    setResourceVersion(std::move(bookmark));
    size_t largest = 0;
    for (WatchEvent& event : batch) {
      size_t size = event.doc.GetAllocator().Size();
      largest = std::max(largest, size);
      decoded += size;
    }
    if (largest >= kLargeEventBytes || decoded >= kTrimAfterBytes) {
      batch.clear();  // the events' own memory first
      trimHeap();
      decoded = 0;
    }
  }
  std::lock_guard lock(mu_);
  active_watch_.reset();
  return result;
}

}  // namespace sriovdra::kube
