#include "api/pod_resources.h"

#include <algorithm>
#include <array>

namespace sriovdra::api {
namespace {

// The kinds read, by apiVersion.
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kKinds = {{
    {"v1", "Pod"},
    {"apps/v1", "Deployment"},
    {"apps/v1", "ReplicaSet"},
    {"apps/v1", "StatefulSet"},
    {"apps/v1", "DaemonSet"},
    {"batch/v1", "Job"},
    {"batch/v1", "CronJob"},
}};

// A quantity as written: YAML gives "2" or 2.
std::map<std::string, std::string> quantities(const Reader& r, std::string_view key) {
  std::map<std::string, std::string> out;
  const json::Value* m = r.raw(key);
  if (m == nullptr || m->IsNull()) return out;
  if (!m->IsObject()) {
    r.fail(key, "expected a map of quantities");
    return out;
  }
  for (const auto& kv : m->GetObject()) {
    std::string name(kv.name.GetString(), kv.name.GetStringLength());
    if (kv.value.IsString()) {
      out[name].assign(kv.value.GetString(), kv.value.GetStringLength());
    } else if (kv.value.IsInt64()) {
      out[name] = std::to_string(kv.value.GetInt64());
    } else if (kv.value.IsNumber()) {
      out[name] = json::dump(kv.value);
    } else {
      r.fail(std::string(key) + "." + name, "expected a quantity");
    }
  }
  return out;
}

void readContainers(const Reader& spec, std::string_view key, bool init, PodResources& out) {
  for (const auto& c : spec.array(key)) {
    ContainerResources cr;
    cr.name = c.str("name");
    cr.init = init;
    cr.sidecar = init && c.str("restartPolicy") == "Always";
    Reader resources = c.object("resources");
    cr.requests = quantities(resources, "requests");
    for (auto& [name, q] : quantities(resources, "limits")) cr.requests.emplace(name, q);
    out.containers.push_back(std::move(cr));
  }
}

}  // namespace

bool PodResources::reads(const json::Value& v) {
  std::pair<std::string_view, std::string_view> key{json::stringOr(v, "apiVersion"),
                                                    json::stringOr(v, "kind")};
  return std::find(kKinds.begin(), kKinds.end(), key) != kKinds.end();
}

Result<PodResources> PodResources::decode(const json::Value& v) {
  Reader root(&v, "");
  PodResources p;
  p.kind = root.str("kind");
  p.metadata = kube::ObjectMeta::decode(v);
  if (!reads(v)) {
    return Status(Code::kInvalidArgument,
                  std::string(json::stringOr(v, "apiVersion")) + " " + p.kind + " holds no pod");
  }
  Reader spec = root.object("spec");
  if (p.kind == "CronJob") {
    spec = spec.object("jobTemplate").object("spec").object("template").object("spec");
  } else if (p.kind != "Pod") {
    spec = spec.object("template").object("spec");
  }
  readContainers(spec, "initContainers", true, p);
  readContainers(spec, "containers", false, p);
  for (const auto& c : spec.array("resourceClaims")) p.claims.push_back(c.str("name"));
  if (!root.status().isOk()) return root.status();
  return p;
}

}  // namespace sriovdra::api
