#include "policy/networks.h"

#include "base/json.h"
#include "base/names.h"
#include "base/strings.h"

namespace sriovdra::policy {
namespace {

constexpr std::string_view kGroup = "sriovnetwork.openshift.io";

// The length of the Unicode space (Go's unicode.IsSpace) that starts s, or 0.
size_t spaceLength(std::string_view s) {
  auto at = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  if (s.empty()) return 0;
  unsigned char c = at(0);
  if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
  if (s.size() >= 2 && c == 0xC2 && (at(1) == 0x85 || at(1) == 0xA0)) return 2;
  if (s.size() < 3) return 0;
  if (c == 0xE1 && at(1) == 0x9A && at(2) == 0x80) return 3;  // U+1680
  if (c == 0xE2 && at(1) == 0x80 &&
      (at(2) <= 0x8A || at(2) == 0xA8 || at(2) == 0xA9 || at(2) == 0xAF) && at(2) >= 0x80) {
    return 3;  // U+2000..U+200A, U+2028, U+2029, U+202F
  }
  if (c == 0xE2 && at(1) == 0x81 && at(2) == 0x9F) return 3;  // U+205F
  if (c == 0xE3 && at(1) == 0x80 && at(2) == 0x80) return 3;  // U+3000
  return 0;
}

// strings.Join(strings.Fields(s), ""): every Unicode space removed, inside strings too.
std::string withoutSpaces(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (size_t n = spaceLength(s.substr(i)); n > 0) {
      i += n;
    } else {
      out += s[i++];
    }
  }
  return out;
}

bool nonEmptyStringMember(const json::Value& obj, std::string_view key, bool trim) {
  const json::Value* t = json::member(obj, key);
  if (t == nullptr || !t->IsString()) return false;
  std::string_view v(t->GetString(), t->GetStringLength());
  return !(trim ? withoutSpaces(v) : std::string(v)).empty();
}

// The rules on the raw JSON fields and the verbatim strings; errors in upstream's words.
void validateFields(const api::Network& n, Findings& f) {
  const auto& s = n.spec;
  if (!s.network_namespace.empty() && !isDnsLabel(s.network_namespace)) {
    f.errors.push_back("networkNamespace \"" + printable(s.network_namespace) +
                       "\" is not a namespace name (a DNS-1123 label: lower-case letters, "
                       "digits and '-', at most 63 characters)");
  }
  if (!s.capabilities.empty()) {
    auto caps = json::parse(s.capabilities);
    bool ok = caps.ok() && caps->IsObject();
    if (ok) {
      for (const auto& m : caps->GetObject()) ok = ok && m.value.IsBool();
    }
    if (!ok) {
      f.errors.push_back(
          "capabilities must be a JSON object with boolean values, e.g. '{\"mac\": true}'" +
          (caps.ok() ? std::string() : ": " + caps.status().message()));
    }
  }
  if (!s.ipam.empty()) {
    auto ipam = json::parse(s.ipam);
    if (!ipam.ok() || !ipam->IsObject()) {
      f.errors.push_back("ipam must be a valid JSON object" +
                         (ipam.ok() ? std::string() : ": " + ipam.status().message()));
    } else if (const json::Value* t = json::member(*ipam, "type"); t == nullptr) {
      f.errors.push_back("ipam must contain a \"type\" field");
    } else if (!t->IsString()) {
      f.errors.push_back("ipam \"type\" must be a string");
    } else if (!nonEmptyStringMember(*ipam, "type", false)) {
      f.errors.push_back("ipam \"type\" must not be empty");
    } else if (auto stripped = json::parse(withoutSpaces(s.ipam)); !stripped.ok()) {
      f.errors.push_back("ipam is no longer valid JSON once its whitespace is removed (as the " +
                         std::string("SR-IOV network operator renders it): ") +
                         stripped.status().message());
    }
  }
  if (!s.meta_plugins.empty()) {
    auto plugins = json::parse("[" + s.meta_plugins + "]");
    if (!plugins.ok()) {
      f.errors.push_back("metaPlugins must be one or more JSON plugin objects: " +
                         plugins.status().message());
    } else if (plugins->Empty()) {
      f.errors.push_back("metaPlugins must contain at least one plugin object");
    } else {
      for (rapidjson::SizeType i = 0; i < plugins->Size(); ++i) {
        const json::Value& p = (*plugins)[i];
        std::string at = "metaPlugins[" + std::to_string(i) + "]";
        if (!p.IsObject()) {
          f.errors.push_back("metaPlugins must be one or more JSON plugin objects: " + at +
                             " is not an object");
        } else if (json::member(p, "type") == nullptr) {
          f.errors.push_back(at + " must contain a \"type\" field");
        } else if (!json::member(p, "type")->IsString()) {
          f.errors.push_back(at + " \"type\" must be a string");
        } else if (!nonEmptyStringMember(p, "type", true)) {
          f.errors.push_back(at + " \"type\" must not be empty");
        }
      }
    }
  }
  for (const auto& [field, value] : {std::pair{"logFile", &s.log_file},
                                     {"logLevel", &s.log_level},
                                     {"vlanProto", &s.vlan_proto}}) {
    if (value->find_first_of("\"\\") != std::string::npos) {
      f.errors.push_back(std::string(field) + " must not contain quotes or backslashes");
    }
  }
}

bool oneOf(const std::string& v, std::initializer_list<std::string_view> allowed) {
  for (auto a : allowed) {
    if (v == a) return true;
  }
  return false;
}

std::string quoted(std::string_view key, std::string_view value) {
  return "\"" + std::string(key) + "\":\"" + std::string(value) + "\",";
}
std::string number(std::string_view key, int64_t value) {
  return "\"" + std::string(key) + "\":" + std::to_string(value) + ",";
}

// The first plugin of the config, in the order of upstream's template.
std::string pluginMembers(const api::Network& n) {
  const auto& s = n.spec;
  bool sriov = n.kind == api::NetworkKind::kSriov;
  std::string out = quoted("type", sriov ? "sriov" : "ib-sriov");
  if (sriov) {
    out += number("vlan", s.vlan);
    if (oneOf(s.spoof_chk, {"on", "off"})) out += quoted("spoofchk", s.spoof_chk);
    if (oneOf(s.trust, {"on", "off"})) out += quoted("trust", s.trust);
    if (s.vlan_qos >= 0 && s.vlan_qos <= 7) out += number("vlanQoS", s.vlan_qos);
    if (!s.vlan_proto.empty()) out += quoted("vlanProto", s.vlan_proto);
    if (s.min_tx_rate && *s.min_tx_rate >= 0) out += number("min_tx_rate", *s.min_tx_rate);
    if (s.max_tx_rate && *s.max_tx_rate >= 0) out += number("max_tx_rate", *s.max_tx_rate);
  }
  if (!s.capabilities.empty()) out += "\"capabilities\":" + s.capabilities + ",";
  if (oneOf(s.link_state, {"enable", "disable", "auto"})) out += quoted("link_state", s.link_state);
  if (sriov && !s.log_level.empty()) out += quoted("logLevel", s.log_level);
  if (sriov && !s.log_file.empty()) out += quoted("logFile", s.log_file);
  out += "\"ipam\":" + (s.ipam.empty() ? std::string("{}") : withoutSpaces(s.ipam));
  return out;
}

}  // namespace

std::string targetNamespace(const api::Network& n) {
  return n.spec.network_namespace.empty() ? n.metadata.namespace_ : n.spec.network_namespace;
}

std::string ownerRef(const api::Network& n) {
  return std::string(n.kindName()) + "." + std::string(kGroup) + "/" + n.metadata.namespace_ + "/" +
         n.metadata.name;
}

std::optional<std::string> namesakeNamespace(std::string_view owner, const api::Network& n) {
  auto ref = parseOwnerRef(owner);
  if (!ref || ref->kind != n.kind || ref->name != n.metadata.name ||
      ref->namespace_ == n.metadata.namespace_) {
    return std::nullopt;
  }
  return ref->namespace_;
}

std::optional<NetworkRef> parseOwnerRef(std::string_view annotation) {
  auto first = annotation.find('/');
  auto last = annotation.rfind('/');
  if (first == std::string_view::npos || first == last) return std::nullopt;
  std::string ns(annotation.substr(first + 1, last - first - 1));
  std::string name(annotation.substr(last + 1));
  if (ns.empty() || name.empty()) return std::nullopt;
  std::string_view kind_group = annotation.substr(0, first);
  auto dot = kind_group.find('.');
  if (dot == std::string_view::npos || kind_group.substr(dot + 1) != kGroup) return std::nullopt;
  std::string_view kind = kind_group.substr(0, dot);
  if (kind == "SriovNetwork") return NetworkRef{api::NetworkKind::kSriov, ns, name};
  if (kind == "SriovIBNetwork") return NetworkRef{api::NetworkKind::kInfiniBand, ns, name};
  return std::nullopt;
}

Result<NetAttachDef> renderNetAttachDef(const api::Network& n, std::string_view resource_prefix) {
  Findings f;
  validateFields(n, f);
  if (!f.ok()) return Status(Code::kInvalidArgument, join(f.errors, "; "));
  std::string config = "{" + quoted("cniVersion", "1.0.0") + quoted("name", n.metadata.name);
  if (n.spec.meta_plugins.empty()) {
    config += pluginMembers(n) + "}";
  } else {
    config += "\"plugins\":[{" + pluginMembers(n) + "}," + n.spec.meta_plugins + "]}";
  }
  if (auto parsed = json::parse(config); !parsed.ok()) {
    return Status(Code::kInvalidArgument,
                  "the CNI configuration rendered from the spec is not valid JSON: " +
                      parsed.status().message());
  }
  NetAttachDef nad;
  nad.name = n.metadata.name;
  nad.namespace_ = targetNamespace(n);
  if (!resource_prefix.empty()) {
    nad.annotations[api::kNadResourceNameAnnotation] =
        std::string(resource_prefix) + "/" + n.spec.resource_name;
  }
  nad.annotations[kOwnerRefAnnotation] = ownerRef(n);
  nad.config = json::indentLikeGo(config, "    ");
  return nad;
}

Findings validateNetwork(const api::Network& n, std::string_view operator_namespace) {
  Findings f;
  if (n.metadata.namespace_ != operator_namespace && !n.spec.network_namespace.empty()) {
    f.errors.push_back(
        ".Spec.NetworkNamespace field can't be specified if the resource is not in the " +
        std::string(operator_namespace) + " namespace");
  }
  validateFields(n, f);
  return f;
}

}  // namespace sriovdra::policy
