#include "dra/checkpoint.h"

#include <algorithm>

#include "api/codec.h"
#include "base/digest.h"

namespace sriovdra::dra {
namespace {

constexpr int kVersion = 1;

json::Value encodeClaim(const PreparedClaim& c, json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  api::Writer w(v, a);
  w.strAlways("namespace", c.namespace_)
      .strAlways("name", c.name)
      .strAlways("podUID", c.pod_uid)
      .str("podName", c.pod_name)
      .strAlways("state", c.state == PreparedClaim::State::kPrepared ? "Prepared" : "Preparing");
  json::Value devices(rapidjson::kArrayType);
  for (const auto& d : c.devices) {
    json::Value dv(rapidjson::kObjectType);
    api::Writer dw(dv, a);
    dw.strings("requestNames", d.request_names)
        .strAlways("pool", d.pool)
        .strAlways("device", d.device)
        .strAlways("pciAddress", d.pci_address)
        .strings("cdiDeviceIDs", d.cdi_device_ids)
        .strAlways("originalDriver", d.original_driver)
        .str("deviceInfoPath", d.device_info_path)
        .str("resourceName", d.resource_name);
    if (!d.plugin_info.empty()) {
      api::Writer info = dw.object("pluginInfo");
      for (const auto& [provider, values] : d.plugin_info) info.stringMap(provider, values);
    }
    d.config.encode(dw.object("config"));
    devices.PushBack(dv, a);
  }
  w.value("devices", std::move(devices));
  if (c.extended_resource) w.boolean("extendedResource", true);
  return v;
}

Result<PreparedClaim> decodeClaim(const std::string& uid, const api::Reader& r) {
  PreparedClaim c;
  c.uid = uid;
  c.namespace_ = r.str("namespace");
  c.name = r.str("name");
  c.pod_uid = r.str("podUID");
  c.pod_name = r.str("podName");
  std::string state = r.str("state");
  if (state != "Prepared" && state != "Preparing") {
    return Status(Code::kInvalidArgument, r.path() + ".state: \"" + state + "\" is not a state");
  }
  c.state =
      state == "Prepared" ? PreparedClaim::State::kPrepared : PreparedClaim::State::kPreparing;
  c.extended_resource = r.boolean("extendedResource");
  for (const auto& dr : r.array("devices")) {
    PreparedDevice d;
    d.request_names = dr.strings("requestNames");
    d.pool = dr.str("pool");
    d.device = dr.str("device");
    d.pci_address = dr.str("pciAddress");
    d.cdi_device_ids = dr.strings("cdiDeviceIDs");
    d.original_driver = dr.str("originalDriver");
    d.device_info_path = dr.str("deviceInfoPath");
    d.resource_name = dr.str("resourceName");
    if (api::Reader info = dr.object("pluginInfo"); info.present()) {
      for (const auto& m : info.value()->GetObject()) {
        d.plugin_info[m.name.GetString()] = info.stringMap(m.name.GetString());
      }
    }
    if (const json::Value* cfg = dr.raw("config")) {
      auto parsed = VfConfig::decode(*cfg);
      if (!parsed.ok()) {
        return Status(Code::kInvalidArgument, dr.path() + ".config: " + parsed.status().message());
      }
      d.config = *parsed;
    }
    c.devices.push_back(std::move(d));
  }
  SDRA_RETURN_IF_ERROR(r.status());
  return c;
}

}  // namespace

std::string Checkpoint::encode() const {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::Value claims_v(rapidjson::kObjectType);
  for (const auto& [uid, c] : claims) {
    claims_v.AddMember(json::str(uid, a), encodeClaim(c, a), a);
  }
  std::string checksum = sha256Hex(json::dump(claims_v));
  api::Writer(doc, a).i64("version", kVersion).strAlways("checksum", "sha256:" + checksum);
  doc.AddMember("claims", claims_v, a);
  return json::dump(doc) + "\n";
}

Result<Checkpoint> Checkpoint::decode(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc.ok() || !doc->IsObject()) {
    return Status(Code::kInvalidArgument, "not a JSON object");
  }
  api::Reader root(&*doc, "");
  if (int64_t v = root.i64("version"); v != kVersion) {
    return Status(Code::kInvalidArgument,
                  "version " + std::to_string(v) + " is not " + std::to_string(kVersion));
  }
  const json::Value* claims_v = root.raw("claims");
  if (claims_v == nullptr || !claims_v->IsObject()) {
    return Status(Code::kInvalidArgument, "no claims object");
  }
  std::string want = root.str("checksum");
  std::string got = "sha256:" + sha256Hex(json::dump(*claims_v));
  if (want != got) {
    return Status(Code::kInvalidArgument,
                  "checksum mismatch (file says " + want + ", content is " + got + ")");
  }
  Checkpoint cp;
  for (const auto& m : claims_v->GetObject()) {
    std::string uid = m.name.GetString();
    auto claim = decodeClaim(uid, api::Reader(&m.value, "claims." + uid));
    if (!claim.ok()) return claim.status();
    cp.claims.emplace(uid, std::move(*claim));
  }
  return cp;
}

host::PreparedVfs Checkpoint::preparedVfs() const {
  host::PreparedVfs out;
  for (const auto& [uid, c] : claims) {
    for (const auto& d : c.devices) {
      out[d.pci_address].push_back(c.namespace_ + "/" + c.name + " (prepared for its pod)");
    }
  }
  return out;
}

std::vector<PodVf> Checkpoint::podVfs(const std::string& pod_uid) const {
  std::vector<PodVf> out;
  for (const auto& [uid, c] : claims) {
    if (c.pod_uid != pod_uid) continue;
    for (const auto& d : c.devices) out.push_back({d.pci_address, d.resource_name, d.plugin_info});
  }
  std::sort(out.begin(), out.end(),
            [](const PodVf& a, const PodVf& b) { return a.pci_address < b.pci_address; });
  return out;
}

}  // namespace sriovdra::dra
