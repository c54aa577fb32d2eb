#include "policy/resource_policies.h"

#include <algorithm>
#include <set>

#include "api/names.h"
#include "api/resource_limits.h"
#include "api/selectors.h"
#include "base/strings.h"
#include "policy/validate.h"

namespace sriovdra::policy {

namespace {

std::string hexId(const std::string& s) {
  std::string l = asciiLower(s);
  return l.rfind("0x", 0) == 0 ? l.substr(2) : l;
}

std::string linkTypeName(const std::string& t) {
  std::string l = asciiLower(t);
  if (l == "eth" || l == "ethernet") return "ethernet";
  if (l == "ib" || l == "infiniband") return "infiniband";
  return l.empty() ? "" : "unknown";
}

template <typename Fn>
bool anyOf(const std::vector<std::string>& list, Fn fn) {
  return list.empty() || std::any_of(list.begin(), list.end(), fn);
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

struct Candidate {
  const api::InterfaceExt* pf;
  const api::VirtualFunction* vf;
};

}  // namespace

bool filterMatches(const api::ResourceFilter& f, const api::InterfaceExt& pf,
                   const api::VirtualFunction& vf) {
  return anyOf(f.vendors, [&](const auto& v) { return hexId(v) == hexId(pf.vendor); }) &&
         anyOf(f.devices, [&](const auto& d) { return hexId(d) == hexId(vf.device_id); }) &&
         anyOf(f.pci_addresses,
               [&](const auto& a) { return equalsIgnoreCase(a, vf.pci_address); }) &&
         anyOf(f.pf_names,
               [&](const auto& n) {
                 return n == pf.name || std::find(pf.alt_names.begin(), pf.alt_names.end(), n) !=
                                            pf.alt_names.end();
               }) &&
         anyOf(f.pf_pci_addresses,
               [&](const auto& a) { return equalsIgnoreCase(a, pf.pci_address); }) &&
         (f.link_type.empty() || linkTypeName(f.link_type) == linkTypeName(pf.link_type));
}

namespace {

// Where each advertised VF comes from, and its attributes so far (by VF PCI address).
struct Source {
  std::string node_policy;  // VF group that configures it
  const api::SriovResourcePolicy* rp = nullptr;
  const api::ResourcePolicyConfig* config = nullptr;
  const api::ResourceFilter* filter = nullptr;  // the config's first filter that matched
};
struct VfSources {
  std::map<std::string, Source> sources;
  std::map<std::string, api::Attributes> attrs;
  std::set<std::string> exclude_topology;  // VFs of node policies with excludeTopology
  std::set<std::string> no_rdma;           // VFs of node policies whose isRdma is false
};

// 1. VFs in node-policy VF groups get their resourceName (and the Multus name).
void addNodePolicyGroups(const RenderInput& in, const std::vector<api::Interface>& interfaces,
                         const std::vector<Candidate>& candidates, VfSources& vfs) {
  for (const auto& c : candidates) {
    for (const auto& itf : interfaces) {
      if (itf.pci_address != c.pf->pci_address) continue;
      const api::VfGroup* g = itf.groupOf(c.vf->vf_id);
      if (g == nullptr) continue;
      vfs.sources[c.vf->pci_address].node_policy = g->policy_name;
      if (!g->is_rdma) vfs.no_rdma.insert(c.vf->pci_address);
      for (const auto* p : in.node_policies) {
        if (p->metadata.name == g->policy_name && p->spec.exclude_topology) {
          vfs.exclude_topology.insert(c.vf->pci_address);
        }
      }
      auto& a = vfs.attrs[c.vf->pci_address];
      a[std::string(api::attr::kResourceName)] = api::AttributeValue::ofString(g->resource_name);
      if (!in.options.resource_prefix.empty()) {
        a[std::string(api::attr::kCniResourceName)] =
            api::AttributeValue::ofString(in.options.resource_prefix + "/" + g->resource_name);
      }
    }
  }
}

// SriovResourcePolicy.nodeSelector as the SR-IOV DRA driver reads it: no terms, or a term without
// requirements, selects every node (core Kubernetes would select none); otherwise terms are ORed
// as in core.
bool selectsNode(const api::NodeSelector& selector, const api::Node& node) {
  if (selector.terms.empty()) return true;
  for (const auto& t : selector.terms) {
    if (t.match_expressions.empty() && t.match_fields.empty()) return true;
  }
  return api::matchesNodeSelector(selector, node.metadata.name, node.metadata.labels);
}

// 2. Resource policies, by name; the first matching config of the first policy wins a VF, and
// the others report the conflict.
void addResourcePolicies(const RenderInput& in, const std::vector<Candidate>& candidates,
                         VfSources& vfs, DevicesResult& out) {
  auto policies = in.resource_policies;
  std::sort(policies.begin(), policies.end(),
            [](const auto* a, const auto* b) { return a->metadata.name < b->metadata.name; });
  std::vector<const api::SriovResourcePolicy*> applicable;
  for (const auto* p : policies) {
    if (p->node_selector && !selectsNode(*p->node_selector, in.node)) continue;
    applicable.push_back(p);
    out.matches.emplace(PolicyRef{kResourcePolicyKind, p->metadata.name}, 0);
  }
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> lost;  // (loser, winner)
  for (const auto& c : candidates) {
    for (const auto* p : applicable) {
      const api::ResourcePolicyConfig* hit = nullptr;
      const api::ResourceFilter* by = nullptr;
      for (const auto& config : p->configs) {
        auto f = std::find_if(config.resource_filters.begin(), config.resource_filters.end(),
                              [&](const auto& f) { return filterMatches(f, *c.pf, *c.vf); });
        if (config.resource_filters.empty() || f != config.resource_filters.end()) {
          hit = &config;
          by = f != config.resource_filters.end() ? &*f : nullptr;
          break;
        }
      }
      if (hit == nullptr) continue;
      Source& s = vfs.sources[c.vf->pci_address];
      if (s.rp == nullptr) {
        s.rp = p;
        s.config = hit;
        s.filter = by;
        out.matches[{kResourcePolicyKind, p->metadata.name}]++;
      } else {
        lost[{p->metadata.name, s.rp->metadata.name}].push_back(c.vf->pci_address);
      }
    }
  }
  for (const auto& [who, vfs] : lost) {
    std::string list;
    for (size_t i = 0; i < vfs.size() && i < 3; ++i) list += (i ? ", " : "") + vfs[i];
    if (vfs.size() > 3) list += ", ...";
    out.conflicts.push_back(
        {{kResourcePolicyKind, who.first},
         who.second,
         std::to_string(vfs.size()) + " VF(s): " + list,
         "these VFs are advertised by policy " + quote(who.second) +
             ", which comes first in name order (the first matching policy wins a VF)"});
  }
}

// The Multus name of a VF whose DeviceAttributes did not set one: <prefix>/<its resourceName>,
// the k8s.v1.cni.cncf.io/resourceName of the NADs rendered for SriovNetworks of that resource.
// One they set that differs is kept and pointed out, once per resource policy and value.
void deriveCniResourceName(const RenderInput& in, const std::string& pci, const Source& s,
                           bool set_by_attributes, api::Attributes& a,
                           std::set<std::pair<std::string, std::string>>& reported,
                           DevicesResult& out) {
  auto resource = a.find(std::string(api::attr::kResourceName));
  if (in.options.resource_prefix.empty() || resource == a.end() ||
      resource->second.type != api::AttributeValue::Type::kString)
    return;
  std::string nads = in.options.resource_prefix + "/" + resource->second.string_value;
  auto& cni = a[std::string(api::attr::kCniResourceName)];
  if (!set_by_attributes) {
    cni = api::AttributeValue::ofString(nads);
    return;
  }
  if (cni == api::AttributeValue::ofString(nads) ||
      !reported.insert({s.rp->metadata.name, cni.string_value}).second)
    return;
  out.warnings.push_back(
      {{kResourcePolicyKind, s.rp->metadata.name},
       "VF " + pci + ": " + std::string(api::attr::kCniResourceName) + " " + quote(cni.toString()) +
           " from DeviceAttributes differs from " + quote(nads) +
           ", the resourceName the NetworkAttachmentDefinitions of SriovNetworks with "
           "resourceName " +
           quote(resource->second.string_value) +
           " carry (--resource-prefix): Multus matches the two, so in multus mode those "
           "networks find no VF here; remove the attribute or make it " +
           quote(nads)});
}

// 3. DeviceAttributes selected by the winning config, merged in name order; built-in names are
// refused with a warning, a resourceName that differs from the VF group's is pointed out, and the
// Multus name follows the resourceName (deriveCniResourceName).
void mergeDeviceAttributes(const RenderInput& in, VfSources& vfs, DevicesResult& out) {
  auto das = in.device_attributes;
  std::sort(das.begin(), das.end(),
            [](const auto* a, const auto* b) { return a->metadata.name < b->metadata.name; });
  std::set<std::pair<std::string, std::string>> reported;      // (DA, key) reserved warnings
  std::set<std::pair<std::string, std::string>> cni_reported;  // (resource policy, value)
  for (auto& [pci, s] : vfs.sources) {
    if (s.rp == nullptr || !s.config->device_attributes_selector) continue;
    auto& a = vfs.attrs[pci];
    std::string from_node_policy;
    if (auto it = a.find(std::string(api::attr::kResourceName)); it != a.end()) {
      from_node_policy = it->second.string_value;
    }
    bool cni_set = false;
    for (const auto* da : das) {
      if (!api::matchesLabelSelector(*s.config->device_attributes_selector, da->metadata.labels))
        continue;
      out.matches[{kDeviceAttributesKind, da->metadata.name}]++;
      for (const auto& [key, value] : da->attributes) {
        std::string name = qualifiedAttributeName(key);
        if (api::attr::isReserved(name)) {
          if (reported.insert({da->metadata.name, name}).second) {
            out.warnings.push_back({{kDeviceAttributesKind, da->metadata.name},
                                    "attribute " + quote(name) +
                                        " is a built-in discovery attribute and was not applied; "
                                        "remove it"});
          }
          continue;
        }
        cni_set = cni_set || name == api::attr::kCniResourceName;
        a[name] = value;
      }
    }
    if (!s.node_policy.empty()) {
      auto it = a.find(std::string(api::attr::kResourceName));
      if (it != a.end() && it->second.string_value != from_node_policy) {
        out.warnings.push_back({{kResourcePolicyKind, s.rp->metadata.name},
                                "VF " + pci + ": resourceName " + quote(it->second.toString()) +
                                    " from DeviceAttributes overrides " + quote(from_node_policy) +
                                    " of SriovNetworkNodePolicy " + quote(s.node_policy)});
      }
    }
    deriveCniResourceName(in, pci, s, cni_set, a, cni_reported, out);
  }
}

// 4. The advertised devices, each within the attribute budget of a ResourceSlice device.
// Without advertise_node_policy_vfs only VFs a SriovResourcePolicy selects are advertised.
void emitDevices(const RenderOptions& options, const std::vector<Candidate>& candidates,
                 VfSources& vfs, DevicesResult& out) {
  for (const auto& c : candidates) {
    auto it = vfs.sources.find(c.vf->pci_address);
    if (it == vfs.sources.end()) continue;
    if (it->second.rp == nullptr && !options.advertise_node_policy_vfs) continue;
    api::Device d{api::deviceName(c.vf->pci_address),
                  c.vf->pci_address,
                  std::move(vfs.attrs[c.vf->pci_address]),  // each VF is emitted once
                  vfs.exclude_topology.count(c.vf->pci_address) > 0,
                  it->second.filter ? it->second.filter->drivers : std::vector<std::string>{},
                  vfs.no_rdma.count(c.vf->pci_address) > 0};
    size_t budget = api::kMaxAttributesAndCapacitiesPerDevice - api::attr::kReserved.size();
    while (d.attributes.size() > budget) {
      auto last = std::prev(d.attributes.end());
      PolicyRef who = it->second.rp ? PolicyRef{kResourcePolicyKind, it->second.rp->metadata.name}
                                    : PolicyRef{kNodePolicyKind, it->second.node_policy};
      out.warnings.push_back({who, "VF " + c.vf->pci_address + ": attribute " + quote(last->first) +
                                       " dropped: a device carries at most 32 attributes, 14 of "
                                       "them built in"});
      d.attributes.erase(last);
    }
    out.devices.push_back(std::move(d));
  }
}

}  // namespace

DevicesResult renderDevices(const RenderInput& in, const std::vector<api::Interface>& interfaces) {
  DevicesResult out;
  std::vector<Candidate> candidates;
  for (const auto& pf : in.discovered.interfaces) {
    for (const auto& vf : pf.vfs) candidates.push_back({&pf, &vf});
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.vf->pci_address < b.vf->pci_address; });
  VfSources vfs;
  addNodePolicyGroups(in, interfaces, candidates, vfs);
  addResourcePolicies(in, candidates, vfs, out);
  mergeDeviceAttributes(in, vfs, out);
  emitDevices(in.options, candidates, vfs, out);
  std::sort(out.devices.begin(), out.devices.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace sriovdra::policy
