#pragma once
// The three policy kinds users write, with their JSON codecs:
//   SriovNetworkNodePolicy (sriovnetwork.openshift.io/v1): create VFs, name a resource;
//   SriovResourcePolicy (sriovnetwork.k8snetworkplumbingwg.io/v1alpha1): which VFs to advertise;
//   DeviceAttributes (same group): extra attributes for the advertised VFs.
// Field names and optionality follow the upstream CRDs; statuses are this project's (upstream
// has none): observedGeneration, conditions, what the policy matched and what it lost.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "kube/object_meta.h"

namespace sriovdra::api {

// A resource.k8s.io/v1 DeviceAttribute: exactly one of int, bool, string, version, or (alpha in
// Kubernetes 1.36, DRAListTypeAttributes) ints, bools, strings, versions.
// Every published device carries a dozen of these, and caches hold thousands of devices: the
// list forms live apart (shared, immutable), so a scalar value takes 64 bytes.
struct AttributeValue {
  enum class Type : uint8_t { kInt, kBool, kString, kVersion, kInts, kBools, kStrings, kVersions };
  struct Lists {
    std::vector<int64_t> ints;
    std::vector<bool> bools;
    std::vector<std::string> strings;  // strings or versions
    bool operator==(const Lists&) const = default;
  };
  Type type = Type::kString;
  bool bool_value = false;
  int64_t int_value = 0;
  std::string string_value;            // string or version
  std::shared_ptr<const Lists> lists;  // the list forms; null for a scalar

  static AttributeValue ofInt(int64_t v) { return {.type = Type::kInt, .int_value = v}; }
  static AttributeValue ofBool(bool v) { return {.type = Type::kBool, .bool_value = v}; }
  static AttributeValue ofString(std::string v) {
    return {.type = Type::kString, .string_value = std::move(v)};
  }
  static AttributeValue ofVersion(std::string v) {
    return {.type = Type::kVersion, .string_value = std::move(v)};
  }
  static AttributeValue ofList(Type list_type, Lists values) {
    return {.type = list_type, .lists = std::make_shared<const Lists>(std::move(values))};
  }
  bool isList() const { return type >= Type::kInts; }
  // The values of a list form (empty for a scalar).
  const std::vector<int64_t>& intValues() const;
  const std::vector<bool>& boolValues() const;
  const std::vector<std::string>& stringValues() const;  // strings or versions
  bool operator==(const AttributeValue& o) const;
  // "int", "bool", "string", "version", "ints", "bools", "strings" or "versions".
  std::string_view typeName() const;
  // The value as people read it: 1, true, cx6_vfs, 1.2.3.
  std::string toString() const;
  static AttributeValue decode(const Reader& r);
  void encode(Writer w) const;
};
using Attributes = std::map<std::string, AttributeValue>;
Attributes decodeAttributes(const Reader& r, std::string_view key);
json::Value encodeAttributes(const Attributes& attrs, json::Allocator& a);

// What a policy lost to another one on some node.
struct PolicyConflict {
  std::string node;
  std::string target;  // the PF ("ibp14s0 (0000:0e:00.0)") or device it concerns
  std::string winner;  // the policy that won
  std::string reason;  // why, for the user
  bool operator==(const PolicyConflict&) const = default;
};

struct PolicyStatus {
  int64_t observed_generation = 0;
  std::vector<Condition> conditions;
  int64_t matched_nodes = 0;
  int64_t matched_devices = 0;
  std::vector<PolicyConflict> conflicts;
  bool operator==(const PolicyStatus&) const = default;
  static PolicyStatus decode(const Reader& r);
  void encode(Writer w) const;
};

struct NicSelector {
  std::string vendor;
  std::string device_id;
  std::vector<std::string> pf_names;
  std::vector<std::string> root_devices;
  std::string net_filter;
  bool empty() const {
    return vendor.empty() && device_id.empty() && pf_names.empty() && root_devices.empty() &&
           net_filter.empty();
  }
  bool operator==(const NicSelector&) const = default;
};

struct SriovNetworkNodePolicySpec {
  std::string resource_name;
  std::map<std::string, std::string> node_selector;
  std::optional<int64_t> priority;  // unset = 99 (the webhook writes the default)
  std::optional<int64_t> mtu;
  int64_t num_vfs = 0;
  NicSelector nic_selector;
  std::string device_type;  // "netdevice" (default) or "vfio-pci"
  std::optional<bool> is_rdma;
  bool need_vhost_net = false;
  std::string link_type;  // eth, ETH, ib, IB or ""
  std::string eswitch_mode;
  std::string vdpa_type;
  bool exclude_topology = false;
  bool externally_managed = false;
  bool has_bridge = false;  // bridge.ovs is set (not supported by this operator)
  bool operator==(const SriovNetworkNodePolicySpec&) const = default;

  int64_t effectivePriority() const { return priority.value_or(99); }
  std::string effectiveDeviceType() const {
    return device_type.empty() ? "netdevice" : device_type;
  }
  bool isInfiniband() const { return link_type == "ib" || link_type == "IB"; }
};

struct SriovNetworkNodePolicy {
  kube::ObjectMeta metadata;
  SriovNetworkNodePolicySpec spec;
  PolicyStatus status;
  static Result<SriovNetworkNodePolicy> decode(const json::Value& v);
  // The spec as JSON (for the webhook's patches and offline tools).
  void encodeSpec(Writer w) const;
};

struct ResourceFilter {
  std::vector<std::string> vendors;
  std::vector<std::string> devices;
  std::vector<std::string> pci_addresses;
  std::vector<std::string> pf_names;
  std::vector<std::string> pf_pci_addresses;
  std::vector<std::string> drivers;
  std::string link_type;  // eth, ethernet, ib, infiniband or ""
  bool operator==(const ResourceFilter&) const = default;
};

struct ResourcePolicyConfig {
  std::optional<LabelSelector> device_attributes_selector;
  std::vector<ResourceFilter> resource_filters;
  bool operator==(const ResourcePolicyConfig&) const = default;
};

struct SriovResourcePolicy {
  kube::ObjectMeta metadata;
  std::optional<NodeSelector> node_selector;  // unset = every node
  std::vector<ResourcePolicyConfig> configs;
  PolicyStatus status;
  static Result<SriovResourcePolicy> decode(const json::Value& v);
};

struct DeviceAttributes {
  kube::ObjectMeta metadata;
  Attributes attributes;
  PolicyStatus status;
  static Result<DeviceAttributes> decode(const json::Value& v);
};

}  // namespace sriovdra::api
