#include "support/discovery.h"

namespace sriovdra::testing {

using kube::apiError;
using kube::ResourceType;

Result<ResourceType> Discovery::resourceFor(const json::Value& object) {
  return resourceFor(std::string(json::stringOr(object, "apiVersion")),
                     std::string(json::stringOr(object, "kind")));
}

Result<ResourceType> Discovery::resourceFor(const std::string& api_version,
                                            const std::string& kind) {
  if (api_version.empty() || kind.empty()) {
    return Status(Code::kInvalidArgument, "the object has no apiVersion or kind");
  }
  {
    std::lock_guard lock(mu_);
    auto gv = cache_.find(api_version);
    if (gv != cache_.end()) {
      auto it = gv->second.find(kind);
      if (it != gv->second.end()) return it->second;
    }
  }
  auto slash = api_version.find('/');
  std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  std::string path = group.empty() ? "/api/" + version : "/apis/" + api_version;
  auto resp = client_->raw("GET", path);
  if (!resp.ok()) return resp.status();
  if (resp->status == 404) {
    return Status(Code::kNotFound, "the server does not serve " + api_version);
  }
  if (resp->status != 200) return apiError(resp->status, resp->body, "GET", path);
  auto doc = json::parse(resp->body);
  if (!doc.ok()) return std::move(doc).takeStatus();
  std::map<std::string, ResourceType> kinds;
  if (const json::Value* list = json::arrayMember(*doc, "resources")) {
    for (const auto& r : list->GetArray()) {
      std::string name(json::stringOr(r, "name"));
      if (name.find('/') != std::string::npos) continue;  // subresources
      ResourceType rt{group, version, name, std::string(json::stringOr(r, "kind")),
                      json::boolOr(r, "namespaced", false)};
      kinds.emplace(rt.kind, rt);
    }
  }
  std::lock_guard lock(mu_);
  cache_[api_version] = kinds;
  auto it = kinds.find(kind);
  if (it == kinds.end()) {
    return Status(Code::kNotFound, "the server has no kind " + kind + " in " + api_version);
  }
  return it->second;
}

}  // namespace sriovdra::testing
