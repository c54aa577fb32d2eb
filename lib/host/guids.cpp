#include "host/guids.h"

#include "api/codec.h"
#include "base/digest.h"
#include "host/netlink.h"

namespace sriovdra::host {
namespace {

Status badEntry(size_t i, const std::string& what) {
  return Status(Code::kInvalidArgument, "IB GUID pool entry " + std::to_string(i) + ": " + what);
}

// The port GUID in an IPoIB address as sysfs and rtnetlink show it: 20 bytes "xx:" apart (4 of
// queue pair number, 8 of subnet prefix, then the 8 of the GUID), or "" for another address.
std::string portGuidOf(const std::string& address) {
  constexpr size_t kIpoibBytes = 20, kGuidStart = 12;
  return address.size() == kIpoibBytes * 3 - 1 ? address.substr(kGuidStart * 3) : "";
}

}  // namespace

Result<std::vector<GuidPoolEntry>> parseGuidPool(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc.ok()) return Status(Code::kInvalidArgument, "IB GUID pool: " + doc.status().message());
  if (!doc->IsArray()) return Status(Code::kInvalidArgument, "IB GUID pool: not a JSON list");
  std::vector<GuidPoolEntry> out;
  for (size_t i = 0; i < doc->Size(); ++i) {
    const json::Value& v = (*doc)[static_cast<rapidjson::SizeType>(i)];
    if (!v.IsObject()) return badEntry(i, "not an object");
    api::Reader r(&v, "");
    GuidPoolEntry e;
    e.pci_address = r.str("pciAddress");
    e.pf_guid = r.str("pfGuid");
    if (e.pci_address.empty() == e.pf_guid.empty()) {
      return badEntry(i, "give either pciAddress or pfGuid");
    }
    if (!e.pf_guid.empty()) {
      auto g = parseGuid(e.pf_guid);
      if (!g.ok()) return badEntry(i, "pfGuid: " + g.status().message());
      e.pf_guid = guidText(*g);
    }
    for (const auto& text : r.strings("guids")) {
      auto g = parseGuid(text);
      if (!g.ok()) return badEntry(i, "guids: " + g.status().message());
      e.guids.push_back(*g);
    }
    std::string start = r.str("rangeStart"), end = r.str("rangeEnd");
    if (!r.status().isOk()) return badEntry(i, r.status().message());
    if (!e.guids.empty() == (!start.empty() || !end.empty())) {
      return badEntry(i, "give either guids or rangeStart and rangeEnd");
    }
    if (e.guids.empty()) {
      if (start.empty() || end.empty()) return badEntry(i, "give both rangeStart and rangeEnd");
      auto s = parseGuid(start), t = parseGuid(end);
      if (!s.ok()) return badEntry(i, "rangeStart: " + s.status().message());
      if (!t.ok()) return badEntry(i, "rangeEnd: " + t.status().message());
      if (*t <= *s) return badEntry(i, "rangeEnd must be greater than rangeStart");
      e.range_start = *s;
      e.range_end = *t;
    }
    out.push_back(std::move(e));
  }
  return out;
}

GuidAssigner::GuidAssigner(std::string node, Result<std::optional<std::vector<GuidPoolEntry>>> pool)
    : node_(std::move(node)), pool_(std::move(pool)) {}

Result<uint64_t> GuidAssigner::guidFor(const api::InterfaceExt& pf, int64_t vf) const {
  if (!pool_.ok()) return pool_.status();
  if (!pool_->has_value()) {
    std::string digest = sha256Hex(node_ + "/" + pf.pci_address + "/" + std::to_string(vf));
    uint64_t guid = std::stoull(digest.substr(0, 16), nullptr, 16);
    guid |= uint64_t{0x02} << 56;     // locally administered
    guid &= ~(uint64_t{0x01} << 56);  // unicast
    return guid;
  }
  std::string pf_guid = portGuidOf(pf.mac);
  for (const auto& e : **pool_) {
    if (e.pci_address != pf.pci_address && (e.pf_guid.empty() || e.pf_guid != pf_guid)) continue;
    auto n = static_cast<uint64_t>(vf);
    if (!e.guids.empty()) {
      if (n < e.guids.size()) return e.guids[n];
    } else if (n <= e.range_end - e.range_start) {
      return e.range_start + n;
    }
    return Status(Code::kInvalidArgument, "the IB GUID pool has no GUID left for VF " +
                                              std::to_string(vf) + " of " + pf.pci_address);
  }
  return Status(Code::kInvalidArgument, "the IB GUID pool has no entry for " + pf.pci_address +
                                            (pf_guid.empty() ? "" : " (PF GUID " + pf_guid + ")"));
}

}  // namespace sriovdra::host
