#include "dra/slices.h"

#include <algorithm>
#include <set>

#include "api/names.h"
#include "base/digest.h"
#include "base/json.h"
#include "base/strings.h"

namespace sriovdra::dra {
namespace {

std::string linkTypeName(const std::string& t) {
  if (t == "ETH") return "ethernet";
  if (t == "IB") return "infiniband";
  return "unknown";
}

}  // namespace

api::Attributes discoveryAttributes(const api::InterfaceExt& pf, const api::VirtualFunction& vf) {
  using api::AttributeValue;
  namespace a = api::attr;
  return {
      {std::string(a::kNumaNode), AttributeValue::ofInt(pf.numa_node)},
      {std::string(a::kCniDeviceId), AttributeValue::ofString(vf.pci_address)},
      {std::string(a::kPciBusId), AttributeValue::ofString(vf.pci_address)},
      {std::string(a::kPcieRoot), AttributeValue::ofString(pf.pcie_root)},
      {std::string(a::kEswitchMode),
       AttributeValue::ofString(pf.eswitch_mode.empty() ? "legacy" : pf.eswitch_mode)},
      {std::string(a::kPfName), AttributeValue::ofString(pf.name)},
      {std::string(a::kDeviceId), AttributeValue::ofString(vf.device_id)},
      {std::string(a::kLinkType), AttributeValue::ofString(linkTypeName(pf.link_type))},
      {std::string(a::kPciAddress), AttributeValue::ofString(vf.pci_address)},
      {std::string(a::kPfDeviceId), AttributeValue::ofString(pf.device_id)},
      {std::string(a::kPfPciAddress), AttributeValue::ofString(pf.pci_address)},
      {std::string(a::kRdmaCapable), AttributeValue::ofBool(!vf.rdma_device.empty())},
      {std::string(a::kVendor), AttributeValue::ofString(pf.vendor)},
      {std::string(a::kVfId), AttributeValue::ofInt(vf.vf_id)},
  };
}

std::string sliceName(const std::string& node, size_t index) {
  return node + "-sriovnetwork-" + std::to_string(index);
}

std::string sliceDigest(const api::ResourceSliceSpec& spec) {
  json::Document doc(rapidjson::kObjectType);
  spec.encode(api::Writer(doc, doc.GetAllocator()));
  return sha256Hex(json::dump(doc));
}

namespace {

SliceSummary summarize(const std::string& name, const api::ResourceSliceSpec& spec,
                       std::string digest) {
  SliceSummary out{name, spec.pool.name, spec.pool.generation, {}, std::move(digest)};
  out.devices.reserve(spec.devices.size());
  for (const auto& d : spec.devices) out.devices.push_back(d.name);
  return out;
}

}  // namespace

SliceSummary SliceSummary::of(const std::string& name, const api::ResourceSliceSpec& spec) {
  return summarize(name, spec, sliceDigest(spec));
}

SliceSummary SliceSummary::of(const PublishedSlice& slice) {
  return summarize(slice.name, slice.spec, slice.digest);
}

std::vector<SliceSummary> summaries(const std::vector<PublishedSlice>& slices) {
  std::vector<SliceSummary> out;
  out.reserve(slices.size());
  for (const auto& s : slices) out.push_back(SliceSummary::of(s));
  return out;
}

namespace {

// Step 1: the devices that exist, with their attributes, by name; the others go to
// out.missing (not discovered) or out.refused (attributes the API would refuse).
std::map<std::string, api::SliceDevice> presentDevices(
    const std::vector<api::Device>& devices, const std::vector<api::InterfaceExt>& discovered,
    SliceSet& out) {
  std::map<std::string, std::pair<const api::InterfaceExt*, const api::VirtualFunction*>> vfs;
  for (const auto& pf : discovered) {
    for (const auto& vf : pf.vfs) vfs[vf.pci_address] = {&pf, &vf};
  }
  std::map<std::string, api::SliceDevice> present;
  for (const auto& d : devices) {
    auto it = vfs.find(d.pci_address);
    if (it == vfs.end()) {
      out.missing.push_back(d.name);
      continue;
    }
    api::SliceDevice dev{d.name, discoveryAttributes(*it->second.first, *it->second.second), {}};
    if (d.exclude_topology) dev.attributes.erase(std::string(api::attr::kNumaNode));
    if (d.no_rdma)
      dev.attributes[std::string(api::attr::kRdmaCapable)] = api::AttributeValue::ofBool(false);
    for (const auto& [k, v] : d.attributes) dev.attributes.emplace(k, v);  // built-ins win
    if (auto problems = api::sliceDeviceProblems(dev); !problems.empty()) {
      out.refused.push_back("device " + d.name + ": " + join(problems, "; "));
      continue;
    }
    present.emplace(d.name, std::move(dev));
  }
  return present;
}

// The published slices by index among the first `needed + previous.size()` names.
std::map<size_t, const SliceSummary*> previousByIndex(const std::string& node,
                                                      const std::vector<SliceSummary>& previous,
                                                      size_t needed) {
  std::map<size_t, const SliceSummary*> out;
  for (const auto& p : previous) {
    for (size_t i = 0; i < needed + previous.size(); ++i) {
      if (p.name == sliceName(node, i)) out[i] = &p;
    }
  }
  return out;
}

// Step 2: the split into `needed` slices of at most 128 with stable membership: a device stays
// in its slice while that slice is kept and has room; the others fill the first with room.
std::vector<std::vector<std::string>> members(
    const std::map<std::string, api::SliceDevice>& present,
    const std::map<size_t, const SliceSummary*>& previous, size_t needed) {
  std::map<std::string, size_t> was;  // device -> previous slice index
  for (const auto& [i, p] : previous) {
    for (const auto& d : p->devices) was[d] = i;
  }
  std::vector<std::vector<std::string>> out(needed);
  std::vector<std::string> unplaced;
  for (const auto& [name, dev] : present) {
    auto it = was.find(name);
    if (it != was.end() && it->second < needed &&
        out[it->second].size() < api::kMaxDevicesPerSlice) {
      out[it->second].push_back(name);
    } else {
      unplaced.push_back(name);
    }
  }
  for (const auto& name : unplaced) {
    for (auto& m : out) {
      if (m.size() < api::kMaxDevicesPerSlice) {
        m.push_back(name);
        break;
      }
    }
  }
  return out;
}

// Step 3: which slices differ from what is published (ignoring the generation)? Each is
// compared as if of its old generation; that digest is its final one when the generation stays.
// Once two differ, every slice takes the next generation and gets its digest afresh, so
// comparing stops.
void setGenerations(std::vector<PublishedSlice>& slices,
                    const std::map<size_t, const SliceSummary*>& previous_by_index,
                    size_t previous_count, int64_t generation) {
  const size_t needed = slices.size();
  size_t changed = previous_count > needed ? previous_count - needed : 0;
  for (size_t i = 0; i < needed && changed <= 1; ++i) {
    auto it = previous_by_index.find(i);
    if (it == previous_by_index.end()) {
      ++changed;
      continue;
    }
    PublishedSlice& now = slices[i];
    now.spec.pool.generation = it->second->generation;
    std::string digest = sliceDigest(now.spec);
    if (digest != it->second->digest) ++changed;
    now.spec.pool.generation = generation;
    if (it->second->generation == generation) now.digest = std::move(digest);
  }
  for (auto& s : slices) {
    if (changed > 1) {
      s.spec.pool.generation = generation + 1;
      s.digest.clear();
    }
    if (s.digest.empty()) s.digest = sliceDigest(s.spec);
  }
}

}  // namespace

SliceSet buildSlices(const std::string& node, const std::vector<api::Device>& devices,
                     const std::vector<api::InterfaceExt>& discovered,
                     const std::vector<SliceSummary>& previous) {
  SliceSet out;
  auto present = presentDevices(devices, discovered, out);
  size_t needed = std::max<size_t>(
      1, (present.size() + api::kMaxDevicesPerSlice - 1) / api::kMaxDevicesPerSlice);
  auto previous_by_index = previousByIndex(node, previous, needed);
  auto split = members(present, previous_by_index, needed);
  int64_t generation = 0;
  for (const auto& p : previous) generation = std::max(generation, p.generation);
  for (size_t i = 0; i < needed; ++i) {
    api::ResourceSliceSpec spec;
    spec.driver = std::string(api::kDriverName);
    spec.node_name = node;
    spec.pool = {node, generation, static_cast<int64_t>(needed)};
    std::sort(split[i].begin(), split[i].end());
    spec.devices.reserve(split[i].size());
    for (const auto& name : split[i]) spec.devices.push_back(std::move(present.at(name)));
    out.slices.push_back({sliceName(node, i), std::move(spec)});
  }
  setGenerations(out.slices, previous_by_index, previous.size(), generation);
  return out;
}

}  // namespace sriovdra::dra
