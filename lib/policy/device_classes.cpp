#include "policy/device_classes.h"

#include <algorithm>
#include <map>
#include <set>

#include "api/names.h"

namespace sriovdra::policy {

std::string deviceClassNameFor(const std::string& resource_name) {
  std::string out;
  for (char c : resource_name) {
    out += c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out + "." + std::string(api::kDriverName);
}

std::vector<DesiredDeviceClass> renderDeviceClasses(
    const std::vector<const api::SriovNetworkNodePolicy*>& node_policies,
    const std::vector<const api::DeviceAttributes*>& device_attributes,
    const std::string& resource_prefix) {
  const std::string driver(api::kDriverName);
  const std::string driver_match = "device.driver == '" + driver + "'";
  std::set<std::string> names;
  for (const auto* p : node_policies) {
    if (!p->spec.resource_name.empty()) names.insert(p->spec.resource_name);
  }
  for (const auto* d : device_attributes) {
    auto it = d->attributes.find(std::string(api::attr::kResourceName));
    if (it != d->attributes.end() && it->second.type == api::AttributeValue::Type::kString &&
        !it->second.string_value.empty()) {
      names.insert(it->second.string_value);
    }
  }
  std::map<std::string, std::vector<std::string>> by_class;
  for (const auto& n : names) by_class[deviceClassNameFor(n)].push_back(n);

  std::vector<DesiredDeviceClass> out;
  out.push_back({driver, {{driver_match}, {}, std::nullopt}, {}});
  for (const auto& [class_name, resources] : by_class) {
    std::string attr = "device.attributes['" + driver + "']";
    std::string value;
    if (resources.size() == 1) {
      value = attr + ".resourceName == '" + resources[0] + "'";
    } else {
      std::string list;
      for (const auto& r : resources) list += (list.empty() ? "'" : ", '") + r + "'";
      value = attr + ".resourceName in [" + list + "]";
    }
    DesiredDeviceClass c;
    c.name = class_name;
    c.resource_names = resources;
    c.spec.cel_selectors = {driver_match + " && 'resourceName' in " + attr + " && " + value};
    if (!resource_prefix.empty() && resources.size() == 1) {
      c.spec.extended_resource_name = resource_prefix + "/" + resources[0];
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace sriovdra::policy
