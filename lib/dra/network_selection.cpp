#include "dra/network_selection.h"

#include <algorithm>
#include <cctype>

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

std::string trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
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
    n.namespace_ = trimmed(rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
  }
  if (auto at = rest.find('@'); at != std::string_view::npos) {
    n.interface = trimmed(rest.substr(at + 1));
    rest = rest.substr(0, at);
  }
  n.name = trimmed(rest);
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
  return n;
}

}  // namespace

Result<std::vector<NetworkSelection>> parseNetworkSelection(std::string_view annotation,
                                                            const std::string& pod_namespace) {
  std::vector<NetworkSelection> out;
  std::string text = trimmed(annotation);
  if (text.empty()) return out;
  // Multus's test: any of these characters means JSON.
  if (text.find_first_of("[{\"") != std::string::npos) {
    auto doc = json::parse(text);
    if (!doc.ok()) return invalid("not valid JSON: " + doc.status().message());
    if (!doc->IsArray()) return invalid("JSON that is not a list of networks");
    int position = 0;
    for (const auto& v : doc->GetArray()) {
      auto n = parseObject(v, pod_namespace, position++);
      if (!n.ok()) return n.status();
      out.push_back(std::move(*n));
    }
    return out;
  }
  int position = 0;
  for (const auto& item : splitList(text, ',')) {
    auto n = parseText(trimmed(item), pod_namespace, position++);
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
    // <prefix>/<resource>: the VFs' attribute is the resource alone.
    std::string_view resource = nad->second;
    if (auto slash = resource.rfind('/'); slash != std::string_view::npos) {
      resource.remove_prefix(slash + 1);
    }
    size_t i = 0;
    while (i < vfs.size() && (taken[i] || vfs[i].resource_name != resource)) ++i;
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
  return out;
}

}  // namespace sriovdra::dra
