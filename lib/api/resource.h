#pragma once
// resource.k8s.io/v1 objects the agent publishes and the tools read: ResourceSlice,
// ResourceClaim (spec, allocation, device status), ResourceClaimTemplate and DeviceTaintRule,
// with JSON codecs. Fields follow the Kubernetes 1.37 v1 types. Our VFs use few of them; the
// others (shared counters, per-device node selection, binding conditions, consumable capacity)
// are read so that `explain` sees other drivers' devices as kube-scheduler does.
#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "api/objects.h"
#include "api/policies.h"
#include "kube/object_meta.h"

namespace sriovdra::api {

// A device taint (resource.k8s.io/v1): NoSchedule and NoExecute keep the device from being
// allocated to a request that does not tolerate it; other effects (None) do not.
struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;
  bool operator==(const DeviceTaint&) const = default;
  static DeviceTaint decode(const Reader& r);
};

struct DeviceToleration {
  std::string key;        // "" with operator Exists: every key
  std::string operator_;  // "Equal" ("" means Equal) or "Exists"
  std::string value;
  std::string effect;  // "": every effect
  bool tolerates(const DeviceTaint& taint) const;
  bool operator==(const DeviceToleration&) const = default;
};

// Quantities by name ("memory" -> "80Gi"), as capacity and counters carry them ({value: ...}).
using Quantities = std::map<std::string, std::string>;

// A named set of counters a slice shares among devices of its pool (partitionable devices: a
// GPU's memory slices that its MIG partitions consume).
struct CounterSet {
  std::string name;
  Quantities counters;
  bool operator==(const CounterSet&) const = default;
};

// What allocating a device takes from one counter set of its pool.
struct DeviceCounterConsumption {
  std::string counter_set;
  Quantities counters;
  bool operator==(const DeviceCounterConsumption&) const = default;
};

// How much of a capacity one allocation of a shared device may take (requestPolicy): a request
// for less is rounded up to the next valid value, or to min + k * step in the range; a request
// outside them does not fit. "" = not set.
struct CapacityRequestPolicy {
  std::string default_value;
  std::vector<std::string> valid_values;  // ascending
  std::string min, max, step;             // validRange
  bool operator==(const CapacityRequestPolicy&) const = default;
};

struct SliceDevice {
  std::string name;
  Attributes attributes;
  Quantities capacity;
  std::map<std::string, CapacityRequestPolicy> request_policies;  // by capacity name
  // Consumable capacity: the device may be allocated to many requests at once, each taking a
  // share of its capacity.
  bool allow_multiple_allocations = false;
  std::vector<DeviceTaint> taints;
  std::vector<DeviceCounterConsumption> consumes_counters;
  // Set only in a slice with perDeviceNodeSelection: the nodes this device is reachable from.
  std::string node_name;
  bool all_nodes = false;
  std::optional<NodeSelector> node_selector;
  // Binding conditions: kube-scheduler allocates the device, then waits before binding the pod
  // until these conditions are True in the claim's device status (or a failure one is).
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  bool binds_to_node = false;
  bool operator==(const SliceDevice&) const = default;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 1;
  bool operator==(const ResourcePool&) const = default;
};

// Exactly one of node_name, all_nodes, node_selector and per_device_node_selection is set; a slice
// has devices or shared_counters, not both.
struct ResourceSliceSpec {
  std::string driver;
  ResourcePool pool;
  std::string node_name;
  bool all_nodes = false;
  std::optional<NodeSelector> node_selector;
  bool per_device_node_selection = false;
  std::vector<SliceDevice> devices;
  std::vector<CounterSet> shared_counters;
  bool operator==(const ResourceSliceSpec&) const = default;
  void encode(Writer w) const;
};

struct ResourceSlice {
  kube::ObjectMeta metadata;
  ResourceSliceSpec spec;
  static Result<ResourceSlice> decode(const json::Value& v);
};

// A DeviceTaintRule (resource.k8s.io/v1, GA in Kubernetes 1.37): its taint counts as if the
// driver had published it on every device the selector matches. Each selector field that is set
// must match (driver = slice.spec.driver, pool = slice.spec.pool.name, device = device name); the
// empty selector matches every device, no selector none.
struct DeviceTaintRule {
  struct Selector {
    std::optional<std::string> driver;
    std::optional<std::string> pool;
    std::optional<std::string> device;
  };
  kube::ObjectMeta metadata;
  std::optional<Selector> selector;  // spec.deviceSelector
  DeviceTaint taint;
  bool selects(const ResourceSliceSpec& slice, const SliceDevice& device) const;
  static Result<DeviceTaintRule> decode(const json::Value& v);
};

// The slices as kube-scheduler's slice tracker presents them to the allocator: every rule's taint
// appended to each device it selects, rules in the given order. Pure.
void applyTaintRules(const std::vector<DeviceTaintRule>& rules, std::vector<ResourceSlice>& slices);

struct DeviceSubRequest {
  std::string name;
  std::string device_class_name;
  std::vector<std::string> selectors;  // CEL expressions
  std::string allocation_mode = "ExactCount";
  int64_t count = 1;
  std::vector<DeviceToleration> tolerations;
  Quantities capacity_requests;  // capacity.requests: what each device must give the request
  bool operator==(const DeviceSubRequest&) const = default;
};

struct DeviceRequest {
  std::string name;
  std::optional<DeviceSubRequest> exactly;  // name unused inside
  bool admin_access = false;
  std::vector<DeviceSubRequest> first_available;
  bool operator==(const DeviceRequest&) const = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;
  std::string match_attribute;
  std::string distinct_attribute;
  bool operator==(const DeviceConstraint&) const = default;
};

struct DeviceClaimConfiguration {
  std::vector<std::string> requests;
  OpaqueConfig opaque;
  bool operator==(const DeviceClaimConfiguration&) const = default;
};

struct ResourceClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;
  bool operator==(const ResourceClaimSpec&) const = default;
  static ResourceClaimSpec decode(const Reader& r);
  void encode(Writer w) const;
};

struct DeviceRequestAllocationResult {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  std::vector<std::string> binding_conditions;  // copied from the device
  std::vector<std::string> binding_failure_conditions;
  // A share of a device allocated with allowMultipleAllocations, and the capacity it takes.
  std::string share_id;
  Quantities consumed_capacity;
  bool operator==(const DeviceRequestAllocationResult&) const = default;
};

struct DeviceAllocationConfiguration {
  std::string source;  // FromClass | FromClaim
  std::vector<std::string> requests;
  OpaqueConfig opaque;
  bool operator==(const DeviceAllocationConfiguration&) const = default;
};

struct AllocationResult {
  std::vector<DeviceRequestAllocationResult> results;
  std::vector<DeviceAllocationConfiguration> config;
  std::optional<NodeSelector> node_selector;
  bool operator==(const AllocationResult&) const = default;
  // The node of a node-local allocation (metadata.name In [node]), or "".
  std::string nodeName() const;
};

struct NetworkDeviceData {
  std::string interface_name;
  std::vector<std::string> ips;
  std::string hardware_address;
  bool operator==(const NetworkDeviceData&) const = default;
};

struct AllocatedDeviceStatus {
  std::string driver;
  std::string pool;
  std::string device;
  std::vector<Condition> conditions;
  std::string data_json;  // the data object as compact JSON ("" = none)
  std::optional<NetworkDeviceData> network_data;
  bool operator==(const AllocatedDeviceStatus&) const = default;
  void encode(Writer w) const;
};

struct ResourceClaimConsumer {
  std::string api_group;
  std::string resource;
  std::string name;
  std::string uid;
  bool operator==(const ResourceClaimConsumer&) const = default;
};

struct ResourceClaimStatus {
  std::optional<AllocationResult> allocation;
  std::vector<ResourceClaimConsumer> reserved_for;
  std::vector<AllocatedDeviceStatus> devices;
  bool operator==(const ResourceClaimStatus&) const = default;
};

struct ResourceClaim {
  kube::ObjectMeta metadata;
  ResourceClaimSpec spec;
  ResourceClaimStatus status;
  static Result<ResourceClaim> decode(const json::Value& v);
};

struct ResourceClaimTemplate {
  kube::ObjectMeta metadata;
  std::map<std::string, std::string> claim_labels;
  std::map<std::string, std::string> claim_annotations;
  ResourceClaimSpec spec;
  static Result<ResourceClaimTemplate> decode(const json::Value& v);
};

}  // namespace sriovdra::api
