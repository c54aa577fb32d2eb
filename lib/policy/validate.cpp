#include "policy/validate.h"

#include <algorithm>
#include <regex>
#include <set>

#include "api/names.h"
#include "api/resource_limits.h"
#include "api/selectors.h"
#include "api/vf_range.h"
#include "base/strings.h"
#include "policy/node_policies.h"

namespace sriovdra::policy {

using api::parsePfName;
namespace {

const std::regex kResourceName("[a-zA-Z0-9]([a-zA-Z0-9_-]*[a-zA-Z0-9])?");
const std::regex kHexId("[0-9a-fA-F]{4}");
const std::regex kPciAddress("[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]");

std::string quote(const std::string& s) { return "\"" + s + "\""; }

// Whether both policies select some node: one that exists, or any node at all when their
// nodeSelectors are identical or one of them selects every node (so that a conflict is refused
// before the nodes carry the labels). `where` says which, for messages (" on node n1").
// Where two policies can configure the same node: the nodes both select, or, before any node
// carries the labels, every node when their selectors are identical or one is empty.
struct SharedNodes {
  bool possible = false;
  std::string where;                 // for messages: " on node a100-04", ...
  std::set<std::string> node_names;  // empty = any node
};

SharedNodes sharedNodes(const api::SriovNetworkNodePolicy& a, const api::SriovNetworkNodePolicy& b,
                        const std::vector<const api::Node*>& nodes) {
  SharedNodes out;
  for (const api::Node* n : nodes) {
    if (api::matchesLabelMap(a.spec.node_selector, n->metadata.labels) &&
        api::matchesLabelMap(b.spec.node_selector, n->metadata.labels)) {
      out.possible = true;
      out.node_names.insert(n->metadata.name);
    }
  }
  // The message names the first shared node by name, whatever order the caller's cache has.
  if (out.possible) {
    out.where = " on node " + *out.node_names.begin();
    return out;
  }
  if (a.spec.node_selector == b.spec.node_selector) {
    return {true, " on every node they select (their nodeSelectors are identical)", {}};
  }
  if (a.spec.node_selector.empty() || b.spec.node_selector.empty()) {
    return {true, " on every node they both select (an empty nodeSelector selects every node)", {}};
  }
  return out;
}

// The PFs the agents report on the shared nodes (every reported PF when any node may be shared).
std::vector<const api::InterfaceExt*> reportedPfs(const SharedNodes& shared,
                                                  const std::vector<api::NodeReport>& states) {
  std::vector<const api::InterfaceExt*> out;
  for (const auto& st : states) {
    if (!shared.node_names.empty() && shared.node_names.count(std::string(st.node)) == 0) continue;
    for (const auto& pf : st.pfs) out.push_back(&pf);
  }
  return out;
}

// Whether the pfNames a and b name one PF: the same name, or the name and an altName (or two
// altNames) of one PF an agent reports. Returns the explanation for messages ("" when equal).
std::optional<std::string> samePf(const std::string& a, const std::string& b,
                                  const std::vector<const api::InterfaceExt*>& pfs) {
  if (a == b) return std::string();
  for (const auto* pf : pfs) {
    auto names = pf->alt_names;
    names.push_back(pf->name);
    if (std::find(names.begin(), names.end(), a) != names.end() &&
        std::find(names.begin(), names.end(), b) != names.end()) {
      std::string why = " (";
      why.append(a).append(" and ").append(b).append(" are names of one PF, ");
      return why.append(pf->pci_address).append(")");
    }
  }
  return std::nullopt;
}

}  // namespace

void Findings::merge(Findings other) {
  errors.insert(errors.end(), other.errors.begin(), other.errors.end());
  warnings.insert(warnings.end(), other.warnings.begin(), other.warnings.end());
}

bool effectiveIsRdma(const api::SriovNetworkNodePolicySpec& spec) {
  if (spec.is_rdma) return *spec.is_rdma;
  return spec.isInfiniband() && spec.effectiveDeviceType() != "vfio-pci";
}

NodePolicyDefaults nodePolicyDefaults(const api::SriovNetworkNodePolicySpec& spec) {
  NodePolicyDefaults d;
  d.set_priority = !spec.priority.has_value();
  bool rdma = effectiveIsRdma(spec);
  if (!spec.is_rdma.has_value() || (*spec.is_rdma != rdma)) d.set_is_rdma = rdma;
  // Upstream forces isRdma on for InfiniBand netdevice VFs even when it was written false.
  if (spec.isInfiniband() && spec.effectiveDeviceType() != "vfio-pci" && spec.is_rdma == false) {
    d.set_is_rdma = true;
  }
  return d;
}

// Long on purpose: independent checks of one field each, in the order of the CRD's fields.
// NOLINTNEXTLINE(readability-function-size)
Findings validateNodePolicy(const api::SriovNetworkNodePolicy& p) {
  Findings f;
  const auto& s = p.spec;
  auto err = [&](const std::string& m) { f.errors.push_back(m); };
  if (s.resource_name.empty()) {
    err("spec.resourceName is required; it names the resource and its DeviceClass");
  } else if (s.resource_name.size() > 63 || !std::regex_match(s.resource_name, kResourceName)) {
    err("spec.resourceName " + quote(s.resource_name) +
        " must be at most 63 characters of letters, digits, '_' and '-', starting and ending "
        "with a letter or digit");
  }
  const auto& nic = s.nic_selector;
  if (nic.empty()) {
    err("spec.nicSelector selects nothing; set at least one of vendor, deviceID, pfNames, "
        "rootDevices or netFilter");
  }
  if (!nic.net_filter.empty()) {
    err("spec.nicSelector.netFilter (OpenStack virtual NICs) is not supported by "
        "sriov-dra-operator; select the PFs by vendor, deviceID, pfNames or rootDevices");
  }
  if (!nic.vendor.empty() && !std::regex_match(nic.vendor, kHexId)) {
    err("spec.nicSelector.vendor " + quote(nic.vendor) +
        " must be a 4-digit hex PCI vendor id without 0x, e.g. 15b3 or 8086");
  }
  if (!nic.device_id.empty() && !std::regex_match(nic.device_id, kHexId)) {
    err("spec.nicSelector.deviceID " + quote(nic.device_id) +
        " must be the PF's 4-digit hex PCI device id without 0x, e.g. 101b");
  }
  for (const auto& rd : nic.root_devices) {
    if (!std::regex_match(rd, kPciAddress)) {
      err("spec.nicSelector.rootDevices entry " + quote(rd) +
          " must be a PCI address like 0000:0e:00.0");
    }
  }
  for (const auto& entry : nic.pf_names) {
    auto parsed = parsePfName(entry);
    if (!parsed.ok()) {
      err("spec.nicSelector." + parsed.status().message());
      continue;
    }
    if (parsed->range && parsed->range->last >= s.num_vfs) {
      err("spec.nicSelector.pfNames entry " + quote(entry) + ": the range ends at VF " +
          std::to_string(parsed->range->last) + " but numVfs is " + std::to_string(s.num_vfs) +
          "; VFs are numbered 0 to numVfs-1");
    }
  }
  std::string device_type = s.effectiveDeviceType();
  if (device_type != "netdevice" && device_type != "vfio-pci") {
    err("spec.deviceType " + quote(s.device_type) + " must be netdevice or vfio-pci");
  }
  if (device_type == "vfio-pci" && s.is_rdma == true) {
    err("spec.isRdma: 'deviceType: vfio-pci' conflicts with 'isRdma: true' (a VF bound to "
        "vfio-pci has no RDMA device); set isRdma: false or deviceType: netdevice");
  }
  if (!s.link_type.empty() && s.link_type != "eth" && s.link_type != "ETH" && s.link_type != "ib" &&
      s.link_type != "IB") {
    err("spec.linkType " + quote(s.link_type) + " must be eth, ETH, ib or IB");
  }
  if (!s.eswitch_mode.empty() && s.eswitch_mode != "legacy" && s.eswitch_mode != "switchdev") {
    err("spec.eSwitchMode " + quote(s.eswitch_mode) + " must be legacy or switchdev");
  }
  if (s.eswitch_mode == "switchdev" && s.isInfiniband()) {
    err("spec.eSwitchMode switchdev needs an Ethernet link; set linkType: eth or remove it");
  }
  if (!s.vdpa_type.empty()) {
    err("spec.vdpaType (vDPA devices) is not supported by sriov-dra-operator; remove it");
  }
  if (s.has_bridge) {
    err("spec.bridge (OVS hardware-offload bridges) is not supported by sriov-dra-operator; "
        "remove it");
  }
  if (s.num_vfs < 0) err("spec.numVfs must not be negative");
  if (s.num_vfs > kMaxNumVfs) {
    err("spec.numVfs " + std::to_string(s.num_vfs) + " exceeds " + std::to_string(kMaxNumVfs) +
        ", the most a PF can offer (TotalVFs is a 16-bit field)");
  }
  if (s.num_vfs == 0) {
    f.warnings.push_back("spec.numVfs is 0: this policy configures no VFs");
  }
  if (s.priority && (*s.priority < 0 || *s.priority > 99)) {
    err("spec.priority must be between 0 (highest) and 99 (lowest)");
  }
  if (s.mtu && *s.mtu < 1) err("spec.mtu must be at least 1");
  if (p.metadata.name == "default") {
    f.warnings.push_back(
        "a SriovNetworkNodePolicy named \"default\" is ignored (the name is "
        "reserved by the SR-IOV network operator); rename it");
  }
  return f;
}

Findings validateNodePolicyAgainst(const api::SriovNetworkNodePolicy& p,
                                   const std::vector<const api::SriovNetworkNodePolicy*>& others,
                                   const std::vector<const api::Node*>& nodes,
                                   const std::vector<api::NodeReport>& states) {
  Findings f;
  // Conflicts with other policies: the first kMaxConflictsListed are spelled out, the rest
  // counted (10,000 overlapping policies must not make 10,000 messages for each).
  size_t conflicts = 0;
  auto conflict = [&](std::string message) {
    if (++conflicts <= kMaxConflictsListed) f.errors.push_back(std::move(message));
  };
  for (const auto* o : others) {
    if (o->metadata.name == p.metadata.name) continue;
    auto shared = sharedNodes(p, *o, nodes);
    if (!shared.possible) continue;
    const std::string& where = shared.where;
    auto pfs = reportedPfs(shared, states);
    for (const auto& mine : p.spec.nic_selector.pf_names) {
      auto a = parsePfName(mine);
      if (!a.ok()) continue;
      for (const auto& theirs : o->spec.nic_selector.pf_names) {
        auto b = parsePfName(theirs);
        if (!b.ok()) continue;
        auto same = samePf(a->name, b->name, pfs);
        if (!same) continue;
        bool overlap =
            (!a->range && !b->range) || (a->range && b->range && a->range->overlaps(*b->range));
        if (overlap) {
          std::string e = "policy " + quote(p.metadata.name) + ": VF index range in " + mine;
          e.append(" is overlapped with existing policy ").append(quote(o->metadata.name));
          e.append(" (");
          e.append(theirs).append(")").append(where).append(*same);
          e.append("; give them disjoint ranges such as ");
          e.append(a->name).append("#0-3 and ").append(a->name).append("#4-7");
          conflict(std::move(e));
        }
        if (p.spec.externally_managed != o->spec.externally_managed) {
          conflict("policy " + quote(p.metadata.name) + ": PF " + a->name +
                   " is shared with policy " + quote(o->metadata.name) + where + *same +
                   ", which disagrees on externallyManaged; set it the same in "
                   "both");
        }
      }
    }
    for (const auto& rd : p.spec.nic_selector.root_devices) {
      const auto& theirs = o->spec.nic_selector.root_devices;
      if (std::find(theirs.begin(), theirs.end(), rd) != theirs.end()) {
        std::string e = "policy " + quote(p.metadata.name) + ": rootDevices " + rd;
        e.append(" is also selected by policy ").append(quote(o->metadata.name)).append(where);
        e.append(
            "; select each PF by address in one policy only (or use pfNames ranges to share it)");
        conflict(std::move(e));
      }
    }
    if (o->spec.resource_name == p.spec.resource_name &&
        o->spec.exclude_topology != p.spec.exclude_topology) {
      conflict("policy " + quote(p.metadata.name) +
               ": excludeTopology differs from "
               "policy " +
               quote(o->metadata.name) + ", which has the same resourceName " +
               quote(p.spec.resource_name) + "; set it the same in both");
    }
  }
  if (conflicts > kMaxConflictsListed) {
    f.errors.push_back("policy " + quote(p.metadata.name) + ": " +
                       std::to_string(conflicts - kMaxConflictsListed) +
                       " more conflicts with other policies (" + std::to_string(conflicts) +
                       " in all; the first " + std::to_string(kMaxConflictsListed) +
                       " are listed)");
  }
  return f;
}

std::string qualifiedAttributeName(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  return std::string(api::kDriverName) + "/" + name;
}

std::vector<std::string> validateAttributeName(const std::string& name) {
  std::vector<std::string> out = api::qualifiedNameProblems(name);
  auto slash = name.find('/');
  std::string domain = slash == std::string::npos ? "" : name.substr(0, slash);
  if (domain == "kubernetes.io" ||
      (domain.size() > 14 && domain.compare(domain.size() - 14, 14, ".kubernetes.io") == 0)) {
    if (!api::attr::isReserved(name)) {
      out.push_back("attribute " + quote(name) +
                    ": the kubernetes.io domain is reserved for "
                    "Kubernetes' standard attributes; use your own domain");
    }
  }
  return out;
}

std::vector<std::string> validateAttributeValue(const std::string& name,
                                                const api::AttributeValue& v) {
  return api::attributeValueProblems(name, v);
}

namespace {

// What a policy may ask of a PF: its sriov_totalvfs, or for a Mellanox NIC, whose firmware the
// agent raises (with a reboot), upstream's limit.
int64_t maxVfsOf(const api::InterfaceExt& pf) {
  return equalsIgnoreCase(pf.vendor, api::kMellanoxVendor) ? api::kMellanoxMaxVfs : pf.total_vfs;
}

}  // namespace

Findings validateNodePolicyAgainstStates(const api::SriovNetworkNodePolicy& p,
                                         const std::vector<const api::Node*>& nodes,
                                         const std::vector<api::NodeReport>& states) {
  Findings f;
  std::map<std::string_view, const api::NodeReport*> by_node;
  for (const auto& st : states) by_node[st.node] = &st;
  for (const auto* n : nodes) {
    if (!api::matchesLabelMap(p.spec.node_selector, n->metadata.labels)) continue;
    auto st = by_node.find(n->metadata.name);
    if (st == by_node.end()) continue;
    for (const auto& pf : st->second->pfs) {
      if (!nicSelected(p.spec.nic_selector, pf)) continue;
      std::string e = "numVfs(" + std::to_string(p.spec.num_vfs) + ") in CR " + p.metadata.name;
      std::string where = ") interface(" + pf.name + ") node(" + n->metadata.name + "); ";
      if (p.spec.externally_managed && p.spec.num_vfs > pf.num_vfs) {
        e.append(" is higher than the virtual functions allocated for the PF externally value(")
            .append(std::to_string(pf.num_vfs))
            .append(where)
            .append("create the VFs first or lower numVfs");
      } else if (int64_t limit = maxVfsOf(pf); limit > 0 && p.spec.num_vfs > limit) {
        e.append(" exceed the maximum allowed value(")
            .append(std::to_string(limit))
            .append(where)
            .append("lower numVfs or leave this PF out of nicSelector");
      } else {
        e.clear();
      }
      if (!e.empty()) f.errors.push_back(std::move(e));
      if (!p.spec.externally_managed) continue;
      // What an externally managed PF must already have: the operator does not change it.
      if (p.spec.mtu && *p.spec.mtu > pf.mtu) {
        f.errors.push_back("MTU(" + std::to_string(*p.spec.mtu) + ") in CR " + p.metadata.name +
                           " is higher than the MTU for the PF externally value(" +
                           std::to_string(pf.mtu) + where +
                           "raise the PF's MTU on the host first or lower spec.mtu");
      }
      if (!p.spec.link_type.empty() && !pf.link_type.empty() &&
          !equalsIgnoreCase(p.spec.link_type, pf.link_type)) {
        f.errors.push_back("LinkType(" + p.spec.link_type + ") in CR " + p.metadata.name +
                           " is not equal to the LinkType for the PF externally value(" +
                           pf.link_type + where + "set spec.linkType to the PF's or remove it");
      }
    }
  }
  return f;
}

Findings validateNodePolicyInCluster(const api::SriovNetworkNodePolicy& p, const ClusterView& c) {
  Findings f = validateNodePolicy(p);
  f.merge(validateNodePolicyAgainst(p, c.node_policies, c.nodes, c.states));
  f.merge(validateNodePolicyAgainstStates(p, c.nodes, c.states));
  return f;
}

Findings validateResourcePolicy(const api::SriovResourcePolicy& p) {
  Findings f;
  if (p.node_selector) {
    auto problems = api::validateNodeSelector(*p.node_selector, "spec.nodeSelector");
    f.errors.insert(f.errors.end(), problems.begin(), problems.end());
    // Admitted as the SR-IOV DRA driver reads them, but they mean the opposite in core Kubernetes.
    const auto& terms = p.node_selector->terms;
    if (terms.empty()) {
      f.warnings.push_back(
          "spec.nodeSelector.nodeSelectorTerms is empty: it selects every node, as in the SR-IOV "
          "DRA driver (in core Kubernetes it would select none); remove nodeSelector to say so");
    }
    for (size_t t = 0; t < terms.size(); ++t) {
      if (terms[t].match_expressions.empty() && terms[t].match_fields.empty()) {
        f.warnings.push_back("spec.nodeSelector.nodeSelectorTerms[" + std::to_string(t) +
                             "] has no requirements: it selects every node, as in the SR-IOV DRA "
                             "driver (in core Kubernetes it would select none)");
      }
    }
  }
  if (p.configs.empty()) {
    f.warnings.push_back(
        "spec.configs is empty: this policy advertises no VF (use configs: [{}] "
        "to advertise every VF)");
  }
  for (size_t i = 0; i < p.configs.size(); ++i) {
    const auto& c = p.configs[i];
    std::string cp = "spec.configs[" + std::to_string(i) + "]";
    if (c.device_attributes_selector) {
      auto problems = api::validateLabelSelector(*c.device_attributes_selector,
                                                 cp + ".deviceAttributesSelector");
      f.errors.insert(f.errors.end(), problems.begin(), problems.end());
    }
    for (size_t j = 0; j < c.resource_filters.size(); ++j) {
      const auto& rf = c.resource_filters[j];
      std::string fp = cp + ".resourceFilters[" + std::to_string(j) + "]";
      static const std::set<std::string> kLinkTypes = {"", "eth", "ethernet", "ib", "infiniband"};
      if (kLinkTypes.count(rf.link_type) == 0) {
        f.errors.push_back(fp + ".linkType " + quote(rf.link_type) +
                           " must be eth, ethernet, ib or infiniband");
      }
      for (const auto& a : rf.pci_addresses) {
        if (!std::regex_match(a, kPciAddress)) {
          f.errors.push_back(fp + ".pciAddresses entry " + quote(a) +
                             " must be a PCI address like 0000:0e:00.1");
        }
      }
      for (const auto& a : rf.pf_pci_addresses) {
        if (!std::regex_match(a, kPciAddress)) {
          f.errors.push_back(fp + ".pfPciAddresses entry " + quote(a) +
                             " must be a PCI address like 0000:0e:00.0");
        }
      }
      if (rf.drivers.size() > 16) {
        f.errors.push_back(fp + ".drivers has " + std::to_string(rf.drivers.size()) +
                           " entries; list at most 16");
      }
      for (const auto& d : rf.drivers) {
        if (d != "default" && !api::isDriverName(d)) {
          f.errors.push_back(fp + ".drivers entry " + quote(d) +
                             " must be \"default\" or a kernel driver's name (letters, digits, "
                             "'_' and '-', such as vfio-pci)");
        }
      }
    }
  }
  return f;
}

Findings validateDeviceAttributes(const api::DeviceAttributes& d) {
  Findings f;
  size_t budget = api::kMaxAttributesAndCapacitiesPerDevice - api::attr::kReserved.size();
  size_t applied = 0;
  for (const auto& [name, value] : d.attributes) {
    applied += api::attr::isReserved(qualifiedAttributeName(name)) ? 0 : 1;
  }
  if (applied > budget) {
    f.errors.push_back("spec.attributes has " + std::to_string(applied) +
                       " attributes; a device carries at most 32, of which 14 are built in, so "
                       "use at most " +
                       std::to_string(budget));
  }
  for (const auto& [name, value] : d.attributes) {
    if (api::attr::isReserved(qualifiedAttributeName(name))) {
      // Skipped when applied, as the SR-IOV DRA driver skips it.
      f.warnings.push_back("spec.attributes: " + quote(name) +
                           " is a built-in discovery attribute: it is not applied (as in the "
                           "SR-IOV DRA driver); remove it");
      continue;
    }
    for (auto& e : validateAttributeName(name)) f.errors.push_back("spec.attributes: " + e);
    for (auto& e : validateAttributeValue(name, value)) f.errors.push_back("spec.attributes: " + e);
    if (value.isList()) {
      f.warnings.push_back("spec.attributes: " + quote(name) + " is a list (" +
                           std::string(value.typeName()) +
                           "), which needs the DRAListTypeAttributes feature gate (alpha in "
                           "Kubernetes 1.36)");
    }
    if (name.find('/') == std::string::npos) {
      f.warnings.push_back("spec.attributes: " + quote(name) +
                           " has no domain and is published as " +
                           quote(qualifiedAttributeName(name)) + "; write the domain explicitly");
    }
  }
  return f;
}

}  // namespace sriovdra::policy
