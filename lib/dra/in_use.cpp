#include "dra/in_use.h"

#include <algorithm>

#include "base/json.h"
#include "host/pci.h"

namespace sriovdra::dra {
namespace {

constexpr std::string_view kVfDeviceEnv = "SRIOVNETWORK_VF_DEVICE_";
constexpr std::string_view kPodAddressesEnv = "SRIOVNETWORK_PCI_ADDRESSES=";

void addHolder(host::PreparedVfs& into, const std::string& vf, const std::string& holder) {
  auto& holders = into[vf];
  if (std::find(holders.begin(), holders.end(), holder) == holders.end()) {
    holders.push_back(holder);
  }
}

// The addresses one environment entry of our CDI specs names.
void addressesOfEnv(std::string_view env, std::vector<std::string>& out) {
  if (env.substr(0, kPodAddressesEnv.size()) == kPodAddressesEnv) {
    std::string_view list = env.substr(kPodAddressesEnv.size());
    while (!list.empty()) {
      auto comma = std::min(list.find(','), list.size());
      if (host::isPciAddress(list.substr(0, comma))) out.emplace_back(list.substr(0, comma));
      list.remove_prefix(std::min(comma + 1, list.size()));
    }
    return;
  }
  if (env.substr(0, kVfDeviceEnv.size()) != kVfDeviceEnv) return;
  auto eq = env.find('=');
  if (eq == std::string_view::npos) return;
  std::string_view value = env.substr(eq + 1);
  if (host::isPciAddress(value)) out.emplace_back(value);
}

}  // namespace

std::string pciAddressOfDevice(std::string_view device) {
  // domain-bus-device-function: the last '-' was the '.', the others were ':'.
  std::string s(device);
  auto last = s.rfind('-');
  if (last == std::string::npos) return "";
  std::replace(s.begin(), s.end(), '-', ':');
  s[last] = '.';
  auto parsed = host::PciAddress::parse(s);
  if (!parsed || parsed->toString() != s) return "";
  return s;
}

host::PreparedVfs allocatedVfs(const std::vector<api::ResourceClaim>& claims,
                               std::string_view driver, std::string_view pool) {
  host::PreparedVfs out;
  for (const auto& c : claims) {
    if (!c.status.allocation || c.status.reserved_for.empty()) continue;
    std::string holder = c.metadata.namespace_ + "/" + c.metadata.name + " (allocated)";
    for (const auto& r : c.status.allocation->results) {
      if (r.driver != driver || r.pool != pool) continue;
      std::string pci = pciAddressOfDevice(r.device);
      if (!pci.empty()) addHolder(out, pci, holder);
    }
  }
  return out;
}

Result<std::vector<std::string>> cdiSpecAddresses(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc.ok()) return Status(Code::kInvalidArgument, doc.status().message());
  const json::Value* devices = json::at(*doc, {"devices"});
  if (!doc->IsObject() || devices == nullptr || !devices->IsArray()) {
    return Status(Code::kInvalidArgument, "not a CDI spec: no devices");
  }
  std::vector<std::string> out;
  for (const auto& d : devices->GetArray()) {
    const json::Value* env = json::at(d, {"containerEdits", "env"});
    if (env == nullptr || !env->IsArray()) continue;
    for (const auto& e : env->GetArray()) {
      if (e.IsString()) addressesOfEnv({e.GetString(), e.GetStringLength()}, out);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void mergeInUse(host::PreparedVfs& into, const host::PreparedVfs& more) {
  for (const auto& [vf, holders] : more) {
    if (into.count(vf) != 0) continue;
    for (const auto& h : holders) addHolder(into, vf, h);
  }
}

}  // namespace sriovdra::dra
