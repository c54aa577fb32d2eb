#include "sriovcni/ib_netconf.h"

#include "base/json.h"
#include "base/strings.h"
#include "cni/go_json.h"
#include "sriovcni/plugin_conf.h"

namespace sriovdra::sriovcni {
namespace {

Status readBool(const cni::GoFields& f, std::string_view key, bool& out) {
  auto v = f.boolean(key);
  if (!v.ok()) return v.status();
  if (*v) out = **v;
  return Status::ok();
}

// The keys the configuration and the cache share.
Status readIbCommon(const json::Value& doc, IbNetConf& c) {
  cni::GoFields plugin(doc, "NetConf"), ib(doc, "IbSriovNetConf");
  SDRA_RETURN_IF_ERROR(readPluginConf(plugin, c.plugin));
  SDRA_RETURN_IF_ERROR(readString(ib, "deviceID", c.device_id));
  SDRA_RETURN_IF_ERROR(readString(ib, "pkey", c.pkey));
  SDRA_RETURN_IF_ERROR(readString(ib, "link_state", c.link_state));
  SDRA_RETURN_IF_ERROR(readBool(ib, "rdmaIsolation", c.rdma_isolation));
  SDRA_RETURN_IF_ERROR(readBool(ib, "ibKubernetesEnabled", c.ib_kubernetes_enabled));
  SDRA_RETURN_IF_ERROR(readBool(ib, "vfioPciMode", c.vfio_pci_mode));
  auto runtime = ib.object("runtimeConfig", "types.RuntimeConf");
  if (!runtime.ok()) return runtime.status();
  if (*runtime != nullptr) {
    SDRA_RETURN_IF_ERROR(
        readString(cni::GoFields(**runtime, "RuntimeConf"), "infinibandGUID", c.runtime_guid));
  }
  auto args = ib.object("args", "struct { CNI map[string]string \"json:\\\"cni\\\"\" }");
  if (!args.ok()) return args.status();
  if (*args != nullptr) {
    auto cni_args = cni::GoFields(**args, "IbSriovNetConf.args").object("cni", "map[string]string");
    if (!cni_args.ok()) return cni_args.status();
    if (*cni_args != nullptr) {
      c.args_cni_set = true;
      for (auto it = (*cni_args)->MemberBegin(); it != (*cni_args)->MemberEnd(); ++it) {
        if (it->value.IsNull()) continue;
        if (!it->value.IsString()) {
          return Status(Code::kInvalidArgument, "json: cannot unmarshal " +
                                                    cni::goJsonType(it->value) +
                                                    " into Go struct field "
                                                    "IbSriovNetConf.args.cni of type string");
        }
        c.args_cni[std::string(it->name.GetString(), it->name.GetStringLength())] =
            std::string(it->value.GetString(), it->value.GetStringLength());
      }
    }
  }
  return Status::ok();
}

bool hexByteGroups(std::string_view guid) {
  if (guid.size() != 23) return false;
  for (size_t i = 0; i < guid.size(); ++i) {
    char ch = guid[i];
    bool hex = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
    if (i % 3 == 2 ? ch != ':' : !hex) return false;
  }
  return true;
}

}  // namespace

Result<IbNetConf> decodeIbNetConf(std::string_view text) {
  auto fail = [](const std::string& m) {
    return Status(Code::kInvalidArgument, "failed to load netconf: " + m);
  };
  auto doc = json::parse(text);
  if (!doc.ok()) return fail(doc.status().message());
  if (!doc->IsObject()) {
    return fail("json: cannot unmarshal " + cni::goJsonType(*doc) +
                " into Go value of type types.NetConf");
  }
  IbNetConf c;
  if (Status st = readIbCommon(*doc, c); !st.isOk()) return fail(st.message());
  if (!c.link_state.empty() && c.link_state != "auto" && c.link_state != "enable" &&
      c.link_state != "disable") {
    return Status(Code::kInvalidArgument, "invalid link_state value: " + c.link_state);
  }
  return c;
}

std::string encodeIbCache(const IbNetConf& c) {
  json::Document doc;
  auto& a = doc.GetAllocator();
  JsonMap m;
  auto text = [&](std::string_view s) { return json::str(s, a); };
  m["Master"] = text(c.master);
  m["deviceID"] = text(c.device_id);
  m["VFID"] = json::Value(static_cast<int64_t>(c.vf_id));
  m["HostIFNames"] = text(c.host_if_name);
  m["HostIFGUID"] = text(c.host_if_guid);
  m["ContIFNames"] = text(c.cont_if_name);
  m["pkey"] = text(c.pkey);
  if (!c.link_state.empty()) m["link_state"] = text(c.link_state);
  if (c.rdma_isolation) m["rdmaIsolation"] = json::Value(true);
  if (c.ib_kubernetes_enabled) m["ibKubernetesEnabled"] = json::Value(true);
  if (c.vfio_pci_mode) m["vfioPciMode"] = json::Value(true);
  json::Value rdma(rapidjson::kObjectType);
  rdma.AddMember("containerRdmaDevName", text(c.rdma_net_state.container_rdma_dev_name), a);
  rdma.AddMember("deviceID", text(c.rdma_net_state.device_id), a);
  rdma.AddMember("sandboxRdmaDevName", text(c.rdma_net_state.sandbox_rdma_dev_name), a);
  rdma.AddMember("version", text(c.rdma_net_state.version), a);
  m["RdmaNetState"] = std::move(rdma);
  json::Value runtime(rapidjson::kObjectType);
  runtime.AddMember("infinibandGUID", text(c.runtime_guid), a);
  m["runtimeConfig"] = std::move(runtime);
  json::Value args(rapidjson::kObjectType);
  if (c.args_cni_set) {
    json::Value cni_args(rapidjson::kObjectType);
    for (const auto& [k, v] : c.args_cni) cni_args.AddMember(text(k), text(v), a);
    args.AddMember("cni", cni_args, a);
  } else {
    args.AddMember("cni", json::Value(rapidjson::kNullType), a);
  }
  m["args"] = std::move(args);
  writePluginConf(c.plugin, m, a);
  return dumpSorted(m, doc);
}

Result<IbNetConf> decodeIbCache(std::string_view text) {
  auto fail = [](const std::string& m) {
    return Status(Code::kInvalidArgument, "failed to parse NetConf: " + m);
  };
  auto doc = json::parse(text);
  if (!doc.ok()) return fail(doc.status().message());
  if (!doc->IsObject()) return fail("not a JSON object");
  IbNetConf c;
  if (Status st = readIbCommon(*doc, c); !st.isOk()) return fail(st.message());
  cni::GoFields ib(*doc, "IbSriovNetConf");
  for (auto [key, out] : {std::pair{"Master", &c.master},
                          {"HostIFNames", &c.host_if_name},
                          {"HostIFGUID", &c.host_if_guid},
                          {"ContIFNames", &c.cont_if_name}}) {
    if (Status st = readString(ib, key, *out); !st.isOk()) return fail(st.message());
  }
  auto vf = ib.integer("VFID");
  if (!vf.ok()) return fail(vf.status().message());
  c.vf_id = vf->value_or(0);
  auto rdma = ib.object("RdmaNetState", "types.RdmaNetState");
  if (!rdma.ok()) return fail(rdma.status().message());
  if (*rdma != nullptr) {
    cni::GoFields r(**rdma, "RdmaNetState");
    for (auto [key, out] : {std::pair{"version", &c.rdma_net_state.version},
                            {"deviceID", &c.rdma_net_state.device_id},
                            {"sandboxRdmaDevName", &c.rdma_net_state.sandbox_rdma_dev_name},
                            {"containerRdmaDevName", &c.rdma_net_state.container_rdma_dev_name}}) {
      if (Status st = readString(r, key, *out); !st.isOk()) return fail(st.message());
    }
  }
  return c;
}

std::string guidOf(const IbNetConf& c) {
  if (!c.runtime_guid.empty()) return c.runtime_guid;
  auto it = c.args_cni.find("guid");
  return it == c.args_cni.end() ? "" : it->second;
}

bool isValidGuid(std::string_view guid) { return hexByteGroups(guid) && !isAllZeroGuid(guid); }

bool isAllZeroGuid(std::string_view guid) {
  return hexByteGroups(guid) && asciiLower(guid) == "00:00:00:00:00:00:00:00";
}

bool isAllOnesGuid(std::string_view guid) {
  return hexByteGroups(guid) && asciiLower(guid) == "ff:ff:ff:ff:ff:ff:ff:ff";
}

}  // namespace sriovdra::sriovcni
