#include "policy/render.h"

#include <algorithm>

#include "base/names.h"
#include "policy/node_policies.h"
#include "policy/resource_policies.h"

namespace sriovdra::policy {

std::string resourcePrefixError(std::string_view prefix) {
  if (prefix.empty() || isDnsSubdomain(prefix)) return "";
  return "the resource prefix must be a DNS subdomain such as openshift.io (or \"\" for none)";
}

RenderResult render(const RenderInput& in) {
  RenderResult out;
  auto interfaces = renderInterfaces(in.node, in.node_policies, in.discovered.interfaces);
  auto devices = renderDevices(in, interfaces.interfaces);
  out.spec.interfaces = std::move(interfaces.interfaces);
  out.spec.devices = std::move(devices.devices);
  out.conflicts = std::move(interfaces.conflicts);
  out.conflicts.insert(out.conflicts.end(), devices.conflicts.begin(), devices.conflicts.end());
  out.warnings = std::move(devices.warnings);
  out.matches = std::move(interfaces.matches);
  out.matches.insert(devices.matches.begin(), devices.matches.end());
  // Deterministic order whatever the input order was.
  std::stable_sort(out.conflicts.begin(), out.conflicts.end(), [](const auto& a, const auto& b) {
    return std::tie(a.loser, a.target, a.winner) < std::tie(b.loser, b.target, b.winner);
  });
  std::stable_sort(out.warnings.begin(), out.warnings.end(), [](const auto& a, const auto& b) {
    return std::tie(a.policy, a.message) < std::tie(b.policy, b.message);
  });
  return out;
}

RenderResult render(const api::Node& node, const Policies& valid,
                    const api::SriovNodeStateStatus& discovered, const RenderOptions& options) {
  return render({node, valid.node_policies, valid.resource_policies, valid.device_attributes,
                 discovered, options});
}

}  // namespace sriovdra::policy
