#include "api/objects.h"

namespace sriovdra::api {

Result<Node> Node::decode(const json::Value& v) {
  Node n;
  n.metadata = kube::ObjectMeta::decode(v);
  n.metadata.annotations.clear();  // not used; keeps the cache small
  n.metadata.owner_references.clear();
  if (const json::Value* spec = json::objectMember(v, "spec")) {
    const json::Value* u = json::member(*spec, "unschedulable");
    n.unschedulable = u != nullptr && u->IsBool() && u->GetBool();
  }
  const json::Value* status = json::objectMember(v, "status");
  const json::Value* allocatable = status ? json::objectMember(*status, "allocatable") : nullptr;
  if (allocatable != nullptr) {
    for (const auto& kv : allocatable->GetObject()) {
      std::string name(kv.name.GetString(), kv.name.GetStringLength());
      bool implicit = name.starts_with("deviceclass.resource.kubernetes.io/");
      if (name.find('/') == std::string::npos ||
          (name.find("kubernetes.io/") != std::string::npos && !implicit)) {
        continue;
      }
      n.extended_allocatable[name] =
          kv.value.IsString() ? std::string(kv.value.GetString(), kv.value.GetStringLength())
                              : json::dump(kv.value);
    }
  }
  return n;
}

void DeviceClassSpec::encode(Writer w) const {
  auto& a = w.allocator();
  json::Value selectors(rapidjson::kArrayType);
  for (const auto& expr : cel_selectors) {
    json::Value sel(rapidjson::kObjectType);
    Writer(sel, a).object("cel").strAlways("expression", expr);
    selectors.PushBack(sel, a);
  }
  w.value("selectors", std::move(selectors));
  if (!config.empty()) {
    json::Value configs(rapidjson::kArrayType);
    for (const auto& c : config) {
      json::Value item(rapidjson::kObjectType);
      Writer opaque = Writer(item, a).object("opaque");
      opaque.strAlways("driver", c.driver);
      auto params = json::parse(c.parameters_json);
      json::Value pv(rapidjson::kObjectType);
      if (params.ok()) pv.CopyFrom(*params, a);
      opaque.value("parameters", std::move(pv));
      configs.PushBack(item, a);
    }
    w.value("config", std::move(configs));
  }
  if (extended_resource_name) w.strAlways("extendedResourceName", *extended_resource_name);
}

Result<DeviceClass> DeviceClass::decode(const json::Value& v) {
  Reader root(&v, "");
  DeviceClass c;
  c.metadata = kube::ObjectMeta::decode(v);
  Reader spec = root.object("spec");
  for (const auto& s : spec.array("selectors")) {
    c.spec.cel_selectors.push_back(s.object("cel").str("expression"));
  }
  for (const auto& cfg : spec.array("config")) {
    Reader opaque = cfg.object("opaque");
    const json::Value* params = opaque.raw("parameters");
    c.spec.config.push_back({opaque.str("driver"), params ? json::dump(*params) : "{}"});
  }
  if (spec.has("extendedResourceName")) {
    c.spec.extended_resource_name = spec.str("extendedResourceName");
  }
  if (!root.status().isOk()) return root.status();
  return c;
}

}  // namespace sriovdra::api
