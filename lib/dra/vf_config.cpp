#include "dra/vf_config.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "api/names.h"
#include "base/names.h"
#include "base/strings.h"
#include "host/pci.h"

namespace sriovdra::dra {
namespace {

Status fieldError(std::string_view field, const std::string& what) {
  return Status(Code::kInvalidArgument, std::string(field) + ": " + what);
}

// Linux accepts up to 15 bytes, no '/', ':' or whitespace, and not "." or "..".
bool isInterfaceName(std::string_view s) {
  if (s.empty() || s.size() > 15 || s == "." || s == "..") return false;
  return std::none_of(s.begin(), s.end(), [](char c) {
    return c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c));
  });
}

void merge(std::optional<std::string>& into, const std::optional<std::string>& from) {
  if (from) into = from;
}

}  // namespace

void VfConfig::mergeFrom(const VfConfig& later) {
  merge(driver, later.driver);
  merge(if_name, later.if_name);
  merge(net_attach_def_name, later.net_attach_def_name);
  merge(net_attach_def_namespace, later.net_attach_def_namespace);
  if (later.add_vhost_mount) add_vhost_mount = later.add_vhost_mount;
}

std::optional<std::string> VfConfig::targetDriver() const {
  if (!driver || driver->empty()) return std::nullopt;
  if (*driver == "default") return std::string();
  return *driver;
}

bool VfConfig::keepsNetdev(const std::string& current_driver) const {
  auto target = targetDriver();
  return !host::isUserspaceDriver(target ? *target : current_driver);
}

void VfConfig::encode(api::Writer w) const {
  w.strAlways("apiVersion", std::string(kVfConfigApiVersion))
      .strAlways("kind", std::string(kVfConfigKind));
  if (driver) w.strAlways("driver", *driver);
  if (if_name) w.strAlways("ifName", *if_name);
  if (net_attach_def_name) w.strAlways("netAttachDefName", *net_attach_def_name);
  if (net_attach_def_namespace) w.strAlways("netAttachDefNamespace", *net_attach_def_namespace);
  w.optBool("addVhostMount", add_vhost_mount);
}

Result<VfConfig> VfConfig::decode(const json::Value& v) { return parseVfConfig(json::dump(v)); }

Result<VfConfig> parseVfConfig(std::string_view parameters_json) {
  auto doc = json::parse(parameters_json);
  if (!doc.ok() || !doc->IsObject()) {
    return Status(Code::kInvalidArgument, "the parameters are not a JSON object");
  }
  VfConfig c;
  std::set<std::string> seen;
  for (const auto& m : doc->GetObject()) {
    std::string key = m.name.GetString();
    seen.insert(key);
    const json::Value& v = m.value;
    if (key == "addVhostMount") {
      if (!v.IsBool()) return fieldError(key, "expected true or false");
      c.add_vhost_mount = v.GetBool();
      continue;
    }
    static const std::set<std::string> kStrings = {
        "apiVersion", "kind", "driver", "ifName", "netAttachDefName", "netAttachDefNamespace"};
    if (kStrings.count(key) == 0) {
      return fieldError(key,
                        "unknown field (VfConfig has apiVersion, kind, driver, ifName, "
                        "netAttachDefName, netAttachDefNamespace, addVhostMount)");
    }
    if (!v.IsString()) return fieldError(key, "expected a string");
    std::string s = v.GetString();
    if (key == "apiVersion" && s != kVfConfigApiVersion) {
      return fieldError(key, "\"" + printable(s) + "\" is not " + std::string(kVfConfigApiVersion));
    }
    if (key == "kind" && s != kVfConfigKind) {
      return fieldError(key, "\"" + printable(s) + "\" is not " + std::string(kVfConfigKind));
    }
    if (key == "driver") {
      if (!s.empty() && !api::isDriverName(s)) {
        return fieldError(key, "\"" + printable(s) +
                                   "\" is not a kernel driver name (letters, digits, '_' and "
                                   "'-'); use \"default\", \"vfio-pci\" or a driver's name");
      }
      c.driver = s;
    } else if (key == "ifName") {
      if (!isInterfaceName(s)) {
        return fieldError(key, "\"" + printable(s) +
                                   "\" is not a Linux interface name (1-15 characters, no '/', "
                                   "':' or spaces)");
      }
      c.if_name = s;
    } else if (key == "netAttachDefName") {
      if (!s.empty() && !isDnsSubdomain(s)) {
        return fieldError(key, "\"" + printable(s) +
                                   "\" is not a NetworkAttachmentDefinition name (a DNS-1123 "
                                   "subdomain: lower-case letters, digits, '-' and '.', at most "
                                   "253 characters)");
      }
      c.net_attach_def_name = s;
    } else if (key == "netAttachDefNamespace") {
      if (!s.empty() && !isDnsLabel(s)) {
        return fieldError(key, "\"" + printable(s) +
                                   "\" is not a namespace name (a DNS-1123 label: lower-case "
                                   "letters, digits and '-', at most 63 characters)");
      }
      c.net_attach_def_namespace = s;
    }
  }
  for (const char* required : {"apiVersion", "kind"}) {
    if (seen.count(required) == 0) {
      return fieldError(required, "missing (apiVersion: " + std::string(kVfConfigApiVersion) +
                                      ", kind: " + std::string(kVfConfigKind) + ")");
    }
  }
  return c;
}

Result<std::map<std::string, VfConfig>> vfConfigsByRequest(const api::AllocationResult& allocation,
                                                           std::string_view driver) {
  std::map<std::string, VfConfig> out;
  for (const auto& r : allocation.results) {
    if (r.driver == driver) out[r.request];
  }
  // Class configs apply before claim configs; each group keeps its order.
  std::vector<std::pair<size_t, const api::DeviceAllocationConfiguration*>> ordered;
  for (size_t i = 0; i < allocation.config.size(); ++i) {
    ordered.emplace_back(i, &allocation.config[i]);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return (a.second->source == "FromClass") > (b.second->source == "FromClass");
  });
  std::map<std::string, std::string> class_driver;  // request -> the driver a DeviceClass set
  for (const auto& [index, cfg] : ordered) {
    if (cfg->opaque.driver != driver) continue;
    const std::string where = "config[" + std::to_string(index) + "] (" + cfg->source + "): ";
    auto parsed = parseVfConfig(cfg->opaque.parameters_json);
    if (!parsed.ok()) return Status(Code::kInvalidArgument, where + parsed.status().message());
    const bool from_class = cfg->source == "FromClass";
    for (auto& [request, effective] : out) {
      std::string parent = request.substr(0, request.find('/'));
      bool applies =
          cfg->requests.empty() ||
          std::any_of(cfg->requests.begin(), cfg->requests.end(),
                      [&, &r = request](const std::string& n) { return n == r || n == parent; });
      if (!applies) continue;
      if (parsed->driver && !parsed->driver->empty()) {
        auto set = class_driver.find(request);
        if (from_class) {
          class_driver[request] = *parsed->driver;
        } else if (set != class_driver.end() && set->second != *parsed->driver) {
          std::string message = where;
          message.append("driver: the DeviceClass of request ")
              .append(request)
              .append(" sets \"")
              .append(set->second)
              .append("\"; a claim cannot change it");
          return Status(Code::kInvalidArgument, message);
        }
      }
      effective.mergeFrom(*parsed);
    }
  }
  return out;
}

}  // namespace sriovdra::dra
