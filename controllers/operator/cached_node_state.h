#pragma once
// A SriovNodeState as the operator caches it, one per node of the cluster: small, and flat in the
// node's VF count (10,000 nodes x 256 VFs are 2.5 million VFs). What it keeps of the object:
//   * metadata, and of the status what the agent says of its sync (syncStatus, lastSyncError,
//     conditions, observedGeneration) in `status`, whose interfaces, GPUs, PCIe tree and
//     alignment are empty here.
//   * `hardware`: the PFs (without their MAC addresses, which no reader uses) and GPUs the agent
//     reported, each PF's VFs as CompactVfs. Interned (base/interner.h): the nodes of a pool
//     report the same hardware and share one copy. report() is the NodeReport of it;
//     discovered() the status as the render reads it.
//   * of the spec: `spec_interfaces`, interned too (nodes alike get the same), and instead of
//     spec.devices, most of a state's size, the two answers read of them: spec_digest
//     (specDigest() of the whole spec as received) and devices_by_resource. `spec` holds only
//     its rdmaMode here; specWithoutDevices() gives the interfaces and it back as a spec.
// Pure; immutable once decoded (informer caches share it between threads).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/node_state.h"
#include "host/pci.h"

namespace sriovdra::op {

// The VFs of one PF as the render reads them: vfID, pciAddress and deviceID. Kept as runs of VFs
// whose ids count up by one, whose addresses step evenly (host::PciRun) and that share a device
// id, so a PF's VFs take one run however many there are. A VF that breaks the pattern starts a
// run; one whose address is not canonical is kept with its address as it came. Lossless for the
// three fields, in the order given.
class CompactVfs {
 public:
  static CompactVfs of(const std::vector<api::VirtualFunction>& vfs);
  // The VFs with vf_id, pci_address and device_id set (every other field empty).
  std::vector<api::VirtualFunction> expand() const;
  size_t size() const;
  size_t runs() const { return runs_.size(); }
  auto operator<=>(const CompactVfs&) const = default;  // NOLINT(modernize-use-nullptr)

 private:
  struct Run {
    int64_t first_vf_id = 0;
    host::PciRun addresses;              // empty when `literal` is set
    std::optional<std::string> literal;  // one VF whose address is not canonical, as it came
    std::string device_id;
    auto operator<=>(const Run&) const = default;  // NOLINT(modernize-use-nullptr)
  };
  std::vector<Run> runs_;
};

// What a node's agent reports of its hardware, as the operator keeps it.
struct ReportedHardware {
  std::vector<api::InterfaceExt> pfs;  // without `mac` and `vfs`
  std::vector<CompactVfs> vfs;         // of pfs[i]
  std::vector<api::Gpu> gpus;
  auto operator<=>(const ReportedHardware&) const = default;  // NOLINT(modernize-use-nullptr)
};

struct CachedNodeState : api::SriovNodeState {
  std::shared_ptr<const ReportedHardware> hardware;                    // never null once decoded
  std::shared_ptr<const std::vector<api::Interface>> spec_interfaces;  // never null once decoded
  std::string spec_digest;
  std::map<std::string, int64_t> devices_by_resource;  // "" = devices without a resourceName

  api::NodeReport report() const { return {metadata.name, hardware->pfs, hardware->gpus}; }
  // The status the agent reported as the render reads it: its sync fields, the PFs (without MAC
  // addresses) with each VF's vfID, pciAddress and deviceID, and the GPUs.
  api::SriovNodeStateStatus discovered() const;
  // The spec's interfaces (its devices are not kept).
  api::SriovNodeStateSpec specWithoutDevices() const {
    return {*spec_interfaces, {}, spec.rdma_mode};
  }
  // Whether the agent reported the same in both, as far as the operator keeps it.
  bool sameStatus(const CachedNodeState& other) const {
    return status == other.status && *hardware == *other.hardware;
  }
  static Result<CachedNodeState> decode(const json::Value& v);
};

// The report() of each state (kept alive by `states`).
std::vector<api::NodeReport> reportsOf(
    const std::vector<std::shared_ptr<const CachedNodeState>>& states);

// The spec as JSON: what the operator writes as a SriovNodeState's spec, and what specDigest
// hashes.
std::string encodeSpec(const api::SriovNodeStateSpec& spec);
// SHA-256 of the spec's encoding (encodeSpec): equal digests, equal writes.
std::string specDigest(std::string_view encoded_spec);
std::map<std::string, int64_t> devicesByResource(const std::vector<api::Device>& devices);

}  // namespace sriovdra::op
