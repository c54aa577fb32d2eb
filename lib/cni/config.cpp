#include "cni/config.h"

#include "base/ip.h"
#include "base/json.h"

namespace sriovdra::cni {
namespace {

Status invalid(const std::string& what) { return Status(Code::kInvalidArgument, what); }

Result<std::string> pluginType(const json::Value& plugin, const std::string& where) {
  if (!plugin.IsObject()) return invalid(where + " is not a JSON object");
  const json::Value* t = json::member(plugin, "type");
  if (t == nullptr || !t->IsString()) return invalid(where + " has no \"type\"");
  std::string type(t->GetString(), t->GetStringLength());
  if (!isPluginType(type)) {
    return invalid(where + ": \"type\" \"" + type +
                   "\" is not a CNI plugin name (a file name in the CNI bin directory)");
  }
  return type;
}

}  // namespace

bool isPluginType(std::string_view t) {
  if (t.empty() || t.size() > 255 || t.front() == '.') return false;
  for (char c : t) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Result<NetworkConfig> parseNetworkConfig(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc.ok()) return invalid("the CNI configuration is not JSON: " + doc.status().message());
  if (!doc->IsObject()) return invalid("the CNI configuration is not a JSON object");
  NetworkConfig c;
  c.cni_version = std::string(json::stringOr(*doc, "cniVersion"));
  c.name = std::string(json::stringOr(*doc, "name"));
  if (const json::Value* list = json::member(*doc, "plugins")) {
    if (!list->IsArray() || list->Empty()) {
      return invalid("the CNI configuration's \"plugins\" must be a non-empty list");
    }
    c.list = true;
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      auto type = pluginType((*list)[i], "plugins[" + std::to_string(i) + "]");
      if (!type.ok()) return type.status();
      c.types.push_back(*type);
      c.plugins.push_back(json::dump((*list)[i]));
    }
  } else {
    auto type = pluginType(*doc, "the CNI configuration");
    if (!type.ok()) return type.status();
    c.types.push_back(*type);
    c.plugins.push_back(json::dump(*doc));
  }
  return c;
}

Result<std::string> withRuntimeConfig(std::string_view config, const RuntimeConfig& values) {
  auto doc = json::parse(config);
  if (!doc.ok() || !doc->IsObject()) return invalid("the CNI configuration is not a JSON object");
  auto& a = doc->GetAllocator();
  // CNI's conventions: a plugin that declares a capability gets its value in runtimeConfig.
  auto capability = [&](json::Value& plugin) {
    const json::Value* caps = json::objectMember(plugin, "capabilities");
    if (caps == nullptr) return;
    auto declared = [&](std::string_view name) { return json::boolOr(*caps, name, false); };
    for (const auto& [name, value] :
         {std::pair<std::string_view, const std::string*>{"deviceID", &values.device_id},
          {"mac", &values.mac},
          {"infinibandGUID", &values.infiniband_guid}}) {
      if (!value->empty() && declared(name)) {
        json::setString(json::ensureObject(plugin, "runtimeConfig", a), name, *value, a);
      }
    }
    if (!values.ips.empty() && declared("ips")) {
      json::Value ips(rapidjson::kArrayType);
      for (const auto& ip : values.ips) ips.PushBack(json::str(ip, a), a);
      json::set(json::ensureObject(plugin, "runtimeConfig", a), "ips", std::move(ips), a);
    }
  };
  const std::string& pci_address = values.device_id;
  json::setString(*doc, "deviceID", pci_address, a);
  if (auto list = doc->FindMember("plugins"); list != doc->MemberEnd() && list->value.IsArray()) {
    if (!list->value.Empty() && list->value[0].IsObject()) {
      json::setString(list->value[0], "deviceID", pci_address, a);
    }
    for (auto& plugin : list->value.GetArray()) {
      if (plugin.IsObject()) capability(plugin);
    }
  } else {
    capability(*doc);
  }
  return json::dump(*doc);
}

std::string cniArgs(const RuntimeArgs& args) {
  return "IgnoreUnknown=true;K8S_POD_NAMESPACE=" + args.pod_namespace +
         ";K8S_POD_NAME=" + args.pod_name + ";K8S_POD_INFRA_CONTAINER_ID=" + args.container_id +
         ";K8S_POD_UID=" + args.pod_uid;
}

std::vector<std::pair<std::string, std::string>> environment(Command command,
                                                             const RuntimeArgs& args) {
  std::string path;
  for (const auto& d : args.bin_dirs) path += (path.empty() ? "" : ":") + d;
  return {{"CNI_COMMAND", command == Command::kAdd ? "ADD" : "DEL"},
          {"CNI_CONTAINERID", args.container_id},
          {"CNI_NETNS", args.netns},
          {"CNI_IFNAME", args.if_name},
          {"CNI_ARGS", cniArgs(args)},
          {"CNI_PATH", path}};
}

std::string pluginInput(const NetworkConfig& config, size_t index, std::string_view prev_result) {
  auto doc = json::parse(config.plugins.at(index));
  auto& a = doc->GetAllocator();
  if (!config.cni_version.empty()) json::setString(*doc, "cniVersion", config.cni_version, a);
  if (!config.name.empty()) json::setString(*doc, "name", config.name, a);
  if (!prev_result.empty()) {
    if (auto prev = json::parse(prev_result); prev.ok()) {
      json::set(*doc, "prevResult", json::Value(*prev, a), a);
    }
  }
  return json::dump(*doc);
}

namespace {

bool isCidr(std::string_view s) { return parseCidr(s).ok(); }

}  // namespace

Status checkResult(std::string_view result) {
  auto doc = json::parse(result);
  if (!doc.ok()) return invalid("the CNI result is not JSON: " + doc.status().message());
  if (!doc->IsObject()) return invalid("the CNI result is not a JSON object");
  const json::Value* version = json::member(*doc, "cniVersion");
  if (version == nullptr || !version->IsString())
    return invalid("the CNI result has no cniVersion");
  if (const json::Value* ips = json::member(*doc, "ips")) {
    if (!ips->IsArray()) return invalid("the CNI result's \"ips\" is not a list");
    if (ips->Size() > 16) {
      return invalid("the CNI result has " + std::to_string(ips->Size()) +
                     " IPs; a claim's status holds at most 16");
    }
    for (rapidjson::SizeType i = 0; i < ips->Size(); ++i) {
      const json::Value* address =
          (*ips)[i].IsObject() ? json::member((*ips)[i], "address") : nullptr;
      if (address == nullptr || !address->IsString() ||
          !isCidr({address->GetString(), address->GetStringLength()})) {
        return invalid("the CNI result's ips[" + std::to_string(i) +
                       "].address is not an IP address in CIDR notation");
      }
    }
  }
  if (const json::Value* interfaces = json::member(*doc, "interfaces")) {
    if (!interfaces->IsArray()) return invalid("the CNI result's \"interfaces\" is not a list");
    for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
      const json::Value& itf = (*interfaces)[i];
      if (!itf.IsObject())
        return invalid("the CNI result's interfaces[" + std::to_string(i) + "] is not an object");
      if (json::stringOr(itf, "name").size() > 256 || json::stringOr(itf, "mac").size() > 128) {
        return invalid("the CNI result's interfaces[" + std::to_string(i) +
                       "] has a name over 256 or a mac over 128 characters");
      }
    }
  }
  return Status::ok();
}

Result<NetworkData> networkDataOf(std::string_view result, std::string_view if_name) {
  auto doc = json::parse(result);
  if (!doc.ok() || !doc->IsObject()) return invalid("the CNI result is not a JSON object");
  NetworkData d;
  const json::Value* interfaces = json::arrayMember(*doc, "interfaces");
  int chosen = -1;
  if (interfaces != nullptr) {
    for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
      const json::Value& itf = (*interfaces)[i];
      if (!json::stringOr(itf, "sandbox").empty()) {
        chosen = static_cast<int>(i);
        break;
      }
      if (chosen < 0 && json::stringOr(itf, "name") == if_name) chosen = static_cast<int>(i);
    }
    if (chosen < 0 && !interfaces->Empty()) chosen = 0;
  }
  if (chosen >= 0) {
    const json::Value& itf = (*interfaces)[static_cast<rapidjson::SizeType>(chosen)];
    d.interface_name = std::string(json::stringOr(itf, "name"));
    d.hardware_address = std::string(json::stringOr(itf, "mac"));
  }
  if (d.interface_name.empty()) d.interface_name = std::string(if_name);
  if (const json::Value* ips = json::arrayMember(*doc, "ips")) {
    for (const auto& ip : ips->GetArray()) {
      std::string address(json::stringOr(ip, "address"));
      if (!address.empty()) d.ips.push_back(address);
    }
  }
  return d;
}

std::string failureMessage(std::string_view type, int exit_code, std::string_view out,
                           std::string_view err) {
  std::string message = "CNI plugin " + std::string(type);
  if (auto doc = json::parse(out); doc.ok() && doc->IsObject() && json::member(*doc, "msg")) {
    message += ": " + std::string(json::stringOr(*doc, "msg"));
    if (auto details = json::stringOr(*doc, "details"); !details.empty()) {
      message += " (" + std::string(details) + ")";
    }
    return message;
  }
  auto trimmed = err.substr(0, 2000);
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == ' ')) {
    trimmed.remove_suffix(1);
  }
  if (!trimmed.empty()) return message + ": " + std::string(trimmed);
  return message + " exited with code " + std::to_string(exit_code);
}

}  // namespace sriovdra::cni
