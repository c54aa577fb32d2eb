#include "dra/network_selection.h"

#include <algorithm>
#include <cctype>

#include "base/ip.h"
#include "base/json.h"
#include "base/names.h"
#include "base/strings.h"
#include "cni/skel.h"

namespace sriovdra::dra {
namespace {

Status invalid(const std::string& message) {
  return Status(Code::kInvalidArgument,
                "annotation " + std::string(kNetworksAnnotation) + ": " + message);
}

// The names of one element, checked as what they name: a NAD, a namespace, an interface.
Status checkNames(const NetworkSelection& n, const std::string& where) {
  if (!isDnsSubdomain(n.name)) {
    return invalid(where + ": network name \"" + printable(n.name) +
                   "\" is not a DNS-1123 subdomain (a NetworkAttachmentDefinition's name)");
  }
  if (!isDnsLabel(n.namespace_)) {
    return invalid(where + ": namespace \"" + printable(n.namespace_) +
                   "\" is not a DNS-1123 label");
  }
  if (!n.interface.empty()) {
    if (auto e = cni::validateInterfaceName(n.interface); e.code != 0) {
      return invalid(where + ": interface \"" + printable(n.interface) + "\": " + e.msg);
    }
    bool plain = std::all_of(n.interface.begin(), n.interface.end(), [](char c) {
      return std::isgraph(static_cast<unsigned char>(c)) != 0;
    });
    if (!plain) {
      return invalid(where + ": interface \"" + printable(n.interface) +
                     "\" has a character interface names cannot have");
    }
    if (n.interface == "eth0" || n.interface == "lo") {
      return invalid(where + ": interface " + n.interface +
                     " is the pod's own (its cluster network or loopback)");
    }
  }
  return Status::ok();
}

// `n` groups of two hex digits separated by ':' (a MAC: 6, an InfiniBand GUID: 8).
bool hexOctets(std::string_view s, size_t n) {
  if (s.size() != 3 * n - 1) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    bool ok = i % 3 == 2 ? s[i] == ':' : std::isxdigit(static_cast<unsigned char>(s[i])) != 0;
    if (!ok) return false;
  }
  return true;
}

// What reaches the plugins as runtimeConfig, written as Multus's documentation writes it.
Status checkValues(const NetworkSelection& n, const std::string& where) {
  if (!n.mac.empty() && !hexOctets(n.mac, 6)) {
    return invalid(where + ": mac \"" + printable(n.mac) +
                   "\" is not a MAC address (six hex bytes separated by ':')");
  }
  if (!n.infiniband_guid.empty() && !hexOctets(n.infiniband_guid, 8)) {
    return invalid(where + ": infiniband-guid \"" + printable(n.infiniband_guid) +
                   "\" is not a GUID (eight hex bytes separated by ':')");
  }
  if (n.ips.size() > kMaxNetworkIps) {
    return invalid(where + ": " + std::to_string(n.ips.size()) + " ips, at most " +
                   std::to_string(kMaxNetworkIps));
  }
  for (const auto& ip : n.ips) {
    if (!parseCidr(ip).ok()) {
      return invalid(where + ": ips: \"" + printable(ip) +
                     "\" is not an address with its prefix length (10.1.0.5/24)");
    }
  }
  return Status::ok();
}

// Multus's text form: [namespace/]name[@interface], each part a DNS-1123 label.
Result<NetworkSelection> parseText(std::string_view item, const std::string& pod_namespace,
                                   int position) {
  std::string where = "element " + std::to_string(position + 1);
  for (char sep : {'/', '@'}) {
    if (std::count(item.begin(), item.end(), sep) > 1) {
      return invalid(where + ": more than one '" + std::string(1, sep) + "' in \"" +
                     printable(item) + "\"");
    }
  }
  NetworkSelection n;
  n.position = position;
  std::string_view rest = item;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    n.namespace_ = trimSpace(rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
  }
  if (auto at = rest.find('@'); at != std::string_view::npos) {
    n.interface = trimSpace(rest.substr(at + 1));
    rest = rest.substr(0, at);
  }
  n.name = trimSpace(rest);
  for (const std::string* part : {&n.namespace_, &n.name, &n.interface}) {
    if (!part->empty() && !isDnsLabel(*part)) {
      return invalid(where + ": \"" + printable(*part) +
                     "\" must consist of lower case alphanumeric characters or '-' and start and "
                     "end with an alphanumeric character");
    }
  }
  if (n.namespace_.empty()) n.namespace_ = pod_namespace;
  SDRA_RETURN_IF_ERROR(checkNames(n, where));
  return n;
}

Result<NetworkSelection> parseObject(const json::Value& v, const std::string& pod_namespace,
                                     int position) {
  std::string where = "element " + std::to_string(position + 1);
  if (!v.IsObject()) return invalid(where + " is not an object");
  NetworkSelection n;
  n.position = position;
  for (const auto& [key, field] :
       {std::pair{"name", &n.name}, std::pair{"namespace", &n.namespace_},
        std::pair{"interface", &n.interface}, std::pair{"mac", &n.mac},
        std::pair{"infiniband-guid", &n.infiniband_guid}}) {
    const json::Value* m = json::member(v, key);
    if (m == nullptr) continue;
    if (!m->IsString()) return invalid(where + ": \"" + key + "\" is not a string");
    *field = m->GetString();
  }
  if (const json::Value* ips = json::member(v, "ips"); ips != nullptr) {
    if (!ips->IsArray()) return invalid(where + ": \"ips\" is not a list");
    for (const auto& ip : ips->GetArray()) {
      if (!ip.IsString()) return invalid(where + ": \"ips\" holds something that is not a string");
      n.ips.emplace_back(ip.GetString());
    }
  }
  if (n.namespace_.empty()) n.namespace_ = pod_namespace;
  SDRA_RETURN_IF_ERROR(checkNames(n, where));
  SDRA_RETURN_IF_ERROR(checkValues(n, where));
  return n;
}

// Every part between commas, empty ones too (Multus fails those).
std::vector<std::string_view> commaParts(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t comma = text.find(',');
    parts.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return parts;
    text.remove_prefix(comma + 1);
  }
}

Status tooMany(size_t n) {
  return invalid("names " + std::to_string(n) + " networks; the agent reads at most " +
                 std::to_string(kMaxNetworks));
}

}  // namespace

Result<std::vector<NetworkSelection>> parseNetworkSelection(std::string_view annotation,
                                                            const std::string& pod_namespace) {
  std::vector<NetworkSelection> out;
  std::string text(trimSpace(annotation));
  if (text.empty()) return out;
  // Multus's test: any of these characters means JSON.
  if (text.find_first_of("[{\"") != std::string::npos) {
    auto doc = json::parse(text);
    if (!doc.ok()) return invalid("not valid JSON: " + doc.status().message());
    if (!doc->IsArray()) return invalid("JSON that is not a list of networks");
    if (doc->Size() > kMaxNetworks) return tooMany(doc->Size());
    int position = 0;
    for (const auto& v : doc->GetArray()) {
      auto n = parseObject(v, pod_namespace, position++);
      if (!n.ok()) return n.status();
      out.push_back(std::move(*n));
    }
    return out;
  }
  auto parts = commaParts(text);
  if (parts.size() > kMaxNetworks) return tooMany(parts.size());
  int position = 0;
  for (const auto& item : parts) {
    auto n = parseText(trimSpace(item), pod_namespace, position++);
    if (!n.ok()) return n.status();
    out.push_back(std::move(*n));
  }
  return out;
}

Result<std::vector<AssignedNetwork>> assignNetworks(
    const std::vector<ResourceVf>& vfs, const std::vector<NetworkSelection>& networks,
    const std::map<std::string, std::string>& nad_resources) {
  std::vector<bool> taken(vfs.size(), false);
  std::vector<AssignedNetwork> out;
  for (const auto& n : networks) {
    auto nad = nad_resources.find(n.namespace_ + "/" + n.name);
    if (nad == nad_resources.end() || nad->second.empty()) continue;
    size_t i = 0;
    while (i < vfs.size() && (taken[i] || vfs[i].resource_name != nad->second)) ++i;
    if (i == vfs.size()) {
      return invalid("network " + n.namespace_ + "/" + n.name + " is for resource " + nad->second +
                     ", but the pod holds no more VFs of it: ask for one more " + nad->second +
                     " in the pod's resources.limits");
    }
    taken[i] = true;
    std::string if_name =
        n.interface.empty() ? "net" + std::to_string(n.position + 1) : n.interface;
    out.push_back({vfs[i], n, std::move(if_name)});
  }
  for (size_t i = 0; i < vfs.size(); ++i) {
    if (taken[i] || !vfs[i].needs_network) continue;
    std::string resource = vfs[i].resource_name.empty() ? "(none)" : vfs[i].resource_name;
    std::string message = "VF " + vfs[i].device + " of resource " + resource;
    message.append(" stays a network interface, but no network the annotation names is for ")
        .append("that resource: name one whose NetworkAttachmentDefinition carries ")
        .append("k8s.v1.cni.cncf.io/resourceName ")
        .append(resource)
        .append(" (a VF left in the host's namespace is not given to a pod)");
    return invalid(message);
  }
  return out;
}

}  // namespace sriovdra::dra
