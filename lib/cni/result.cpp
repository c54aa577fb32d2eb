#include "cni/result.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/json.h"
#include "cni/skel.h"

namespace sriovdra::cni {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

Status bad(const std::string& field, const std::string& why) {
  return Status(Code::kInvalidArgument, "CNI result: " + field + " " + why);
}

Result<std::string> stringAt(const json::Value& obj, const char* key, const std::string& field) {
  const auto* v = json::member(obj, key);
  if (v == nullptr || v->IsNull()) return std::string();
  if (!v->IsString()) return bad(field + "." + key, "is not a string");
  return std::string(v->GetString(), v->GetStringLength());
}

Result<std::optional<int>> intAt(const json::Value& obj, const char* key,
                                 const std::string& field) {
  const auto* v = json::member(obj, key);
  if (v == nullptr || v->IsNull()) return std::optional<int>();
  if (!v->IsInt()) return bad(field + "." + key, "is not an integer");
  return std::optional<int>(v->GetInt());
}

Result<std::optional<IpAddress>> ipAt(const json::Value& obj, const char* key,
                                      const std::string& field) {
  auto text = stringAt(obj, key, field);
  if (!text.ok()) return text.status();
  if (text->empty()) return std::optional<IpAddress>();
  auto ip = parseIp(*text);
  if (!ip.ok()) return bad(field + "." + key, "is not an IP address");
  return std::optional<IpAddress>(*ip);
}

Result<IpPrefix> cidrAt(const json::Value& obj, const char* key, const std::string& field) {
  auto text = stringAt(obj, key, field);
  if (!text.ok()) return text.status();
  auto cidr = parseCidr(*text);
  if (!cidr.ok()) return bad(field + "." + key, "is not an IP address in CIDR notation");
  return *cidr;
}

Result<ResultRoute> routeOf(const json::Value& v, const std::string& field) {
  if (!v.IsObject()) return bad(field, "is not an object");
  ResultRoute r;
  auto dst = cidrAt(v, "dst", field);
  if (!dst.ok()) return dst.status();
  r.dst = *dst;
  auto gw = ipAt(v, "gw", field);
  if (!gw.ok()) return gw.status();
  r.gw = *gw;
  for (auto [key, out] :
       {std::pair{"mtu", &r.mtu}, {"advmss", &r.advmss}, {"priority", &r.priority}}) {
    auto n = intAt(v, key, field);
    if (!n.ok()) return n.status();
    *out = n->value_or(0);
  }
  auto table = intAt(v, "table", field);
  if (!table.ok()) return table.status();
  r.table = *table;
  auto scope = intAt(v, "scope", field);
  if (!scope.ok()) return scope.status();
  r.scope = *scope;
  return r;
}

Status routesOf(const json::Value& obj, const std::string& field, std::vector<ResultRoute>& out) {
  const auto* routes = json::member(obj, "routes");
  if (routes == nullptr || routes->IsNull()) return Status::ok();
  if (!routes->IsArray()) return bad(field + ".routes", "is not a list");
  for (rapidjson::SizeType i = 0; i < routes->Size(); ++i) {
    auto r = routeOf((*routes)[i], field + ".routes[" + std::to_string(i) + "]");
    if (!r.ok()) return r.status();
    out.push_back(*r);
  }
  return Status::ok();
}

void writeString(Writer& w, const char* key, const std::string& value) {
  if (value.empty()) return;
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void writeRoute(Writer& w, const ResultRoute& r) {
  w.StartObject();
  writeString(w, "dst", r.dst.text());
  if (r.gw) writeString(w, "gw", r.gw->text());
  for (auto [key, value] :
       {std::pair{"mtu", r.mtu}, {"advmss", r.advmss}, {"priority", r.priority}}) {
    if (value != 0) {
      w.Key(key);
      w.Int(value);
    }
  }
  if (r.table) {
    w.Key("table");
    w.Int(*r.table);
  }
  if (r.scope) {
    w.Key("scope");
    w.Int(*r.scope);
  }
  w.EndObject();
}

void writeDns(Writer& w, const std::string& dns) {
  w.Key("dns");
  w.RawValue(dns.c_str(), dns.size(), rapidjson::kObjectType);
}

}  // namespace

Result<CniResult> CniResult::parse(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc.ok()) return bad("text", "is not JSON: " + doc.status().message());
  if (!doc->IsObject()) return bad("text", "is not a JSON object");
  CniResult out;
  auto version = stringAt(*doc, "cniVersion", "");
  if (!version.ok()) return version.status();
  out.cni_version = version->empty() ? "0.1.0" : *version;
  if (const auto* dns = json::member(*doc, "dns"); dns != nullptr && !dns->IsNull()) {
    if (!dns->IsObject()) return bad("dns", "is not an object");
    out.dns = json::dump(*dns);
  }
  if (out.cni_version == "0.1.0" || out.cni_version == "0.2.0") {
    for (const char* family : {"ip4", "ip6"}) {
      const auto* ip = json::member(*doc, family);
      if (ip == nullptr || ip->IsNull()) continue;
      if (!ip->IsObject()) return bad(family, "is not an object");
      auto address = cidrAt(*ip, "ip", family);
      if (!address.ok()) return address.status();
      auto gateway = ipAt(*ip, "gateway", family);
      if (!gateway.ok()) return gateway.status();
      out.ips.push_back({std::nullopt, *address, *gateway});
      SDRA_RETURN_IF_ERROR(routesOf(*ip, family, out.routes));
    }
    return out;
  }
  if (const auto* ifs = json::member(*doc, "interfaces"); ifs != nullptr && !ifs->IsNull()) {
    if (!ifs->IsArray()) return bad("interfaces", "is not a list");
    for (rapidjson::SizeType i = 0; i < ifs->Size(); ++i) {
      std::string field = "interfaces[" + std::to_string(i) + "]";
      const auto& v = (*ifs)[i];
      if (!v.IsObject()) return bad(field, "is not an object");
      ResultInterface r;
      for (auto [key, value] : {std::pair{"name", &r.name},
                                {"mac", &r.mac},
                                {"sandbox", &r.sandbox},
                                {"socketPath", &r.socket_path},
                                {"pciID", &r.pci_id}}) {
        auto s = stringAt(v, key, field);
        if (!s.ok()) return s.status();
        *value = *s;
      }
      auto mtu = intAt(v, "mtu", field);
      if (!mtu.ok()) return mtu.status();
      r.mtu = mtu->value_or(0);
      out.interfaces.push_back(std::move(r));
    }
  }
  if (const auto* ips = json::member(*doc, "ips"); ips != nullptr && !ips->IsNull()) {
    if (!ips->IsArray()) return bad("ips", "is not a list");
    for (rapidjson::SizeType i = 0; i < ips->Size(); ++i) {
      std::string field = "ips[" + std::to_string(i) + "]";
      const auto& v = (*ips)[i];
      if (!v.IsObject()) return bad(field, "is not an object");
      ResultIp ip;
      auto interface = intAt(v, "interface", field);
      if (!interface.ok()) return interface.status();
      ip.interface = *interface;
      auto address = cidrAt(v, "address", field);
      if (!address.ok()) return address.status();
      ip.address = *address;
      auto gateway = ipAt(v, "gateway", field);
      if (!gateway.ok()) return gateway.status();
      ip.gateway = *gateway;
      out.ips.push_back(ip);
    }
  }
  SDRA_RETURN_IF_ERROR(routesOf(*doc, "", out.routes));
  return out;
}

// Long on purpose: every CNI version's result shape in one place, in the order the
// specification introduced them, so each reads beside the version it implements.
// NOLINTNEXTLINE(readability-function-size)
Result<std::string> CniResult::encode(std::string_view version) const {
  const auto& supported = supportedVersions();
  if (std::find(supported.begin(), supported.end(), version) == supported.end()) {
    return Status(Code::kInvalidArgument,
                  "CNI version " + std::string(version) + " is not supported");
  }
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  writeString(w, "cniVersion", std::string(version));
  if (version == "0.1.0" || version == "0.2.0") {
    for (bool v4 : {true, false}) {
      auto ip = std::find_if(ips.begin(), ips.end(),
                             [&](const ResultIp& i) { return i.address.address.isV4() == v4; });
      if (ip == ips.end()) continue;
      w.Key(v4 ? "ip4" : "ip6");
      w.StartObject();
      writeString(w, "ip", ip->address.text());
      if (ip->gateway) writeString(w, "gateway", ip->gateway->text());
      bool any = false;
      for (const auto& r : routes) {
        if (r.dst.address.isV4() != v4) continue;
        if (!any) {
          w.Key("routes");
          w.StartArray();
          any = true;
        }
        writeRoute(w, r);
      }
      if (any) w.EndArray();
      w.EndObject();
    }
    writeDns(w, dns);
    w.EndObject();
    return json::indentLikeGo(buffer.GetString(), "    ");
  }
  bool v1 = version.starts_with("1.");
  if (!interfaces.empty()) {
    w.Key("interfaces");
    w.StartArray();
    for (const auto& i : interfaces) {
      w.StartObject();
      w.Key("name");
      w.String(i.name.c_str(), static_cast<rapidjson::SizeType>(i.name.size()));
      writeString(w, "mac", i.mac);
      if (v1 && i.mtu != 0) {
        w.Key("mtu");
        w.Int(i.mtu);
      }
      writeString(w, "sandbox", i.sandbox);
      if (v1) {
        writeString(w, "socketPath", i.socket_path);
        writeString(w, "pciID", i.pci_id);
      }
      w.EndObject();
    }
    w.EndArray();
  }
  if (!ips.empty()) {
    w.Key("ips");
    w.StartArray();
    for (const auto& ip : ips) {
      w.StartObject();
      if (!v1) writeString(w, "version", ip.address.address.isV4() ? "4" : "6");
      if (ip.interface) {
        w.Key("interface");
        w.Int(*ip.interface);
      }
      writeString(w, "address", ip.address.text());
      if (ip.gateway) writeString(w, "gateway", ip.gateway->text());
      w.EndObject();
    }
    w.EndArray();
  }
  if (!routes.empty()) {
    w.Key("routes");
    w.StartArray();
    for (const auto& r : routes) writeRoute(w, r);
    w.EndArray();
  }
  writeDns(w, dns);
  w.EndObject();
  return json::indentLikeGo(buffer.GetString(), "    ");
}

}  // namespace sriovdra::cni
