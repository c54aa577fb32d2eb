#include "sriovcni/plugin_conf.h"

namespace sriovdra::sriovcni {

Status readString(const cni::GoFields& fields, std::string_view key, std::string& out) {
  auto v = fields.string(key);
  if (!v.ok()) return v.status();
  if (*v) out = **v;
  return Status::ok();
}

Status readPluginConf(const cni::GoFields& plugin, PluginConf& c) {
  SDRA_RETURN_IF_ERROR(readString(plugin, "cniVersion", c.cni_version));
  SDRA_RETURN_IF_ERROR(readString(plugin, "name", c.name));
  SDRA_RETURN_IF_ERROR(readString(plugin, "type", c.type));
  auto ipam = plugin.object("ipam", "types.IPAM");
  if (!ipam.ok()) return ipam.status();
  if (*ipam != nullptr) {
    SDRA_RETURN_IF_ERROR(readString(cni::GoFields(**ipam, "IPAM"), "type", c.ipam_type));
  }
  auto caps = plugin.object("capabilities", "map[string]bool");
  if (!caps.ok()) return caps.status();
  if (*caps != nullptr) {
    for (auto it = (*caps)->MemberBegin(); it != (*caps)->MemberEnd(); ++it) {
      if (!it->value.IsBool() && !it->value.IsNull()) {
        return Status(Code::kInvalidArgument, "json: cannot unmarshal " +
                                                  cni::goJsonType(it->value) +
                                                  " into Go struct field NetConf.capabilities of "
                                                  "type bool");
      }
    }
    c.capabilities_json = json::dump(**caps);
  }
  auto dns = plugin.object("dns", "types.DNS");
  if (!dns.ok()) return dns.status();
  if (*dns != nullptr && (*dns)->MemberCount() > 0) c.dns_json = json::dump(**dns);
  auto prev = plugin.object("prevResult", "map[string]interface {}");
  if (!prev.ok()) return prev.status();
  if (*prev != nullptr) c.prev_result_json = json::dump(**prev);
  return Status::ok();
}

json::Value sortedCopy(const json::Value& v, json::Allocator& a) {
  if (v.IsArray()) {
    json::Value out(rapidjson::kArrayType);
    for (const auto& item : v.GetArray()) out.PushBack(sortedCopy(item, a), a);
    return out;
  }
  if (!v.IsObject()) return json::Value(v, a);
  std::map<std::string, const json::Value*> members;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    members[std::string(it->name.GetString(), it->name.GetStringLength())] = &it->value;
  }
  json::Value out(rapidjson::kObjectType);
  for (const auto& [key, value] : members) {
    out.AddMember(json::str(key, a), sortedCopy(*value, a), a);
  }
  return out;
}

void writePluginConf(const PluginConf& c, JsonMap& m, json::Allocator& a) {
  auto object = [&](const std::string& compact) {
    auto parsed = json::parse(compact);
    return parsed.ok() ? sortedCopy(*parsed, a) : json::Value(rapidjson::kObjectType);
  };
  if (!c.cni_version.empty()) m["cniVersion"] = json::str(c.cni_version, a);
  if (!c.name.empty()) m["name"] = json::str(c.name, a);
  if (!c.type.empty()) m["type"] = json::str(c.type, a);
  if (!c.capabilities_json.empty()) m["capabilities"] = object(c.capabilities_json);
  json::Value ipam(rapidjson::kObjectType);
  if (!c.ipam_type.empty()) ipam.AddMember("type", json::str(c.ipam_type, a), a);
  m["ipam"] = std::move(ipam);
  if (!c.dns_json.empty()) m["dns"] = object(c.dns_json);
  if (!c.prev_result_json.empty()) m["prevResult"] = object(c.prev_result_json);
}

std::string dumpSorted(JsonMap& map, json::Document& doc) {
  auto& a = doc.GetAllocator();
  doc.SetObject();
  for (auto& [key, value] : map) doc.AddMember(json::str(key, a), value, a);
  return json::dump(doc);
}

}  // namespace sriovdra::sriovcni
