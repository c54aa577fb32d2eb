#include "kube/client.h"

#include <thread>

#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>

#include "base/log.h"
#include "kube/metrics.h"

namespace sriovdra::kube {
namespace {

using std::chrono::milliseconds;

constexpr size_t kMaxWatchEventBytes = 64u << 20;
constexpr size_t kMaxWatchErrorBody = 1u << 20;
constexpr std::string_view kApplyContentType = "application/apply-patch+yaml";
// WriteOptions::metadata_only: the object's metadata as a PartialObjectMetadata, or the whole
// object from a server that cannot convert it.
constexpr std::string_view kMetadataOnlyAccept =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

void countRequest(const std::string& code, const std::string& method, const std::string& host) {
  metrics::restClientRequests()
      .Add({{"code", code}, {"method", method}, {"host", host}})
      .Increment();
}

void countResponseSize(const std::string& method, const std::string& host, size_t bytes) {
  metrics::restClientResponseSize()
      .Add({{"verb", method}, {"host", host}}, metrics::responseSizeBuckets())
      .Observe(static_cast<double>(bytes));
}

std::string encode(std::string_view v) {
  return boost::urls::encode(v, boost::urls::unreserved_chars);
}

void addParam(std::string& q, std::string_view key, std::string_view value) {
  q += q.empty() ? '?' : '&';
  q += key;
  q += '=';
  q += encode(value);
}

std::string listQuery(const ListOptions& o, bool watch) {
  std::string q;
  if (watch) addParam(q, "watch", "true");
  if (!o.label_selector.empty()) addParam(q, "labelSelector", o.label_selector);
  if (!o.field_selector.empty()) addParam(q, "fieldSelector", o.field_selector);
  if (o.limit > 0) addParam(q, "limit", std::to_string(o.limit));
  if (!o.continue_token.empty()) addParam(q, "continue", o.continue_token);
  if (!o.resource_version.empty()) addParam(q, "resourceVersion", o.resource_version);
  if (!o.resource_version_match.empty()) {
    addParam(q, "resourceVersionMatch", o.resource_version_match);
  }
  if (o.timeout_seconds) addParam(q, "timeoutSeconds", std::to_string(*o.timeout_seconds));
  if (o.allow_watch_bookmarks) addParam(q, "allowWatchBookmarks", "true");
  return q;
}

std::string writeQuery(const WriteOptions& o, bool apply) {
  std::string q;
  if (!o.field_manager.empty()) addParam(q, "fieldManager", o.field_manager);
  if (apply && o.force) addParam(q, "force", "true");
  if (o.dry_run) addParam(q, "dryRun", "All");
  return q;
}

// etcd refuses objects over its request limit (--max-request-bytes, 1.5 MiB by default); the API
// server passes that on as a 500 whose message names the limit.
bool exceedsStorageLimit(std::string_view message) {
  return message.find("request is too large") != std::string_view::npos ||
         message.find("larger than max") != std::string_view::npos;
}

Code codeForHttp(int status, std::string_view reason, std::string_view message) {
  if (status == 500 && exceedsStorageLimit(message)) return Code::kTooLarge;
  switch (status) {
    case 400:
      return Code::kBadRequest;
    case 401:
      return Code::kUnauthorized;
    case 403:
      return Code::kForbidden;
    case 404:
      return Code::kNotFound;
    case 409:
      return reason == "AlreadyExists" ? Code::kAlreadyExists : Code::kConflict;
    case 410:
      return Code::kGone;
    case 413:
      return Code::kTooLarge;
    case 422:
      return Code::kInvalid;
    case 429:
      return Code::kTooManyRequests;
    case 504:
      return Code::kTimeout;
    default:
      return status >= 500 ? Code::kUnavailable : Code::kInternal;
  }
}

std::string_view objectName(const json::Value& obj) {
  const json::Value* md = json::objectMember(obj, "metadata");
  return md != nullptr ? json::stringOr(*md, "name") : std::string_view();
}

}  // namespace

Status apiError(int http_status, std::string_view body, std::string_view verb,
                std::string_view path) {
  std::string reason;
  std::string message;
  auto doc = json::parse(body);
  if (doc.ok() && doc->IsObject() && json::stringOr(*doc, "kind") == "Status") {
    reason = json::stringOr(*doc, "reason");
    message = json::stringOr(*doc, "message");
  }
  if (message.empty()) {
    message = std::string(verb) + " " + std::string(path) + ": HTTP " + std::to_string(http_status);
    if (!body.empty() && body.size() < 512) message += ": " + std::string(body);
  }
  Status st(codeForHttp(http_status, reason, message), message);
  st.withHttp(http_status, reason);
  return st;
}

std::string_view watchEventTypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

const json::Value& WatchEvent::object() const {
  static const json::Value kNull;
  const json::Value* o = json::member(doc, "object");
  return o != nullptr ? *o : kNull;
}

Watch::Watch(std::unique_ptr<HttpStream> stream, std::string description)
    : stream_(std::move(stream)), description_(std::move(description)) {}

void Watch::cancel() { stream_->cancel(); }

bool Watch::hasBufferedEvent() const {
  size_t start = buffer_.find_first_not_of(" \r\n");
  return start != std::string::npos && buffer_.find('\n', start) != std::string::npos;
}

Result<std::optional<WatchEvent>> Watch::next(milliseconds idle_timeout) {
  for (;;) {
    size_t nl = buffer_.find('\n', scanned_);
    if (nl == std::string::npos) {
      scanned_ = buffer_.size();
      if (buffer_.size() > kMaxWatchEventBytes) {
        return Status(Code::kInternal, description_ + ": a watch event is larger than " +
                                           std::to_string(kMaxWatchEventBytes) + " bytes");
      }
      auto got = stream_->read(buffer_, idle_timeout);
      if (!got.ok()) return std::move(got).takeStatus();
      if (*got == 0) {
        if (buffer_.find_first_not_of(" \r\n") != std::string::npos) {
          return Status(Code::kUnavailable, description_ + ": stream ended inside an event");
        }
        return std::optional<WatchEvent>();
      }
      continue;
    }
    std::string_view line(buffer_.data(), nl);
    if (line.find_first_not_of(" \r") == std::string_view::npos) {
      buffer_.erase(0, nl + 1);
      scanned_ = 0;
      continue;
    }
    auto doc = json::parse(line);
    buffer_.erase(0, nl + 1);
    scanned_ = 0;
    if (!doc.ok() || !doc->IsObject()) {
      return Status(Code::kInternal,
                    description_ + ": undecodable watch event: " + doc.status().message());
    }
    std::string_view type = json::stringOr(*doc, "type");
    WatchEventType t;
    if (type == "ADDED") {
      t = WatchEventType::kAdded;
    } else if (type == "MODIFIED") {
      t = WatchEventType::kModified;
    } else if (type == "DELETED") {
      t = WatchEventType::kDeleted;
    } else if (type == "BOOKMARK") {
      t = WatchEventType::kBookmark;
    } else if (type == "ERROR") {
      t = WatchEventType::kError;
    } else {
      return Status(Code::kInternal,
                    description_ + ": unknown watch event type \"" + std::string(type) + "\"");
    }
    return std::optional<WatchEvent>(WatchEvent{t, std::move(*doc)});
  }
}

Client::Client(RestConfig config, ClientOptions options, std::shared_ptr<Transport> transport,
               std::unique_ptr<CredentialProvider> credentials)
    : config_(std::move(config)),
      options_(options),
      transport_(std::move(transport)),
      credentials_(std::move(credentials)) {}

Result<std::shared_ptr<Client>> Client::create(const RestConfig& config, ClientOptions options) {
  auto transport = Transport::create(config.server, config.tls, options.transport);
  if (!transport.ok()) {
    return std::move(transport).takeStatus().prepend(config.description);
  }
  return std::make_shared<Client>(config, options, std::move(*transport),
                                  makeCredentialProvider(config));
}

Status Client::authorize(HttpRequest& req) {
  if (!credentials_) return Status::ok();
  auto creds = credentials_->get();
  if (!creds.ok()) return creds.status();
  std::erase_if(req.headers, [](const auto& h) { return h.first == "Authorization"; });
  if (!creds->token.empty()) req.headers.emplace_back("Authorization", "Bearer " + creds->token);
  if (!creds->client_cert_pem.empty()) {
    std::lock_guard lock(cert_mu_);
    if (creds->client_cert_pem != applied_cert_) {
      SDRA_RETURN_IF_ERROR(
          transport_->setClientCertificate(creds->client_cert_pem, creds->client_key_pem));
      applied_cert_ = creds->client_cert_pem;
    }
  }
  return Status::ok();
}

Result<HttpResponse> Client::send(HttpRequest req, milliseconds timeout, bool wait_retry_after) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool refreshed = false;
  int retries = 0;
  for (;;) {
    SDRA_RETURN_IF_ERROR(authorize(req));
    auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Status(Code::kTimeout, req.method + " " + req.target + ": deadline exceeded");
    }
    auto resp = transport_->send(req, left);
    if (!resp.ok()) {
      countRequest("<error>", req.method, transport_->hostPort());
      return resp;
    }
    countRequest(std::to_string(resp->status), req.method, transport_->hostPort());
    countResponseSize(req.method, transport_->hostPort(), resp->body.size());
    if (resp->status == 401 && !refreshed && credentials_ &&
        credentials_->refreshAfterUnauthorized()) {
      refreshed = true;
      continue;
    }
    bool retryable = resp->status == 429 || (resp->status >= 500 && resp->retry_after);
    if (wait_retry_after && retryable && resp->retry_after &&
        retries < options_.max_retry_after_retries) {
      auto wait = std::max<std::chrono::seconds>(*resp->retry_after, std::chrono::seconds(1));
      if (std::chrono::steady_clock::now() + wait < deadline) {
        ++retries;
        SDRA_VLOG(2) << req.method << " " << req.target << ": HTTP " << resp->status
                     << ", retrying after " << wait.count() << "s";
        std::this_thread::sleep_for(wait);
        continue;
      }
    }
    return resp;
  }
}

Status Client::evict(std::string_view ns, std::string_view pod, std::string_view uid) {
  json::Document eviction(rapidjson::kObjectType);
  auto& a = eviction.GetAllocator();
  json::setString(eviction, "apiVersion", "policy/v1", a);
  json::setString(eviction, "kind", "Eviction", a);
  json::Value meta(rapidjson::kObjectType);
  json::setString(meta, "name", std::string(pod), a);
  json::setString(meta, "namespace", std::string(ns), a);
  eviction.AddMember("metadata", meta, a);
  if (!uid.empty()) {
    json::Value preconditions(rapidjson::kObjectType);
    json::setString(preconditions, "uid", std::string(uid), a);
    json::Value options(rapidjson::kObjectType);
    options.AddMember("preconditions", preconditions, a);
    eviction.AddMember("deleteOptions", options, a);
  }
  auto path = resources::kPods.objectPath(ns, pod, "eviction");
  if (!path.ok()) return path.status();
  HttpRequest req;
  req.method = "POST";
  req.target = *path;
  const std::string body = json::dump(eviction);
  req.body = body;
  req.content_type = "application/json";
  auto resp = send(std::move(req), config_.timeout, /*wait_retry_after=*/false);
  if (!resp.ok()) return resp.status();
  if (resp->status >= 200 && resp->status <= 299) return Status::ok();
  return apiError(resp->status, resp->body, "POST", *path);
}

Result<HttpResponse> Client::raw(const std::string& method, const std::string& path,
                                 std::string_view body, std::string_view content_type,
                                 std::optional<milliseconds> timeout) {
  HttpRequest req;
  req.method = method;
  req.target = path;
  req.body = body;
  req.content_type = std::string(content_type);
  return send(std::move(req), timeout.value_or(config_.timeout));
}

Result<json::Document> Client::expectObject(const Result<HttpResponse>& resp, std::string_view verb,
                                            std::string_view path, bool metadata_only) {
  if (!resp.ok()) return resp.status();
  if (resp->status < 200 || resp->status > 299) {
    return apiError(resp->status, resp->body, verb, path);
  }
  auto doc = metadata_only ? json::parseMember(resp->body, "metadata") : json::parse(resp->body);
  if (!doc.ok()) {
    return Status(Code::kInternal,
                  std::string(verb) + " " + std::string(path) +
                      ": the server answered with invalid JSON: " + doc.status().message());
  }
  return doc;
}

Result<json::Document> Client::get(const ResourceType& rt, std::string_view ns,
                                   std::string_view name, std::string_view subresource,
                                   std::optional<milliseconds> timeout) {
  auto path = rt.objectPath(ns, name, subresource);
  if (!path.ok()) return path.status();
  return expectObject(raw("GET", *path, {}, {}, timeout), "GET", *path);
}

Result<json::Document> Client::getNotOlderThan(const ResourceType& rt, std::string_view ns,
                                               std::string_view name,
                                               std::string_view resource_version) {
  auto path = rt.objectPath(ns, name);
  if (!path.ok()) return path.status();
  std::string query;
  addParam(query, "resourceVersion", resource_version);
  return expectObject(raw("GET", *path + query, {}, {}, std::nullopt), "GET", *path);
}

Result<json::Document> Client::list(const ResourceType& rt, std::string_view ns,
                                    const ListOptions& options) {
  auto path = rt.collectionPath(ns);
  if (!path.ok()) return path.status();
  HttpRequest req;
  req.method = "GET";
  req.target = *path + listQuery(options, false);
  if (options.metadata_only) req.accept = std::string(kMetadataOnlyAccept);
  auto timeout = std::max(config_.timeout, milliseconds(std::chrono::seconds(60)));
  return expectObject(send(std::move(req), timeout), "GET", *path);
}

Result<json::Document> Client::listAll(const ResourceType& rt, std::string_view ns,
                                       ListOptions options) {
  if (options.limit == 0) options.limit = 500;
  auto first = list(rt, ns, options);
  if (!first.ok()) return first;
  json::Document& all = *first;
  if (!all.HasMember("items") || !all["items"].IsArray()) {
    all.RemoveMember("items");
    all.AddMember("items", json::Value(rapidjson::kArrayType), all.GetAllocator());
  }
  auto token = [](const json::Document& d) -> std::string {
    auto meta = d.FindMember("metadata");
    if (meta == d.MemberEnd() || !meta->value.IsObject()) return "";
    auto c = meta->value.FindMember("continue");
    return c != meta->value.MemberEnd() && c->value.IsString() ? c->value.GetString() : "";
  };
  while (true) {
    options.continue_token = token(all);
    if (options.continue_token.empty()) break;
    auto page = list(rt, ns, options);
    if (!page.ok()) return page.status();
    if (page->HasMember("items") && (*page)["items"].IsArray()) {
      for (auto& item : (*page)["items"].GetArray()) {
        all["items"].PushBack(json::Value(item, all.GetAllocator()), all.GetAllocator());
      }
    }
    auto page_meta = page->FindMember("metadata");
    if (page_meta == page->MemberEnd()) break;
    all["metadata"].CopyFrom(page_meta->value, all.GetAllocator());
  }
  return first;
}

Result<json::Document> Client::write(std::string_view method, const Result<std::string>& path,
                                     std::string_view body, std::string_view content_type,
                                     const WriteOptions& options) {
  if (!path.ok()) return path.status();
  HttpRequest req;
  req.method = std::string(method);
  req.target = *path + writeQuery(options, content_type == kApplyContentType);
  req.body = body;
  req.content_type = std::string(content_type);
  if (options.metadata_only) req.accept = std::string(kMetadataOnlyAccept);
  auto resp = send(std::move(req), options.timeout.value_or(config_.timeout));
  return expectObject(resp, method, *path, options.metadata_only);
}

Result<json::Document> Client::create(const ResourceType& rt, std::string_view ns,
                                      const json::Value& object, const WriteOptions& options) {
  return write("POST", rt.collectionPath(ns), json::dump(object), "application/json", options);
}

Result<json::Document> Client::update(const ResourceType& rt, std::string_view ns,
                                      const json::Value& object, const WriteOptions& options,
                                      std::string_view subresource) {
  return write("PUT", rt.objectPath(ns, objectName(object), subresource), json::dump(object),
               "application/json", options);
}

Result<json::Document> Client::patch(const ResourceType& rt, std::string_view ns,
                                     std::string_view name, PatchType type, std::string_view body,
                                     const WriteOptions& options, std::string_view subresource) {
  auto path = rt.objectPath(ns, name, subresource);
  std::string_view content_type;
  switch (type) {
    case PatchType::kMerge:
      content_type = "application/merge-patch+json";
      break;
    case PatchType::kJson:
      content_type = "application/json-patch+json";
      break;
    case PatchType::kStrategicMerge:
      content_type = "application/strategic-merge-patch+json";
      break;
    case PatchType::kApply:
      content_type = kApplyContentType;
      break;
  }
  if (type == PatchType::kApply && options.field_manager.empty()) {
    return Status(Code::kInvalidArgument, "server-side apply needs a field manager");
  }
  return write("PATCH", path, body, content_type, options);
}

Result<json::Document> Client::apply(const ResourceType& rt, std::string_view ns,
                                     const json::Value& object, const WriteOptions& options,
                                     std::string_view subresource) {
  std::string_view name = objectName(object);
  if (name.empty()) return Status(Code::kInvalidArgument, "apply: the object has no name");
  return patch(rt, ns, name, PatchType::kApply, json::dump(object), options, subresource);
}

Result<json::Document> Client::writeStatus(const ResourceType& rt, std::string_view ns,
                                           json::Document object, std::string_view resource_version,
                                           WriteOptions options) {
  auto& metadata = object["metadata"];
  json::setString(metadata, "resourceVersion", resource_version, object.GetAllocator());
  auto updated = update(rt, ns, object, options, "status");
  if (updated.status().code() != Code::kConflict) return updated;
  metadata.RemoveMember("resourceVersion");
  options.force = true;
  return apply(rt, ns, object, options, "status");
}

Result<json::Document> Client::replace(
    const ResourceType& rt, std::string_view ns, std::string_view name, const ObjectMeta* known,
    const std::function<std::string_view(const ObjectMeta* current)>& body,
    const WriteOptions& options) {
  auto put = [&](const ObjectMeta* current) {
    return current
               ? write("PUT", rt.objectPath(ns, name), body(current), "application/json", options)
               : write("POST", rt.collectionPath(ns), body(nullptr), "application/json", options);
  };
  auto written = put(known);
  Code code = written.status().code();
  if (code != Code::kConflict && code != Code::kAlreadyExists && code != Code::kNotFound) {
    return written;
  }
  auto path = rt.objectPath(ns, name);
  if (!path.ok()) return path.status();
  HttpRequest req;
  req.method = "GET";
  req.target = *path;
  req.accept = std::string(kMetadataOnlyAccept);
  auto now = expectObject(send(std::move(req), config_.timeout), "GET", *path, true);
  if (!now.ok() && now.status().code() != Code::kNotFound) return now.status();
  if (!now.ok()) return put(nullptr);
  ObjectMeta current = ObjectMeta::decode(*now);
  return put(&current);
}

Status Client::remove(const ResourceType& rt, std::string_view ns, std::string_view name,
                      const DeleteOptions& options) {
  auto path = rt.objectPath(ns, name);
  if (!path.ok()) return path.status();
  json::Document body(rapidjson::kObjectType);
  auto& a = body.GetAllocator();
  json::setString(body, "apiVersion", "v1", a);
  json::setString(body, "kind", "DeleteOptions", a);
  if (options.precondition_uid || options.precondition_resource_version) {
    json::Value pre(rapidjson::kObjectType);
    if (options.precondition_uid) json::setString(pre, "uid", *options.precondition_uid, a);
    if (options.precondition_resource_version) {
      json::setString(pre, "resourceVersion", *options.precondition_resource_version, a);
    }
    body.AddMember("preconditions", pre, a);
  }
  if (!options.propagation_policy.empty()) {
    json::setString(body, "propagationPolicy", options.propagation_policy, a);
  }
  if (options.grace_period_seconds) {
    body.AddMember("gracePeriodSeconds", *options.grace_period_seconds, a);
  }
  auto resp = raw("DELETE", *path, json::dump(body), "application/json");
  if (!resp.ok()) return resp.status();
  if (resp->status < 200 || resp->status > 299) {
    return apiError(resp->status, resp->body, "DELETE", *path);
  }
  return Status::ok();
}

Result<std::unique_ptr<Watch>> Client::watch(const ResourceType& rt, std::string_view ns,
                                             const ListOptions& options) {
  auto path = rt.collectionPath(ns);
  if (!path.ok()) return path.status();
  HttpRequest req;
  req.method = "GET";
  req.target = *path + listQuery(options, true);
  if (options.metadata_only) req.accept = std::string(kMetadataOnlyAccept);
  for (int attempt = 0;; ++attempt) {
    SDRA_RETURN_IF_ERROR(authorize(req));
    auto stream = transport_->openStream(req, config_.timeout);
    if (!stream.ok()) {
      countRequest("<error>", "WATCH", transport_->hostPort());
      return std::move(stream).takeStatus();
    }
    int status = (*stream)->status();
    countRequest(std::to_string(status), "WATCH", transport_->hostPort());
    if (status == 200) {
      return std::make_unique<Watch>(std::move(*stream), "watch " + *path);
    }
    std::string body;
    while (body.size() < kMaxWatchErrorBody) {
      auto got = (*stream)->read(body, config_.timeout);
      if (!got.ok() || *got == 0) break;
    }
    if (status == 401 && attempt == 0 && credentials_ && credentials_->refreshAfterUnauthorized()) {
      continue;
    }
    return apiError(status, body, "WATCH", *path);
  }
}

}  // namespace sriovdra::kube
