#pragma once
// The Kubernetes REST client: verbs on any resource, JSON in and out (RapidJSON documents).
// Failures come back as Status with the HTTP status and the metav1.Status reason and message of
// the server (kNotFound, kConflict, kAlreadyExists, kInvalid, kForbidden, kUnauthorized, kGone,
// kTooManyRequests, ...). 429 and 5xx answers that carry Retry-After are retried within the
// request's deadline; a 401 refreshes rotating credentials and retries once.
// Every request is counted in rest_client_requests_total{code,method,host}.
// Thread-safe; share one Client per process.
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/json.h"
#include "base/status.h"
#include "kube/config.h"
#include "kube/credentials.h"
#include "kube/object_meta.h"
#include "kube/resource.h"
#include "kube/transport.h"

namespace sriovdra::kube {

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;
  std::string continue_token;
  std::string resource_version;        // "" = most recent (quorum read), "0" = any (watch cache)
  std::string resource_version_match;  // "", "NotOlderThan", "Exact"
  std::optional<int> timeout_seconds;  // watch: server-side end of the stream
  bool allow_watch_bookmarks = false;
  // Objects come as PartialObjectMetadata: their metadata alone (list items and watch events).
  bool metadata_only = false;
};

struct DeleteOptions {
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::string propagation_policy;  // "", "Foreground", "Background", "Orphan"
  std::optional<int64_t> grace_period_seconds;
};

struct WriteOptions {
  std::string field_manager;  // required for apply
  bool force = false;         // apply: take ownership of conflicting fields
  bool dry_run = false;
  std::optional<std::chrono::milliseconds> timeout;  // unset: the config's request timeout
  // The answer holds only the written object's metadata, and the returned document just
  // {"metadata": ...}: for writers of large objects that need only their resourceVersion or
  // generation back. The API server is asked for a PartialObjectMetadata answer (as kubectl and
  // client-go's metadata client ask), so it neither encodes nor sends the rest; a server that
  // cannot answer so sends the whole object, which is read only up to its metadata
  // (json::parseMember).
  bool metadata_only = false;
};

enum class PatchType { kMerge, kJson, kStrategicMerge, kApply };

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
std::string_view watchEventTypeName(WatchEventType t);

struct WatchEvent {
  WatchEventType type;
  json::Document doc;  // the whole event line; object() is its "object" member
  const json::Value& object() const;
};

// One watch stream. next() blocks for the next event.
class Watch {
 public:
  Watch(std::unique_ptr<HttpStream> stream, std::string description);
  // nullopt: the server ended the stream (timeoutSeconds reached). kTimeout: nothing, not even a
  // bookmark, arrived within idle_timeout. kCancelled: cancel() was called.
  Result<std::optional<WatchEvent>> next(std::chrono::milliseconds idle_timeout);
  // Whether next() has a whole event received already (it returns without waiting).
  bool hasBufferedEvent() const;
  // Thread-safe.
  void cancel();

 private:
  std::unique_ptr<HttpStream> stream_;
  std::string description_;
  std::string buffer_;
  size_t scanned_ = 0;
};

struct ClientOptions {
  TransportOptions transport;
  int max_retry_after_retries = 5;
};

class Client {
 public:
  static Result<std::shared_ptr<Client>> create(const RestConfig& config,
                                                ClientOptions options = {});

  Result<json::Document> get(const ResourceType& rt, std::string_view ns, std::string_view name,
                             std::string_view subresource = {},
                             std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // The object as of `resource_version` or later: served from the API server's watch cache once
  // it holds that version (a get's resourceVersion means "not older than"), no etcd read.
  Result<json::Document> getNotOlderThan(const ResourceType& rt, std::string_view ns,
                                         std::string_view name, std::string_view resource_version);
  // One page; follow metadata.continue for more.
  Result<json::Document> list(const ResourceType& rt, std::string_view ns,
                              const ListOptions& options = {});
  // Every page (500 objects each) in one list document: `items` holds them all.
  Result<json::Document> listAll(const ResourceType& rt, std::string_view ns,
                                 ListOptions options = {});
  Result<json::Document> create(const ResourceType& rt, std::string_view ns,
                                const json::Value& object, const WriteOptions& options = {});
  // PUT; the name comes from object.metadata.name and metadata.resourceVersion guards it.
  Result<json::Document> update(const ResourceType& rt, std::string_view ns,
                                const json::Value& object, const WriteOptions& options = {},
                                std::string_view subresource = {});
  Result<json::Document> patch(const ResourceType& rt, std::string_view ns, std::string_view name,
                               PatchType type, std::string_view body,
                               const WriteOptions& options = {}, std::string_view subresource = {});
  // Server-side apply of the object (name from metadata.name) under options.field_manager.
  Result<json::Document> apply(const ResourceType& rt, std::string_view ns,
                               const json::Value& object, const WriteOptions& options,
                               std::string_view subresource = {});
  // The whole status of an object whose status this writer alone writes: an update of the
  // status subresource guarded by `resource_version` (an update costs the API server less than a
  // server-side apply of the same status, about half for a 1.5 MiB one); when the object changed
  // since that version (409), a server-side apply of the same status under
  // options.field_manager, forced, which needs no version. `object`: apiVersion, kind,
  // metadata.name and status.
  Result<json::Document> writeStatus(const ResourceType& rt, std::string_view ns,
                                     json::Document object, std::string_view resource_version,
                                     WriteOptions options);
  // An object that this writer alone writes whole (all but its status), written as the API
  // server takes it cheapest: an update under `known` (the writer's last view of its metadata),
  // a create when `known` is null. An update costs the server about a third less CPU than a
  // server-side apply of the same object (a ResourceSlice of 128 devices, bench/agent_scale) and
  // keeps the object's managedFields and status. When the server's object is not the one `known`
  // describes (409: written since; AlreadyExists; NotFound: deleted), its metadata alone is read
  // and the write made once more under it; a second failure is returned. `body(current)`: the
  // object as JSON under that metadata (null: a create), which keeps what others set in it
  // (labels, annotations, finalizers) beside the writer's own; the text stays the caller's and
  // must stay valid until the write it was asked for is answered (the next call may reuse it), so
  // a large object exists once while its write is in flight.
  Result<json::Document> replace(
      const ResourceType& rt, std::string_view ns, std::string_view name, const ObjectMeta* known,
      const std::function<std::string_view(const ObjectMeta* current)>& body,
      const WriteOptions& options);
  Status remove(const ResourceType& rt, std::string_view ns, std::string_view name,
                const DeleteOptions& options = {});
  Result<std::unique_ptr<Watch>> watch(const ResourceType& rt, std::string_view ns,
                                       const ListOptions& options);
  // POST pods/<pod>/eviction (policy/v1 Eviction): the API server deletes the pod gracefully if
  // its PodDisruptionBudgets allow. One that does not is kTooManyRequests with the server's
  // message, returned at once: the caller decides when to try again (its Retry-After is not
  // waited out here). A pod that is gone is kNotFound. With a uid, only the pod of that UID is
  // evicted (deleteOptions.preconditions.uid): another pod created under the name since is
  // kConflict, and stays.
  Status evict(std::string_view ns, std::string_view pod, std::string_view uid = {});

  // A request to any path ("/readyz", "/version"): the raw response, with auth and metrics.
  Result<HttpResponse> raw(const std::string& method, const std::string& path,
                           std::string_view body = {}, std::string_view content_type = {},
                           std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  const RestConfig& config() const { return config_; }
  const std::string& host() const { return transport_->hostPort(); }

  Client(RestConfig config, ClientOptions options, std::shared_ptr<Transport> transport,
         std::unique_ptr<CredentialProvider> credentials);

 private:
  // Sets the request's Authorization header (replacing an earlier one) and the transport's client
  // certificate from the credentials as they are now.
  Status authorize(HttpRequest& req);
  // Takes the request whole (moved in by callers): a body is never copied on its way out.
  Result<HttpResponse> send(HttpRequest req, std::chrono::milliseconds timeout,
                            bool wait_retry_after = true);
  Result<json::Document> expectObject(const Result<HttpResponse>& resp, std::string_view verb,
                                      std::string_view path, bool metadata_only = false);
  // A write (POST, PUT, PATCH) of `body` to `path` (a path refused as it was built is the error),
  // its answer read as WriteOptions say.
  Result<json::Document> write(std::string_view method, const Result<std::string>& path,
                               std::string_view body, std::string_view content_type,
                               const WriteOptions& options);

  const RestConfig config_;
  const ClientOptions options_;
  std::shared_ptr<Transport> transport_;
  std::unique_ptr<CredentialProvider> credentials_;
  std::mutex cert_mu_;
  std::string applied_cert_;  // client certificate from an exec plugin now in the transport
};

// Turns a non-2xx answer into a Status carrying the server's reason and message.
Status apiError(int http_status, std::string_view body, std::string_view verb,
                std::string_view path);

}  // namespace sriovdra::kube
