#include "sriovcni/netconf.h"

#include <vector>

#include "base/json.h"
#include "base/strings.h"
#include "cni/go_json.h"
#include "sriovcni/plugin_conf.h"

namespace sriovdra::sriovcni {
namespace {

Status loadError(const Status& st) {
  return Status(Code::kInvalidArgument, "LoadConf(): failed to load netconf: " + st.message());
}

// Reads the keys both the configuration and the cache carry.
Status readCommon(const cni::GoFields& plugin, const cni::GoFields& sriov, NetConf& c) {
  SDRA_RETURN_IF_ERROR(readPluginConf(plugin, c.plugin));
  auto integer = [](const cni::GoFields& f, std::string_view key,
                    std::optional<int64_t>& out) -> Status {
    auto v = f.integer(key);
    if (!v.ok()) return v.status();
    out = *v;
    return Status::ok();
  };
  SDRA_RETURN_IF_ERROR(readString(sriov, "deviceID", c.device_id));
  SDRA_RETURN_IF_ERROR(integer(sriov, "vlan", c.vlan));
  SDRA_RETURN_IF_ERROR(integer(sriov, "vlanQoS", c.vlan_qos));
  auto proto = sriov.string("vlanProto");
  if (!proto.ok()) return proto.status();
  c.vlan_proto = *proto;
  SDRA_RETURN_IF_ERROR(readString(sriov, "spoofchk", c.spoofchk));
  SDRA_RETURN_IF_ERROR(readString(sriov, "trust", c.trust));
  SDRA_RETURN_IF_ERROR(readString(sriov, "link_state", c.link_state));
  SDRA_RETURN_IF_ERROR(integer(sriov, "min_tx_rate", c.min_tx_rate));
  SDRA_RETURN_IF_ERROR(integer(sriov, "max_tx_rate", c.max_tx_rate));
  SDRA_RETURN_IF_ERROR(readString(sriov, "mac", c.mac));
  auto runtime =
      sriov.object("runtimeConfig", "struct { Mac string \"json:\\\"mac,omitempty\\\"\" }");
  if (!runtime.ok()) return runtime.status();
  if (*runtime != nullptr) {
    SDRA_RETURN_IF_ERROR(
        readString(cni::GoFields(**runtime, "SriovNetConf.runtimeConfig"), "mac", c.runtime_mac));
  }
  SDRA_RETURN_IF_ERROR(readString(sriov, "logLevel", c.log_level));
  SDRA_RETURN_IF_ERROR(readString(sriov, "logFile", c.log_file));
  // Keys upstream decodes (so their types are checked) and then overwrites.
  std::string ignored;
  SDRA_RETURN_IF_ERROR(readString(sriov, "Master", ignored));
  std::optional<int64_t> ignored_number;
  SDRA_RETURN_IF_ERROR(integer(sriov, "VFID", ignored_number));
  SDRA_RETURN_IF_ERROR(integer(sriov, "MTU", ignored_number));
  return Status::ok();
}

}  // namespace

Result<NetConf> decodeNetConf(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc.ok()) return loadError(doc.status());
  if (!doc->IsObject()) {
    return loadError(Status(Code::kInvalidArgument, "json: cannot unmarshal " +
                                                        cni::goJsonType(*doc) +
                                                        " into Go value of type types.NetConf"));
  }
  NetConf c;
  Status st = readCommon(cni::GoFields(*doc, "NetConf"), cni::GoFields(*doc, "SriovNetConf"), c);
  if (!st.isOk()) return loadError(st);
  return c;
}

uint32_t linkStateNumber(std::string_view link_state) {
  return link_state == "enable" ? 1 : link_state == "disable" ? 2 : 0;
}

uint16_t vlanProtoNumber(std::string_view proto) {
  return proto == "802.1ad" ? uint16_t{0x88a8} : uint16_t{0x8100};
}

Status checkNetConf(NetConf& c) {
  auto bad = [](const std::string& m) {
    return Status(Code::kInvalidArgument, "LoadConf(): " + m);
  };
  if (!c.vlan) {
    if (c.vlan_qos) return bad("vlan id must be configured to set vlan QoS to a non-nil value");
    if (c.vlan_proto) return bad("vlan id must be configured to set vlan proto to a non-nil value");
  } else {
    if (*c.vlan < 0 || *c.vlan > 4094) {
      return bad("vlan id " + std::to_string(*c.vlan) +
                 " invalid: value must be in the range 0-4094");
    }
    if (!c.vlan_qos) c.vlan_qos = 0;
    if (*c.vlan_qos < 0 || *c.vlan_qos > 7) {
      return bad("vlan QoS PCP " + std::to_string(*c.vlan_qos) +
                 " invalid: value must be in the range 0-7");
    }
    if (*c.vlan_qos != 0 && *c.vlan == 0) {
      return bad("non-zero vlan id must be configured to set vlan QoS to a non-zero value");
    }
    if (!c.vlan_proto) c.vlan_proto = "802.1q";
    *c.vlan_proto = asciiLower(*c.vlan_proto);
    if (*c.vlan_proto != "802.1ad" && *c.vlan_proto != "802.1q") {
      return bad("vlan Proto " + *c.vlan_proto + " invalid: value must be '802.1Q' or '802.1ad'");
    }
    if (*c.vlan_proto == "802.1ad" && *c.vlan == 0) {
      return bad("non-zero vlan id must be configured to set vlan proto 802.1ad");
    }
  }
  if (!c.link_state.empty() && c.link_state != "auto" && c.link_state != "enable" &&
      c.link_state != "disable") {
    return bad("invalid link_state value: " + c.link_state);
  }
  return Status::ok();
}

std::string encodeCache(const NetConf& c) {
  json::Document doc;
  auto& a = doc.GetAllocator();
  JsonMap m;
  auto text = [&](std::string_view s) { return json::str(s, a); };
  auto optional = [&](const std::optional<int64_t>& v) {
    return v ? json::Value(static_cast<int64_t>(*v)) : json::Value(rapidjson::kNullType);
  };
  json::Value orig(rapidjson::kObjectType);
  orig.AddMember("AdminMAC", text(c.orig.admin_mac), a);
  orig.AddMember("EffectiveMAC", text(c.orig.effective_mac), a);
  orig.AddMember("HostIFName", text(c.orig.host_if_name), a);
  orig.AddMember("LinkState", c.orig.link_state, a);
  orig.AddMember("MTU", c.orig.mtu, a);
  orig.AddMember("MaxTxRate", c.orig.max_tx_rate, a);
  orig.AddMember("MinTxRate", c.orig.min_tx_rate, a);
  orig.AddMember("SpoofChk", c.orig.spoofchk, a);
  orig.AddMember("Trust", c.orig.trust, a);
  orig.AddMember("Vlan", c.orig.vlan, a);
  orig.AddMember("VlanProto", c.orig.vlan_proto, a);
  orig.AddMember("VlanQoS", c.orig.vlan_qos, a);
  m["OrigVfState"] = std::move(orig);
  m["DPDKMode"] = json::Value(c.dpdk_mode);
  m["Master"] = text(c.master);
  m["MAC"] = text(c.mac);
  m["MTU"] = optional(c.mtu);
  m["vlan"] = optional(c.vlan);
  m["vlanQoS"] = optional(c.vlan_qos);
  m["vlanProto"] = c.vlan_proto ? text(*c.vlan_proto) : json::Value(rapidjson::kNullType);
  m["deviceID"] = text(c.device_id);
  m["VFID"] = json::Value(static_cast<int64_t>(c.vf_id));
  m["min_tx_rate"] = optional(c.min_tx_rate);
  m["max_tx_rate"] = optional(c.max_tx_rate);
  if (!c.spoofchk.empty()) m["spoofchk"] = text(c.spoofchk);
  if (!c.trust.empty()) m["trust"] = text(c.trust);
  if (!c.link_state.empty()) m["link_state"] = text(c.link_state);
  json::Value runtime(rapidjson::kObjectType);
  if (!c.runtime_mac.empty()) runtime.AddMember("mac", text(c.runtime_mac), a);
  m["runtimeConfig"] = std::move(runtime);
  if (!c.log_level.empty()) m["logLevel"] = text(c.log_level);
  if (!c.log_file.empty()) m["logFile"] = text(c.log_file);
  writePluginConf(c.plugin, m, a);
  return dumpSorted(m, doc);
}

Result<NetConf> decodeCache(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc.ok() || !doc->IsObject()) {
    return Status(Code::kInvalidArgument,
                  "failed to parse NetConf: " +
                      (doc.ok() ? std::string("not a JSON object") : doc.status().message()));
  }
  NetConf c;
  cni::GoFields plugin(*doc, "NetConf"), sriov(*doc, "SriovNetConf");
  Status st = readCommon(plugin, sriov, c);
  auto fail = [](const Status& s) {
    return Status(Code::kInvalidArgument, "failed to parse NetConf: " + s.message());
  };
  if (!st.isOk()) return fail(st);
  auto master = sriov.string("Master");
  auto vf = sriov.integer("VFID");
  auto mtu = sriov.integer("MTU");
  auto dpdk = sriov.boolean("DPDKMode");
  for (const Status* s : {&master.status(), &vf.status(), &mtu.status(), &dpdk.status()}) {
    if (!s->isOk()) return fail(*s);
  }
  c.master = master->value_or("");
  c.vf_id = vf->value_or(0);
  c.mtu = *mtu;
  c.dpdk_mode = dpdk->value_or(false);
  auto orig_value = sriov.object("OrigVfState", "types.VfState");
  if (!orig_value.ok()) return fail(orig_value.status());
  if (*orig_value != nullptr) {
    cni::GoFields o(**orig_value, "SriovNetConf.OrigVfState");
    auto s = [&](std::string_view key, std::string& out) -> Status {
      auto v = o.string(key);
      if (!v.ok()) return v.status();
      out = v->value_or("");
      return Status::ok();
    };
    auto n = [&](std::string_view key, int64_t& out, int bits = 64,
                 bool is_unsigned = false) -> Status {
      auto v = o.integer(key, bits, is_unsigned);
      if (!v.ok()) return v.status();
      out = v->value_or(0);
      return Status::ok();
    };
    auto b = [&](std::string_view key, bool& out) -> Status {
      auto v = o.boolean(key);
      if (!v.ok()) return v.status();
      out = v->value_or(false);
      return Status::ok();
    };
    int64_t link_state = 0;
    for (const Status& each :
         {s("HostIFName", c.orig.host_if_name), b("SpoofChk", c.orig.spoofchk),
          b("Trust", c.orig.trust), s("AdminMAC", c.orig.admin_mac),
          s("EffectiveMAC", c.orig.effective_mac), n("Vlan", c.orig.vlan),
          n("VlanQoS", c.orig.vlan_qos), n("VlanProto", c.orig.vlan_proto),
          n("MinTxRate", c.orig.min_tx_rate), n("MaxTxRate", c.orig.max_tx_rate),
          n("LinkState", link_state, 32, true), n("MTU", c.orig.mtu)}) {
      if (!each.isOk()) return fail(each);
    }
    c.orig.link_state = static_cast<uint32_t>(link_state);
  }
  return c;
}

Result<std::string> macFromArgs(std::string_view args) {
  if (args.empty()) return std::string();
  std::string mac;
  std::vector<std::string> unknown;
  bool ignore_unknown = false;
  size_t at = 0;
  while (true) {
    size_t end = args.find(';', at);
    std::string_view pair = args.substr(at, end == std::string_view::npos ? args.npos : end - at);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || pair.find('=', eq + 1) != std::string_view::npos) {
      return Status(Code::kInvalidArgument, "ARGS: invalid pair \"" + std::string(pair) + "\"");
    }
    std::string_view key = pair.substr(0, eq), value = pair.substr(eq + 1);
    if (key == "MAC") {
      mac = value;
    } else if (key == "IgnoreUnknown") {
      std::string v = asciiLower(value);
      if (v == "1" || v == "true") {
        ignore_unknown = true;
      } else if (v == "0" || v == "false") {
        ignore_unknown = false;
      } else {
        return Status(Code::kInvalidArgument,
                      "ARGS: error parsing value of pair \"" + std::string(pair) +
                          "\": boolean unmarshal error: invalid input " + std::string(value));
      }
    } else {
      unknown.emplace_back(pair);
    }
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  if (!unknown.empty() && !ignore_unknown) {
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "\"" : " \"") + u + "\"";
    return Status(Code::kInvalidArgument, "ARGS: unknown args [" + list + "]");
  }
  return mac;
}

}  // namespace sriovdra::sriovcni
