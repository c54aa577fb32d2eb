#pragma once
// The subsets of core and resource.k8s.io objects the operator reads or writes: Node (labels and
// the extended resources it has, so the cache stays small) and DeviceClass.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "kube/object_meta.h"

namespace sriovdra::api {

struct Node {
  kube::ObjectMeta metadata;
  bool unschedulable = false;  // spec.unschedulable: cordoned
  // status.allocatable's extended resources (domain-qualified names outside kubernetes.io, and
  // deviceclass.resource.kubernetes.io/...: a device plugin's), name -> quantity.
  std::map<std::string, std::string> extended_allocatable;
  static Result<Node> decode(const json::Value& v);
};

struct OpaqueConfig {
  std::string driver;
  std::string parameters_json;  // the parameters object, as compact JSON
  bool operator==(const OpaqueConfig&) const = default;
};

struct DeviceClassSpec {
  std::vector<std::string> cel_selectors;
  std::vector<OpaqueConfig> config;
  std::optional<std::string> extended_resource_name;
  bool operator==(const DeviceClassSpec&) const = default;
  void encode(Writer w) const;
};

struct DeviceClass {
  kube::ObjectMeta metadata;
  DeviceClassSpec spec;
  static Result<DeviceClass> decode(const json::Value& v);
};

}  // namespace sriovdra::api
