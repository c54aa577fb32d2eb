#include "policy/node_policies.h"

#include <algorithm>

#include "api/selectors.h"
#include "api/vf_range.h"
#include "base/pointers.h"
#include "base/strings.h"
#include "policy/validate.h"

namespace sriovdra::policy {

using api::parsePfName;
using api::parseVfRange;
using api::VfRange;
namespace {

bool sameId(const std::string& a, const std::string& b) {
  auto norm = [](std::string s) {
    s = asciiLower(s);
    if (s.rfind("0x", 0) == 0) s = s.substr(2);
    return s;
  };
  return norm(a) == norm(b);
}

bool nameMatches(const api::InterfaceExt& pf, const std::string& name) {
  return pf.name == name ||
         std::find(pf.alt_names.begin(), pf.alt_names.end(), name) != pf.alt_names.end();
}

// The VF range a policy gives a PF: from its pfNames entry when that selected the PF with a
// range, else all VFs.
VfRange rangeFor(const api::SriovNetworkNodePolicySpec& spec, const api::InterfaceExt& pf) {
  for (const auto& entry : spec.nic_selector.pf_names) {
    auto parsed = parsePfName(entry);
    if (parsed.ok() && nameMatches(pf, parsed->name)) {
      return parsed->range.value_or(VfRange{0, spec.num_vfs - 1});
    }
  }
  return {0, spec.num_vfs - 1};
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

bool nicSelected(const api::NicSelector& s, const api::InterfaceExt& pf) {
  if (s.empty()) return false;
  if (!s.vendor.empty() && !sameId(s.vendor, pf.vendor)) return false;
  if (!s.device_id.empty() && !sameId(s.device_id, pf.device_id)) return false;
  if (!s.root_devices.empty() &&
      std::none_of(s.root_devices.begin(), s.root_devices.end(),
                   [&](const std::string& rd) { return equalsIgnoreCase(rd, pf.pci_address); })) {
    return false;
  }
  if (!s.pf_names.empty()) {
    bool any = false;
    for (const auto& entry : s.pf_names) {
      auto parsed = parsePfName(entry);
      if (parsed.ok() && nameMatches(pf, parsed->name)) any = true;
    }
    if (!any) return false;
  }
  if (!s.net_filter.empty() && s.net_filter != pf.net_filter) return false;
  return true;
}

// Long on purpose: the upstream operator's merge in one place (policies in priority order, each
// applied to the PFs it selects, later ones overriding or conflicting), so it reads beside the
// Go code it reproduces.
// NOLINTNEXTLINE(readability-function-size)
InterfacesResult renderInterfaces(const api::Node& node,
                                  std::vector<const api::SriovNetworkNodePolicy*> policies,
                                  const std::vector<api::InterfaceExt>& discovered) {
  InterfacesResult out;
  // Apply order: lowest priority (99) first, the highest (0) last; ties by name.
  std::sort(policies.begin(), policies.end(), [](const auto* a, const auto* b) {
    auto pa = a->spec.effectivePriority();
    auto pb = b->spec.effectivePriority();
    if (pa != pb) return pa > pb;
    return a->metadata.name < b->metadata.name;
  });
  auto pfs = pointers(discovered);
  std::sort(pfs.begin(), pfs.end(),
            [](const auto* a, const auto* b) { return a->pci_address < b->pci_address; });

  struct Slot {
    api::Interface iface;
    std::map<std::string, int64_t> group_priority;  // policy -> its priority
  };
  std::map<std::string, Slot> slots;  // by pciAddress
  for (const auto* p : policies) {
    if (p->metadata.name == "default") continue;  // reserved upstream name, always ignored
    if (!api::matchesLabelMap(p->spec.node_selector, node.metadata.labels)) continue;
    PolicyRef ref{kNodePolicyKind, p->metadata.name};
    out.matches.emplace(ref, 0);
    const auto& spec = p->spec;
    if (spec.num_vfs <= 0) continue;
    int64_t priority = spec.effectivePriority();
    for (const auto* pf : pfs) {
      if (!nicSelected(spec.nic_selector, *pf)) continue;
      VfRange range = rangeFor(spec, *pf);
      api::VfGroup group{spec.resource_name, spec.effectiveDeviceType(), range.toString(),
                         p->metadata.name,   spec.mtu.value_or(0),       effectiveIsRdma(spec),
                         spec.vdpa_type,     spec.need_vhost_net};
      api::Interface result{pf->pci_address,         pf->name,       spec.num_vfs,
                            spec.mtu.value_or(0),    spec.link_type, spec.eswitch_mode,
                            spec.externally_managed, {group}};
      Slot next;
      next.group_priority[p->metadata.name] = priority;
      auto it = slots.find(pf->pci_address);
      if (it != slots.end()) {
        const Slot& old = it->second;
        bool kept = false;
        bool equal_priority = false;
        for (const auto& gr : old.iface.vf_groups) {
          int64_t old_priority = old.group_priority.at(gr.policy_name);
          equal_priority = equal_priority || old_priority == priority;
          auto old_range = parseVfRange(gr.vf_range);
          bool overlap = old_range.ok() && old_range->overlaps(range);
          if (!overlap && gr.resource_name != spec.resource_name) {
            result.vf_groups.push_back(gr);
            next.group_priority[gr.policy_name] = old_priority;
            kept = true;
            continue;
          }
          std::string why;
          if (gr.resource_name == spec.resource_name) {
            why = "policy " + quote(p->metadata.name) + " configures the same resourceName " +
                  quote(spec.resource_name) + " on this PF, and a PF has one VF group per resource";
          } else {
            why = "VF range " + gr.vf_range + " overlaps range " + range.toString() +
                  " of policy " + quote(p->metadata.name);
          }
          if (old_priority == priority) {
            why += "; both have priority " + std::to_string(priority) + " and " +
                   quote(p->metadata.name) + " wins because its name sorts later";
          } else {
            why += "; it has the higher priority (" + std::to_string(priority) + " beats " +
                   std::to_string(old_priority) + ", 0 is highest)";
          }
          out.conflicts.push_back(
              {{kNodePolicyKind, gr.policy_name}, p->metadata.name, api::describePf(*pf), why});
        }
        if (kept || equal_priority) {
          result.mtu = std::max(result.mtu, old.iface.mtu);
          result.num_vfs = std::max(result.num_vfs, old.iface.num_vfs);
        }
      }
      next.iface = std::move(result);
      slots[pf->pci_address] = std::move(next);
    }
  }
  for (auto& [pci, slot] : slots) {
    for (const auto& g : slot.iface.vf_groups) {
      auto r = parseVfRange(g.vf_range);
      if (!r.ok()) continue;
      int64_t configured = std::min(r->last, slot.iface.num_vfs - 1) - r->first + 1;
      out.matches[{kNodePolicyKind, g.policy_name}] += std::max<int64_t>(0, configured);
    }
    out.interfaces.push_back(std::move(slot.iface));
  }
  return out;
}

}  // namespace sriovdra::policy
