#pragma once
// A device's attributes and capacities by fully qualified name ("resource.kubernetes.io/pcieRoot"),
// with the rule Kubernetes' allocator and CEL environment use: a name the driver published
// without a domain belongs to the driver's domain. Pure.
#include <optional>
#include <string>
#include <string_view>

#include "api/resource.h"

namespace sriovdra::api {

// The value of `qualified` in an attribute or capacity map of a device published by `driver`.
template <typename Map>
const typename Map::mapped_type* findQualified(const Map& map, std::string_view driver,
                                               std::string_view qualified) {
  if (auto it = map.find(std::string(qualified)); it != map.end()) return &it->second;
  auto slash = qualified.find('/');
  if (slash != std::string_view::npos && qualified.substr(0, slash) == driver) {
    if (auto it = map.find(std::string(qualified.substr(slash + 1))); it != map.end()) {
      return &it->second;
    }
  }
  return nullptr;
}

inline const AttributeValue* findAttribute(const SliceDevice& device, std::string_view driver,
                                           std::string_view qualified) {
  return findQualified(device.attributes, driver, qualified);
}

// A string attribute; nullopt when absent or of another type.
inline std::optional<std::string> stringAttribute(const SliceDevice& device,
                                                  std::string_view driver,
                                                  std::string_view qualified) {
  const AttributeValue* v = findAttribute(device, driver, qualified);
  if (v == nullptr || v->type != AttributeValue::Type::kString) return std::nullopt;
  return v->string_value;
}

// A bool attribute; false when absent or of another type.
inline bool boolAttribute(const SliceDevice& device, std::string_view driver,
                          std::string_view qualified) {
  const AttributeValue* v = findAttribute(device, driver, qualified);
  return v != nullptr && v->type == AttributeValue::Type::kBool && v->bool_value;
}

}  // namespace sriovdra::api
