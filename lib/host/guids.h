#pragma once
// The InfiniBand GUID each VF of an InfiniBand PF gets (node and port GUID alike). Pure.
// With a pool, in the SR-IOV network operator's format (its host file
// /etc/sriov-operator/infiniband/guids): a JSON list with one entry per PF, the PF named by
// "pciAddress" or by "pfGuid" (the PF's port GUID, the last 8 bytes of its IPoIB address), its
// GUIDs a list "guids" or a range "rangeStart".."rangeEnd"; VF n takes the n-th. A PF the pool
// does not name, or a VF past its GUIDs, is an error, as upstream has it.
// Without a pool, the GUID is derived from the node name, the PF's PCI address and the VF index
// (SHA-256, then the locally administered bit set and the multicast bit cleared): distinct per
// VF and per node with overwhelming probability, and the same after any restart of the agent, so
// a VF keeps its GUID (and the PKeys a subnet manager bound to it). Upstream draws random GUIDs
// each time it configures VFs instead.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/node_state.h"
#include "base/status.h"

namespace sriovdra::host {

struct GuidPoolEntry {
  std::string pci_address;  // or
  std::string pf_guid;      // "02:..:..", the PF's port GUID
  std::vector<uint64_t> guids;
  uint64_t range_start = 0, range_end = 0;  // when guids is empty
};

// kInvalidArgument naming the entry and field: not a JSON list of objects, an entry with both or
// neither of pciAddress/pfGuid or of guids/range, a GUID that does not parse, rangeEnd <=
// rangeStart.
Result<std::vector<GuidPoolEntry>> parseGuidPool(std::string_view json);

class GuidAssigner {
 public:
  // `pool`: none (derived GUIDs), the entries, or why the pool file could not be used (every
  // GUID is then that error, so the node reports it and no VF gets a wrong GUID).
  GuidAssigner(std::string node, Result<std::optional<std::vector<GuidPoolEntry>>> pool);
  // The GUID of VF `vf` of the PF (its PCI address and, for pfGuid entries, its IPoIB address).
  Result<uint64_t> guidFor(const api::InterfaceExt& pf, int64_t vf) const;

 private:
  std::string node_;
  Result<std::optional<std::vector<GuidPoolEntry>>> pool_;
};

}  // namespace sriovdra::host
