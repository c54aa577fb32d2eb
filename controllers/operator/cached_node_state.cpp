#include "operator/cached_node_state.h"

#include "api/names.h"
#include "base/digest.h"
#include "base/interner.h"

namespace sriovdra::op {

CompactVfs CompactVfs::of(const std::vector<api::VirtualFunction>& vfs) {
  CompactVfs out;
  for (const auto& vf : vfs) {
    if (!out.runs_.empty()) {
      Run& last = out.runs_.back();
      bool next_id = vf.vf_id == last.first_vf_id + static_cast<int64_t>(last.addresses.size());
      if (next_id && !last.literal && vf.device_id == last.device_id &&
          last.addresses.extend(vf.pci_address)) {
        continue;
      }
    }
    Run run{vf.vf_id, {}, std::nullopt, vf.device_id};
    if (!run.addresses.extend(vf.pci_address)) run.literal = vf.pci_address;
    out.runs_.push_back(std::move(run));
  }
  out.runs_.shrink_to_fit();
  return out;
}

std::vector<api::VirtualFunction> CompactVfs::expand() const {
  std::vector<api::VirtualFunction> out;
  out.reserve(size());
  for (const auto& r : runs_) {
    if (r.literal) {
      out.push_back({.pci_address = *r.literal, .device_id = r.device_id, .vf_id = r.first_vf_id});
      continue;
    }
    for (uint32_t i = 0; i < r.addresses.size(); ++i) {
      out.push_back({.pci_address = r.addresses.at(i),
                     .device_id = r.device_id,
                     .vf_id = r.first_vf_id + static_cast<int64_t>(i)});
    }
  }
  return out;
}

size_t CompactVfs::size() const {
  size_t n = 0;
  for (const auto& r : runs_) n += r.literal ? 1 : r.addresses.size();
  return n;
}

api::SriovNodeStateStatus CachedNodeState::discovered() const {
  api::SriovNodeStateStatus out = status;
  out.interfaces = hardware->pfs;
  for (size_t i = 0; i < out.interfaces.size() && i < hardware->vfs.size(); ++i) {
    out.interfaces[i].vfs = hardware->vfs[i].expand();
  }
  out.gpus = hardware->gpus;
  return out;
}

std::vector<api::NodeReport> reportsOf(
    const std::vector<std::shared_ptr<const CachedNodeState>>& states) {
  std::vector<api::NodeReport> out;
  out.reserve(states.size());
  for (const auto& s : states) out.push_back(s->report());
  return out;
}

std::string encodeSpec(const api::SriovNodeStateSpec& spec) {
  json::Document doc(rapidjson::kObjectType);
  spec.encode(api::Writer(doc, doc.GetAllocator()));
  return json::dump(doc);
}

std::string specDigest(std::string_view encoded_spec) { return sha256Hex(encoded_spec); }

std::map<std::string, int64_t> devicesByResource(const std::vector<api::Device>& devices) {
  std::map<std::string, int64_t> out;
  for (const auto& d : devices) {
    auto it = d.attributes.find(std::string(api::attr::kResourceName));
    out[it == d.attributes.end() ? "" : it->second.toString()]++;
  }
  return out;
}

Result<CachedNodeState> CachedNodeState::decode(const json::Value& v) {
  auto state = api::SriovNodeState::decode(v);
  if (!state.ok()) return state.status();
  api::SriovNodeStateSpec& spec = state->spec;
  api::SriovNodeStateStatus& status = state->status;
  CachedNodeState out;
  out.metadata = std::move(state->metadata);
  out.spec_digest = specDigest(encodeSpec(spec));
  out.devices_by_resource = devicesByResource(spec.devices);
  out.spec_interfaces =
      Interner<std::vector<api::Interface>>::global().intern(std::move(spec.interfaces));
  out.spec.rdma_mode = std::move(spec.rdma_mode);
  ReportedHardware hw;
  hw.vfs.reserve(status.interfaces.size());
  for (auto& pf : status.interfaces) {
    hw.vfs.push_back(CompactVfs::of(pf.vfs));
    std::vector<api::VirtualFunction>().swap(pf.vfs);  // its memory too, not only its VFs
    pf.mac.clear();
  }
  hw.pfs = std::move(status.interfaces);
  hw.gpus = std::move(status.gpus);
  hw.pfs.shrink_to_fit();
  hw.vfs.shrink_to_fit();
  hw.gpus.shrink_to_fit();
  out.hardware = Interner<ReportedHardware>::global().intern(std::move(hw));
  out.status.sync_status = std::move(status.sync_status);
  out.status.last_sync_error = std::move(status.last_sync_error);
  out.status.conditions = std::move(status.conditions);
  out.status.observed_generation = status.observed_generation;
  return out;
}

}  // namespace sriovdra::op
