#include "api/resource.h"

namespace sriovdra::api {
namespace {

// A quantity, written as a string or (by hand) as a number.
std::optional<std::string> quantityText(const json::Value* v) {
  if (v != nullptr && v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  if (v != nullptr && v->IsNumber()) return json::dump(*v);
  return std::nullopt;
}

// {name: quantity}, as consumed capacity and capacity requests are written.
Quantities quantityMap(const Reader& r, std::string_view key) {
  Quantities out;
  const json::Value* map = r.raw(key);
  if (map == nullptr || !map->IsObject()) return out;
  for (const auto& m : map->GetObject()) {
    if (auto q = quantityText(&m.value))
      out[std::string(m.name.GetString(), m.name.GetStringLength())] = *q;
  }
  return out;
}

// {name: {value: quantity}}, as capacity and counters are written; a number is kept as its text.
Quantities decodeQuantities(const Reader& r, std::string_view key) {
  Quantities out;
  const json::Value* map = r.raw(key);
  if (map == nullptr || !map->IsObject()) return out;
  Reader entries = r.object(key);
  for (const auto& m : map->GetObject()) {
    std::string name(m.name.GetString(), m.name.GetStringLength());
    if (auto q = quantityText(entries.object(name).raw("value"))) out[name] = *q;
  }
  return out;
}

json::Value encodeQuantities(const Quantities& q, json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  for (const auto& [k, v] : q) {
    json::Value c(rapidjson::kObjectType);
    Writer(c, a).strAlways("value", v);
    out.AddMember(json::str(k, a), c, a);
  }
  return out;
}

json::Value encodeQuantityMap(const Quantities& q, json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  for (const auto& [k, v] : q) out.AddMember(json::str(k, a), json::str(v, a), a);
  return out;
}

CapacityRequestPolicy decodePolicy(const Reader& r) {
  CapacityRequestPolicy p;
  p.default_value = quantityText(r.raw("default")).value_or("");
  if (const json::Value* values = r.raw("validValues"); values != nullptr && values->IsArray()) {
    for (const auto& v : values->GetArray()) {
      if (auto q = quantityText(&v)) p.valid_values.push_back(*q);
    }
  }
  Reader range = r.object("validRange");
  p.min = quantityText(range.raw("min")).value_or("");
  p.max = quantityText(range.raw("max")).value_or("");
  p.step = quantityText(range.raw("step")).value_or("");
  return p;
}

void encodePolicy(const CapacityRequestPolicy& p, Writer w) {
  w.str("default", p.default_value).strings("validValues", p.valid_values);
  if (!p.min.empty())
    w.object("validRange").str("min", p.min).str("max", p.max).str("step", p.step);
}

OpaqueConfig decodeOpaque(const Reader& r) {
  Reader o = r.object("opaque");
  const json::Value* params = o.raw("parameters");
  return {o.str("driver"), params != nullptr ? json::dump(*params) : "{}"};
}

void encodeOpaque(const OpaqueConfig& c, Writer w) {
  Writer o = w.object("opaque");
  o.strAlways("driver", c.driver);
  auto params = json::parse(c.parameters_json);
  json::Value v(rapidjson::kObjectType);
  if (params.ok()) v.CopyFrom(*params, w.allocator());
  o.value("parameters", std::move(v));
}

std::vector<std::string> decodeSelectors(const Reader& r) {
  std::vector<std::string> out;
  for (const auto& s : r.array("selectors")) out.push_back(s.object("cel").str("expression"));
  return out;
}

json::Value encodeSelectors(const std::vector<std::string>& selectors, json::Allocator& a) {
  json::Value arr(rapidjson::kArrayType);
  for (const auto& e : selectors) {
    json::Value s(rapidjson::kObjectType);
    Writer(s, a).object("cel").strAlways("expression", e);
    arr.PushBack(s, a);
  }
  return arr;
}

template <typename T, typename Fn>
json::Value list(const std::vector<T>& items, json::Allocator& a, Fn fn) {
  json::Value arr(rapidjson::kArrayType);
  for (const auto& i : items) {
    json::Value o(rapidjson::kObjectType);
    fn(i, Writer(o, a));
    arr.PushBack(o, a);
  }
  return arr;
}

DeviceSubRequest decodeSub(const Reader& r) {
  DeviceSubRequest s;
  s.name = r.str("name");
  s.device_class_name = r.str("deviceClassName");
  s.selectors = decodeSelectors(r);
  s.allocation_mode = r.str("allocationMode", "ExactCount");
  s.count = r.i64("count", s.allocation_mode == "All" ? 0 : 1);
  for (const auto& t : r.array("tolerations")) {
    s.tolerations.push_back({t.str("key"), t.str("operator"), t.str("value"), t.str("effect")});
  }
  s.capacity_requests = quantityMap(r.object("capacity"), "requests");
  return s;
}

void encodeSub(const DeviceSubRequest& s, Writer w, bool with_name) {
  if (with_name) w.strAlways("name", s.name);
  w.strAlways("deviceClassName", s.device_class_name);
  w.nonEmpty("selectors", encodeSelectors(s.selectors, w.allocator()));
  w.strAlways("allocationMode", s.allocation_mode);
  if (s.allocation_mode != "All") w.i64("count", s.count);
  w.nonEmpty("tolerations",
             list(s.tolerations, w.allocator(), [](const DeviceToleration& t, Writer o) {
               o.str("key", t.key)
                   .str("operator", t.operator_)
                   .str("value", t.value)
                   .str("effect", t.effect);
             }));
  if (!s.capacity_requests.empty()) {
    w.object("capacity").value("requests", encodeQuantityMap(s.capacity_requests, w.allocator()));
  }
}

}  // namespace

void ResourceSliceSpec::encode(Writer w) const {
  auto& a = w.allocator();
  w.strAlways("driver", driver);
  w.object("pool")
      .strAlways("name", pool.name)
      .i64("generation", pool.generation)
      .i64("resourceSliceCount", pool.resource_slice_count);
  if (!node_name.empty()) w.strAlways("nodeName", node_name);
  if (all_nodes) w.boolean("allNodes", true);
  if (node_selector) node_selector->encode(w.object("nodeSelector"));
  if (per_device_node_selection) w.boolean("perDeviceNodeSelection", true);
  w.nonEmpty(
      "devices", list(devices, a, [&](const SliceDevice& d, Writer o) {
        o.strAlways("name", d.name);
        o.nonEmpty("attributes", encodeAttributes(d.attributes, a));
        json::Value capacity = encodeQuantities(d.capacity, a);
        for (const auto& [name, policy] : d.request_policies) {
          if (!capacity.HasMember(name.c_str())) continue;
          encodePolicy(policy, Writer(capacity[name.c_str()], a).object("requestPolicy"));
        }
        o.nonEmpty("capacity", std::move(capacity));
        o.trueOnly("allowMultipleAllocations", d.allow_multiple_allocations);
        o.nonEmpty("consumesCounters",
                   list(d.consumes_counters, a, [&](const DeviceCounterConsumption& c, Writer cw) {
                     cw.strAlways("counterSet", c.counter_set);
                     cw.value("counters", encodeQuantities(c.counters, a));
                   }));
        o.str("nodeName", d.node_name).trueOnly("allNodes", d.all_nodes);
        if (d.node_selector) d.node_selector->encode(o.object("nodeSelector"));
        o.nonEmpty("taints", list(d.taints, a, [](const DeviceTaint& t, Writer tw) {
                     tw.strAlways("key", t.key).str("value", t.value).strAlways("effect", t.effect);
                   }));
        o.trueOnly("bindsToNode", d.binds_to_node)
            .strings("bindingConditions", d.binding_conditions)
            .strings("bindingFailureConditions", d.binding_failure_conditions);
      }));
  w.nonEmpty("sharedCounters", list(shared_counters, a, [&](const CounterSet& c, Writer o) {
               o.strAlways("name", c.name).value("counters", encodeQuantities(c.counters, a));
             }));
}

Result<ResourceSlice> ResourceSlice::decode(const json::Value& v) {
  Reader root(&v, "");
  ResourceSlice s;
  s.metadata = kube::ObjectMeta::decode(v);
  Reader spec = root.object("spec");
  s.spec.driver = spec.str("driver");
  Reader pool = spec.object("pool");
  s.spec.pool = {pool.str("name"), pool.i64("generation"), pool.i64("resourceSliceCount", 1)};
  s.spec.node_name = spec.str("nodeName");
  s.spec.all_nodes = spec.boolean("allNodes");
  if (spec.has("nodeSelector"))
    s.spec.node_selector = NodeSelector::decode(spec.object("nodeSelector"));
  s.spec.per_device_node_selection = spec.boolean("perDeviceNodeSelection");
  for (const auto& d : spec.array("devices")) {
    SliceDevice dev{d.str("name"), decodeAttributes(d, "attributes"),
                    decodeQuantities(d, "capacity")};
    Reader capacity = d.object("capacity");
    for (const auto& [name, value] : dev.capacity) {
      Reader c = capacity.object(name);
      if (c.has("requestPolicy"))
        dev.request_policies[name] = decodePolicy(c.object("requestPolicy"));
    }
    dev.allow_multiple_allocations = d.boolean("allowMultipleAllocations");
    for (const auto& t : d.array("taints")) dev.taints.push_back(DeviceTaint::decode(t));
    for (const auto& c : d.array("consumesCounters")) {
      dev.consumes_counters.push_back({c.str("counterSet"), decodeQuantities(c, "counters")});
    }
    dev.node_name = d.str("nodeName");
    dev.all_nodes = d.boolean("allNodes");
    if (d.has("nodeSelector")) dev.node_selector = NodeSelector::decode(d.object("nodeSelector"));
    dev.binding_conditions = d.strings("bindingConditions");
    dev.binding_failure_conditions = d.strings("bindingFailureConditions");
    dev.binds_to_node = d.boolean("bindsToNode");
    s.spec.devices.push_back(std::move(dev));
  }
  for (const auto& c : spec.array("sharedCounters")) {
    s.spec.shared_counters.push_back({c.str("name"), decodeQuantities(c, "counters")});
  }
  if (!root.status().isOk()) return root.status();
  return s;
}

DeviceTaint DeviceTaint::decode(const Reader& r) {
  return {r.str("key"), r.str("value"), r.str("effect")};
}

bool DeviceTaintRule::selects(const ResourceSliceSpec& slice, const SliceDevice& d) const {
  return selector && (!selector->driver || *selector->driver == slice.driver) &&
         (!selector->pool || *selector->pool == slice.pool.name) &&
         (!selector->device || *selector->device == d.name);
}

Result<DeviceTaintRule> DeviceTaintRule::decode(const json::Value& v) {
  Reader root(&v, "");
  DeviceTaintRule rule;
  rule.metadata = kube::ObjectMeta::decode(v);
  Reader spec = root.object("spec");
  if (spec.has("deviceSelector")) {
    Reader sel = spec.object("deviceSelector");
    auto optional = [&](const char* field) {
      return sel.has(field) ? std::optional<std::string>(sel.str(field)) : std::nullopt;
    };
    rule.selector = Selector{optional("driver"), optional("pool"), optional("device")};
  }
  rule.taint = DeviceTaint::decode(spec.object("taint"));
  if (!root.status().isOk()) return root.status();
  return rule;
}

void applyTaintRules(const std::vector<DeviceTaintRule>& rules,
                     std::vector<ResourceSlice>& slices) {
  for (const auto& rule : rules) {
    for (auto& slice : slices) {
      for (auto& d : slice.spec.devices) {
        if (rule.selects(slice.spec, d)) d.taints.push_back(rule.taint);
      }
    }
  }
}

ResourceClaimSpec ResourceClaimSpec::decode(const Reader& r) {
  ResourceClaimSpec s;
  Reader devices = r.object("devices");
  for (const auto& req : devices.array("requests")) {
    DeviceRequest d;
    d.name = req.str("name");
    if (req.has("exactly")) {
      d.exactly = decodeSub(req.object("exactly"));
      d.admin_access = req.object("exactly").boolean("adminAccess");
    }
    for (const auto& sub : req.array("firstAvailable")) d.first_available.push_back(decodeSub(sub));
    s.requests.push_back(std::move(d));
  }
  for (const auto& c : devices.array("constraints")) {
    s.constraints.push_back(
        {c.strings("requests"), c.str("matchAttribute"), c.str("distinctAttribute")});
  }
  for (const auto& c : devices.array("config")) {
    s.config.push_back({c.strings("requests"), decodeOpaque(c)});
  }
  return s;
}

void ResourceClaimSpec::encode(Writer w) const {
  auto& a = w.allocator();
  Writer devices = w.object("devices");
  devices.nonEmpty("requests", list(requests, a, [&](const DeviceRequest& d, Writer o) {
                     o.strAlways("name", d.name);
                     if (d.exactly) {
                       Writer e = o.object("exactly");
                       encodeSub(*d.exactly, e, false);
                       if (d.admin_access) e.boolean("adminAccess", true);
                     }
                     o.nonEmpty("firstAvailable", list(d.first_available, a,
                                                       [](const DeviceSubRequest& s, Writer so) {
                                                         encodeSub(s, so, true);
                                                       }));
                   }));
  devices.nonEmpty("constraints", list(constraints, a, [](const DeviceConstraint& c, Writer o) {
                     o.strings("requests", c.requests)
                         .str("matchAttribute", c.match_attribute)
                         .str("distinctAttribute", c.distinct_attribute);
                   }));
  devices.nonEmpty("config", list(config, a, [](const DeviceClaimConfiguration& c, Writer o) {
                     o.strings("requests", c.requests);
                     encodeOpaque(c.opaque, o);
                   }));
}

std::string AllocationResult::nodeName() const {
  if (!node_selector) return "";
  for (const auto& t : node_selector->terms) {
    for (const auto& f : t.match_fields) {
      if (f.key == "metadata.name" && f.op == "In" && f.values.size() == 1) return f.values[0];
    }
  }
  return "";
}

void AllocatedDeviceStatus::encode(Writer w) const {
  w.strAlways("driver", driver).strAlways("pool", pool).strAlways("device", device);
  w.nonEmpty("conditions", encodeConditions(conditions, w.allocator()));
  if (!data_json.empty()) {
    auto data = json::parse(data_json);
    if (data.ok()) {
      json::Value v;
      v.CopyFrom(*data, w.allocator());
      w.value("data", std::move(v));
    }
  }
  if (network_data) {
    Writer n = w.object("networkData");
    n.str("interfaceName", network_data->interface_name)
        .strings("ips", network_data->ips)
        .str("hardwareAddress", network_data->hardware_address);
  }
}

Result<ResourceClaim> ResourceClaim::decode(const json::Value& v) {
  Reader root(&v, "");
  ResourceClaim c;
  c.metadata = kube::ObjectMeta::decode(v);
  c.spec = ResourceClaimSpec::decode(root.object("spec"));
  Reader status = root.object("status");
  if (status.has("allocation")) {
    Reader alloc = status.object("allocation");
    AllocationResult a;
    Reader devices = alloc.object("devices");
    for (const auto& r : devices.array("results")) {
      a.results.push_back({r.str("request"), r.str("driver"), r.str("pool"), r.str("device"),
                           r.boolean("adminAccess"), r.strings("bindingConditions"),
                           r.strings("bindingFailureConditions"), r.str("shareID"),
                           quantityMap(r, "consumedCapacity")});
    }
    for (const auto& cfg : devices.array("config")) {
      a.config.push_back({cfg.str("source"), cfg.strings("requests"), decodeOpaque(cfg)});
    }
    if (alloc.has("nodeSelector"))
      a.node_selector = NodeSelector::decode(alloc.object("nodeSelector"));
    c.status.allocation = std::move(a);
  }
  for (const auto& r : status.array("reservedFor")) {
    c.status.reserved_for.push_back(
        {r.str("apiGroup"), r.str("resource"), r.str("name"), r.str("uid")});
  }
  for (const auto& d : status.array("devices")) {
    AllocatedDeviceStatus s;
    s.driver = d.str("driver");
    s.pool = d.str("pool");
    s.device = d.str("device");
    s.conditions = decodeConditions(d, "conditions");
    if (const json::Value* data = d.raw("data")) s.data_json = json::dump(*data);
    if (d.has("networkData")) {
      Reader n = d.object("networkData");
      s.network_data =
          NetworkDeviceData{n.str("interfaceName"), n.strings("ips"), n.str("hardwareAddress")};
    }
    c.status.devices.push_back(std::move(s));
  }
  if (!root.status().isOk()) return root.status();
  return c;
}

Result<ResourceClaimTemplate> ResourceClaimTemplate::decode(const json::Value& v) {
  Reader root(&v, "");
  ResourceClaimTemplate t;
  t.metadata = kube::ObjectMeta::decode(v);
  Reader spec = root.object("spec");
  Reader md = spec.object("metadata");
  t.claim_labels = md.stringMap("labels");
  t.claim_annotations = md.stringMap("annotations");
  t.spec = ResourceClaimSpec::decode(spec.object("spec"));
  if (!root.status().isOk()) return root.status();
  return t;
}

// As Kubernetes' resourceclaim.ToleratesTaint: the effect and key must match when given; Equal
// compares values, Exists matches any.
bool DeviceToleration::tolerates(const DeviceTaint& taint) const {
  if (!effect.empty() && effect != taint.effect) return false;
  if (!key.empty() && key != taint.key) return false;
  if (operator_.empty() || operator_ == "Equal") return value == taint.value;
  return operator_ == "Exists";
}

}  // namespace sriovdra::api
