#include "api/policies.h"

namespace sriovdra::api {

std::string_view AttributeValue::typeName() const {
  switch (type) {
    case Type::kInt:
      return "int";
    case Type::kBool:
      return "bool";
    case Type::kString:
      return "string";
    case Type::kVersion:
      return "version";
    case Type::kInts:
      return "ints";
    case Type::kBools:
      return "bools";
    case Type::kStrings:
      return "strings";
    case Type::kVersions:
      return "versions";
  }
  return "string";
}

namespace {
const AttributeValue::Lists& noLists() {
  static const AttributeValue::Lists kNone;
  return kNone;
}
}  // namespace

const std::vector<int64_t>& AttributeValue::intValues() const {
  return (lists ? *lists : noLists()).ints;
}
const std::vector<bool>& AttributeValue::boolValues() const {
  return (lists ? *lists : noLists()).bools;
}
const std::vector<std::string>& AttributeValue::stringValues() const {
  return (lists ? *lists : noLists()).strings;
}

bool AttributeValue::operator==(const AttributeValue& o) const {
  return type == o.type && bool_value == o.bool_value && int_value == o.int_value &&
         string_value == o.string_value &&
         (lists == o.lists || (lists ? *lists : noLists()) == (o.lists ? *o.lists : noLists()));
}

std::string AttributeValue::toString() const {
  auto join = [](const auto& items, auto fn) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + fn(items[i]);
    return out + "]";
  };
  switch (type) {
    case Type::kInt:
      return std::to_string(int_value);
    case Type::kBool:
      return bool_value ? "true" : "false";
    case Type::kInts:
      return join(intValues(), [](int64_t v) { return std::to_string(v); });
    case Type::kBools:
      return join(boolValues(), [](bool v) { return std::string(v ? "true" : "false"); });
    case Type::kStrings:
    case Type::kVersions:
      return join(stringValues(), [](const std::string& v) { return v; });
    default:
      return string_value;
  }
}

AttributeValue AttributeValue::decode(const Reader& r) {
  int set = 0;
  AttributeValue v;
  if (r.has("int")) {
    v = ofInt(r.i64("int"));
    ++set;
  }
  if (r.has("bool")) {
    v = ofBool(r.boolean("bool"));
    ++set;
  }
  if (r.has("string")) {
    v = ofString(r.str("string"));
    ++set;
  }
  if (r.has("version")) {
    v = ofVersion(r.str("version"));
    ++set;
  }
  if (r.has("ints")) {
    Lists l;
    const json::Value* list = r.raw("ints");
    if (list->IsArray()) {
      for (const auto& item : list->GetArray()) {
        if (item.IsInt64())
          l.ints.push_back(item.GetInt64());
        else
          r.fail("ints", "expected a list of integers");
      }
    }
    v = ofList(Type::kInts, std::move(l));
    ++set;
  }
  if (r.has("bools")) {
    Lists l;
    const json::Value* list = r.raw("bools");
    if (list->IsArray()) {
      for (const auto& item : list->GetArray()) {
        if (item.IsBool())
          l.bools.push_back(item.GetBool());
        else
          r.fail("bools", "expected a list of true/false");
      }
    }
    v = ofList(Type::kBools, std::move(l));
    ++set;
  }
  if (r.has("strings")) {
    v = ofList(Type::kStrings, {.strings = r.strings("strings")});
    ++set;
  }
  if (r.has("versions")) {
    v = ofList(Type::kVersions, {.strings = r.strings("versions")});
    ++set;
  }
  if (set != 1) {
    r.fail("",
           "must set exactly one of int, bool, string, version (or the list forms ints, "
           "bools, strings, versions)");
  }
  return v;
}

void AttributeValue::encode(Writer w) const {
  switch (type) {
    case Type::kInt:
      w.i64("int", int_value);
      break;
    case Type::kBool:
      w.boolean("bool", bool_value);
      break;
    case Type::kString:
      w.strAlways("string", string_value);
      break;
    case Type::kVersion:
      w.strAlways("version", string_value);
      break;
    case Type::kInts: {
      json::Value arr(rapidjson::kArrayType);
      for (int64_t i : intValues()) arr.PushBack(json::Value(i), w.allocator());
      w.value("ints", std::move(arr));
      break;
    }
    case Type::kBools: {
      json::Value arr(rapidjson::kArrayType);
      for (bool b : boolValues()) arr.PushBack(json::Value(b), w.allocator());
      w.value("bools", std::move(arr));
      break;
    }
    case Type::kStrings:
      w.strings("strings", stringValues());
      break;
    case Type::kVersions:
      w.strings("versions", stringValues());
      break;
  }
}

Attributes decodeAttributes(const Reader& r, std::string_view key) {
  Attributes out;
  const json::Value* m = r.raw(key);
  if (m == nullptr) return out;
  if (!m->IsObject()) {
    r.fail(key, "expected a map of attributes");
    return out;
  }
  Reader attrs = r.object(key);
  for (const auto& kv : m->GetObject()) {
    std::string name(kv.name.GetString(), kv.name.GetStringLength());
    out.emplace(name, AttributeValue::decode(attrs.object(name)));
  }
  return out;
}

json::Value encodeAttributes(const Attributes& attrs, json::Allocator& a) {
  json::Value m(rapidjson::kObjectType);
  for (const auto& [name, value] : attrs) {
    json::Value v(rapidjson::kObjectType);
    value.encode(Writer(v, a));
    m.AddMember(json::str(name, a), v, a);
  }
  return m;
}

PolicyStatus PolicyStatus::decode(const Reader& r) {
  PolicyStatus s;
  s.observed_generation = r.i64("observedGeneration");
  s.conditions = decodeConditions(r, "conditions");
  s.matched_nodes = r.i64("matchedNodes");
  s.matched_devices = r.i64("matchedDevices");
  for (const auto& c : r.array("conflicts")) {
    s.conflicts.push_back({c.str("node"), c.str("target"), c.str("winner"), c.str("reason")});
  }
  return s;
}

void PolicyStatus::encode(Writer w) const {
  w.i64("observedGeneration", observed_generation)
      .i64("matchedNodes", matched_nodes)
      .i64("matchedDevices", matched_devices)
      .value("conditions", encodeConditions(conditions, w.allocator()));
  json::Value arr(rapidjson::kArrayType);
  for (const auto& c : conflicts) {
    json::Value o(rapidjson::kObjectType);
    Writer(o, w.allocator())
        .str("node", c.node)
        .str("target", c.target)
        .str("winner", c.winner)
        .str("reason", c.reason);
    arr.PushBack(o, w.allocator());
  }
  w.nonEmpty("conflicts", std::move(arr));
}

Result<SriovNetworkNodePolicy> SriovNetworkNodePolicy::decode(const json::Value& v) {
  Reader root(&v, "");
  SriovNetworkNodePolicy p;
  p.metadata = kube::ObjectMeta::decode(v);
  Reader spec = root.object("spec");
  auto& s = p.spec;
  s.resource_name = spec.str("resourceName");
  s.node_selector = spec.stringMap("nodeSelector");
  s.priority = spec.optI64("priority");
  s.mtu = spec.optI64("mtu");
  s.num_vfs = spec.i64("numVfs");
  Reader nic = spec.object("nicSelector");
  s.nic_selector = {nic.str("vendor"), nic.str("deviceID"), nic.strings("pfNames"),
                    nic.strings("rootDevices"), nic.str("netFilter")};
  s.device_type = spec.str("deviceType");
  s.is_rdma = spec.optBool("isRdma");
  s.need_vhost_net = spec.boolean("needVhostNet");
  s.link_type = spec.str("linkType");
  s.eswitch_mode = spec.str("eSwitchMode");
  s.vdpa_type = spec.str("vdpaType");
  s.exclude_topology = spec.boolean("excludeTopology");
  s.externally_managed = spec.boolean("externallyManaged");
  s.has_bridge = spec.has("bridge");
  p.status = PolicyStatus::decode(root.object("status"));
  if (!root.status().isOk()) return root.status();
  return p;
}

void SriovNetworkNodePolicy::encodeSpec(Writer w) const {
  const auto& s = spec;
  w.strAlways("resourceName", s.resource_name);
  json::Value selector(rapidjson::kObjectType);
  for (const auto& [k, val] : s.node_selector) {
    selector.AddMember(json::str(k, w.allocator()), json::str(val, w.allocator()), w.allocator());
  }
  w.value("nodeSelector", std::move(selector));
  w.optI64("priority", s.priority).optI64("mtu", s.mtu).i64("numVfs", s.num_vfs);
  Writer nic = w.object("nicSelector");
  nic.str("vendor", s.nic_selector.vendor)
      .str("deviceID", s.nic_selector.device_id)
      .strings("pfNames", s.nic_selector.pf_names)
      .strings("rootDevices", s.nic_selector.root_devices)
      .str("netFilter", s.nic_selector.net_filter);
  w.str("deviceType", s.device_type)
      .optBool("isRdma", s.is_rdma)
      .trueOnly("needVhostNet", s.need_vhost_net)
      .str("linkType", s.link_type)
      .str("eSwitchMode", s.eswitch_mode)
      .str("vdpaType", s.vdpa_type)
      .trueOnly("excludeTopology", s.exclude_topology)
      .trueOnly("externallyManaged", s.externally_managed);
}

Result<SriovResourcePolicy> SriovResourcePolicy::decode(const json::Value& v) {
  Reader root(&v, "");
  SriovResourcePolicy p;
  p.metadata = kube::ObjectMeta::decode(v);
  Reader spec = root.object("spec");
  if (spec.has("nodeSelector")) p.node_selector = NodeSelector::decode(spec.object("nodeSelector"));
  for (const auto& c : spec.array("configs")) {
    ResourcePolicyConfig config;
    if (c.has("deviceAttributesSelector")) {
      config.device_attributes_selector =
          LabelSelector::decode(c.object("deviceAttributesSelector"));
    }
    for (const auto& f : c.array("resourceFilters")) {
      config.resource_filters.push_back({f.strings("vendors"), f.strings("devices"),
                                         f.strings("pciAddresses"), f.strings("pfNames"),
                                         f.strings("pfPciAddresses"), f.strings("drivers"),
                                         f.str("linkType")});
    }
    p.configs.push_back(std::move(config));
  }
  p.status = PolicyStatus::decode(root.object("status"));
  if (!root.status().isOk()) return root.status();
  return p;
}

Result<DeviceAttributes> DeviceAttributes::decode(const json::Value& v) {
  Reader root(&v, "");
  DeviceAttributes d;
  d.metadata = kube::ObjectMeta::decode(v);
  d.attributes = decodeAttributes(root.object("spec"), "attributes");
  d.status = PolicyStatus::decode(root.object("status"));
  if (!root.status().isOk()) return root.status();
  return d;
}

}  // namespace sriovdra::api
