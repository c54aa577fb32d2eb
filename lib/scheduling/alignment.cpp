#include "scheduling/alignment.h"

#include <algorithm>

#include "api/names.h"
#include "base/interner.h"

namespace sriovdra::scheduling {
namespace {

constexpr std::string_view kNvidiaDriver = "gpu.nvidia.com";
constexpr std::string_view kNvidiaPcieBusId = "gpu.nvidia.com/pcieBusID";

std::string stringOrEmpty(const api::SliceDevice& d, std::string_view driver,
                          std::string_view name) {
  return api::stringAttribute(d, driver, name).value_or("");
}

}  // namespace

std::string_view alignmentName(PairAlignment a) {
  switch (a) {
    case PairAlignment::kSameSwitch:
      return "same switch";
    case PairAlignment::kSameRoot:
      return "same root";
    case PairAlignment::kSameNuma:
      return "same NUMA, different root";
    case PairAlignment::kCrossNuma:
      return "cross NUMA";
    case PairAlignment::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view alignmentLabel(PairAlignment a) {
  switch (a) {
    case PairAlignment::kSameSwitch:
      return "same_switch";
    case PairAlignment::kSameRoot:
      return "same_root";
    case PairAlignment::kSameNuma:
      return "same_numa";
    case PairAlignment::kCrossNuma:
      return "cross_numa";
    case PairAlignment::kUnknown:
      break;
  }
  return "unknown";
}

PairAlignment classify(const DevicePlacement& gpu, const DevicePlacement& vf) {
  if (gpu.pcie_root.empty() || vf.pcie_root.empty()) return PairAlignment::kUnknown;
  if (gpu.node != vf.node) return PairAlignment::kUnknown;
  if (gpu.pcie_root == vf.pcie_root) {
    return !gpu.pcie_switch.empty() && gpu.pcie_switch == vf.pcie_switch
               ? PairAlignment::kSameSwitch
               : PairAlignment::kSameRoot;
  }
  if (gpu.numa < 0 || vf.numa < 0) return PairAlignment::kUnknown;
  return gpu.numa == vf.numa ? PairAlignment::kSameNuma : PairAlignment::kCrossNuma;
}

SlicePlacements SlicePlacements::of(const api::ResourceSlice& slice) {
  SlicePlacements out;
  out.metadata = slice.metadata;
  out.driver = slice.spec.driver;
  out.pool = slice.spec.pool.name;
  out.node = slice.spec.node_name;
  const std::string& driver = slice.spec.driver;
  Devices devices;
  for (const auto& d : slice.spec.devices) {
    PublishedDevice p{d.name, stringOrEmpty(d, driver, api::attr::kPcieRoot), "", "", "", -1};
    if (driver == api::kDriverName) {
      p.pci_address = stringOrEmpty(d, driver, api::attr::kPciAddress);
      p.pf = stringOrEmpty(d, driver, api::attr::kPfPciAddress);
      p.pf_name = stringOrEmpty(d, driver, api::attr::kPfName);
      if (const auto* numa = api::findAttribute(d, driver, api::attr::kNumaNode);
          numa != nullptr && numa->type == api::AttributeValue::Type::kInt) {
        p.numa = numa->int_value;
      }
    } else {
      p.pci_address = stringOrEmpty(d, driver, api::attr::kPciBusId);
      if (p.pci_address.empty()) p.pci_address = stringOrEmpty(d, driver, kNvidiaPcieBusId);
    }
    devices.add(std::move(p));
  }
  devices.locations.shrink_to_fit();
  devices.entries.shrink_to_fit();
  out.devices_ = Interner<Devices>::global().intern(std::move(devices));
  return out;
}

Result<SlicePlacements> SlicePlacements::decode(const json::Value& v) {
  auto slice = api::ResourceSlice::decode(v);
  if (!slice.ok()) return slice.status();
  return of(*slice);
}

void SlicePlacements::Devices::add(PublishedDevice d) {
  Location loc{std::move(d.pcie_root), std::move(d.pf), std::move(d.pf_name), d.numa};
  auto found = std::find(locations.begin(), locations.end(), loc);
  auto index = static_cast<uint32_t>(found - locations.begin());
  if (found == locations.end()) locations.push_back(std::move(loc));
  bool named_by_address = d.name == api::deviceName(d.pci_address);
  if (named_by_address && !entries.empty()) {
    Entry& last = entries.back();
    if (!last.single && last.location == index && last.addresses.extend(d.pci_address)) return;
  }
  Entry e;
  e.location = index;
  if (!named_by_address || !e.addresses.extend(d.pci_address)) {
    e.single = Named{std::move(d.name), std::move(d.pci_address)};
  }
  entries.push_back(std::move(e));
}

PublishedDevice SlicePlacements::Devices::at(const Entry& e, const std::string& name,
                                             const std::string& pci) const {
  const Location& l = locations[e.location];
  return {name, l.pcie_root, pci, l.pf, l.pf_name, l.numa};
}

std::vector<PublishedDevice> SlicePlacements::devices() const {
  std::vector<PublishedDevice> out;
  if (!devices_) return out;
  for (const auto& e : devices_->entries) {
    if (e.single) {
      out.push_back(devices_->at(e, e.single->name, e.single->pci_address));
      continue;
    }
    for (uint32_t i = 0; i < e.addresses.size(); ++i) {
      std::string pci = e.addresses.at(i);
      out.push_back(devices_->at(e, api::deviceName(pci), pci));
    }
  }
  return out;
}

size_t SlicePlacements::runs() const { return devices_ ? devices_->entries.size() : 0; }

std::optional<PublishedDevice> SlicePlacements::device(std::string_view name) const {
  // A run's device names are their addresses with ':' and '.' written as '-'.
  std::string pci(name);
  if (pci.size() == 12 && pci[4] == '-' && pci[7] == '-' && pci[10] == '-') {
    pci[4] = ':';
    pci[7] = ':';
    pci[10] = '.';
  }
  if (!devices_) return std::nullopt;
  for (const auto& e : devices_->entries) {
    if (e.single) {
      if (e.single->name == name) return devices_->at(e, e.single->name, e.single->pci_address);
    } else if (e.addresses.indexOf(pci)) {
      return devices_->at(e, std::string(name), pci);
    }
  }
  return std::nullopt;
}

ClusterTopology::ClusterTopology(const std::vector<const SlicePlacements*>& slices,
                                 const std::vector<api::NodeReport>& states) {
  for (const auto& s : states) states_[s.node] = s;
  for (const auto* slice : slices) pools_[{slice->driver, slice->pool}].push_back(slice);
}

DevicePlacement ClusterTopology::place(const SlicePlacements& slice,
                                       const PublishedDevice& d) const {
  auto state_it = states_.find(slice.node);
  const api::NodeReport* state = state_it == states_.end() ? nullptr : &state_it->second;
  DevicePlacement p;
  p.id = {slice.driver, slice.pool, d.name};
  p.node = slice.node;
  p.pcie_root = d.pcie_root;
  p.pci_address = d.pci_address;
  if (slice.driver == api::kDriverName) {
    p.kind = "vf";
    p.pf = d.pf;
    p.pf_name = d.pf_name;
    p.numa = d.numa;
    for (const auto& pf : state ? state->pfs : std::span<const api::InterfaceExt>{}) {
      if (pf.pci_address != p.pf) continue;
      p.pcie_switch = pf.pcie_switch;
      if (p.numa < 0) p.numa = pf.numa_node;
      if (p.pcie_root.empty()) p.pcie_root = pf.pcie_root;
    }
    return p;
  }
  bool known_gpu = false;
  for (const auto& g : state ? state->gpus : std::span<const api::Gpu>{}) {
    if (g.pci_address != p.pci_address || p.pci_address.empty()) continue;
    known_gpu = true;
    p.pcie_switch = g.pcie_switch;
    p.numa = g.numa_node;
    if (p.pcie_root.empty()) p.pcie_root = g.pcie_root;
  }
  if (known_gpu || slice.driver == kNvidiaDriver) p.kind = "gpu";
  return p;
}

std::optional<DevicePlacement> ClusterTopology::placement(const DeviceId& id) const {
  auto pool = pools_.find({id.driver, id.pool});
  if (pool == pools_.end()) return std::nullopt;
  for (const auto* slice : pool->second) {
    if (auto d = slice->device(id.device)) return place(*slice, *d);
  }
  return std::nullopt;
}

std::map<DeviceId, DevicePlacement> ClusterTopology::devices() const {
  std::map<DeviceId, DevicePlacement> out;
  for (const auto& [pool, slices] : pools_) {
    for (const auto* slice : slices) {
      for (const auto& d : slice->devices()) {
        auto p = place(*slice, d);
        out[p.id] = std::move(p);
      }
    }
  }
  return out;
}

void trimForAlignment(api::ResourceClaim& claim) {
  claim.metadata.labels.clear();
  claim.metadata.annotations.clear();
  claim.metadata.owner_references.clear();
  claim.metadata.finalizers.clear();
  claim.spec = {};
  claim.status.devices.clear();
  if (claim.status.allocation) claim.status.allocation->config.clear();
  std::erase_if(claim.status.reserved_for, [](const auto& r) { return r.resource != "pods"; });
}

std::vector<ClaimAlignment> alignmentReport(const std::vector<const api::ResourceClaim*>& claims,
                                            const ClusterTopology& topology) {
  std::vector<ClaimAlignment> out;
  for (const auto* claim : claims) {
    const api::ResourceClaim& c = *claim;
    if (!c.status.allocation) continue;
    ClaimAlignment a;
    a.namespace_ = c.metadata.namespace_;
    a.name = c.metadata.name;
    a.node = c.status.allocation->nodeName();
    for (const auto& r : c.status.reserved_for) {
      if (r.resource == "pods") a.pod = r.name;
    }
    for (const auto& r : c.status.allocation->results) {
      DeviceId id{r.driver, r.pool, r.device};
      auto p = topology.placement(id);
      if (!p) {
        p = DevicePlacement{};
        p->id = id;
        p->node = a.node;
        p->kind = r.driver == api::kDriverName ? "vf" : (r.driver == kNvidiaDriver ? "gpu" : "");
      }
      if (p->kind == "vf") a.vfs.push_back(*p);
      if (p->kind == "gpu") a.gpus.push_back(*p);
    }
    if (a.vfs.empty()) continue;
    for (const auto& g : a.gpus) {
      std::optional<ClaimAlignment::Pair> best;
      for (const auto& v : a.vfs) {
        PairAlignment al = classify(g, v);
        if (!best || al < best->alignment)
          best = ClaimAlignment::Pair{g.id.device, v.id.device, al};
      }
      a.pairs.push_back(*best);
    }
    std::map<std::string, int> per_pf;
    for (const auto& v : a.vfs) {
      if (!v.pf.empty() && ++per_pf[v.pf] == 2) a.shared_pfs.push_back(v.pf);
    }
    out.push_back(std::move(a));
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return std::tie(x.namespace_, x.name) < std::tie(y.namespace_, y.name);
  });
  return out;
}

std::map<PairAlignment, int64_t> countPairs(const std::vector<ClaimAlignment>& report) {
  std::map<PairAlignment, int64_t> out;
  for (PairAlignment a : kAllAlignments) out[a] = 0;
  for (const auto& c : report) {
    for (const auto& p : c.pairs) ++out[p.alignment];
  }
  return out;
}

}  // namespace sriovdra::scheduling
