#pragma once
// Mellanox (NVIDIA) ConnectX firmware settings: the one seam to a NIC's non-volatile
// configuration, as the SR-IOV network operator changes it. A ConnectX NIC offers only as many
// VFs as its firmware's NUM_OF_VFS (with SRIOV_EN), and the protocol of each port is its
// LINK_TYPE_P1/P2 (ETH or IB; NICs with a fixed protocol have no such setting). Changed values
// are "next boot" values: they take effect when the host reboots (a power cycle for DPUs).
//   query(pci)         `mstconfig -e -d <pci> q`: the current and next-boot values.
//   set(pci, values)   `mstconfig -d <pci> -y set K=V ...`: next-boot values.
// The NIC is addressed through any of its PFs; both ports of a dual-port NIC share SRIOV_EN and
// NUM_OF_VFS (the per-PF VF count), each has its own LINK_TYPE_P<n> (function 0 is P1).
// Errors: Code::kNotFound when mstconfig is not installed, kUnavailable when it does not answer
// in time, kInternal with its message when it fails (no such device, a value the firmware
// refuses). Nothing is run through a shell: the PCI address and values are argv entries.
// Thread-safety: one call at a time per NIC (the agent holds its host lock); implementations
// keep no state between calls.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sriovdra::host {

// The settings the agent reads and changes, as mstconfig names them.
struct MlxSettings {
  bool sriov_en = false;   // SRIOV_EN
  int64_t num_of_vfs = 0;  // NUM_OF_VFS, VFs per PF
  // LINK_TYPE_P1, LINK_TYPE_P2: "ETH", "IB", or what else the firmware says (e.g. "VPI");
  // "" = the NIC has no such setting (its link type is fixed, or it has one port).
  std::string link_type_p1;
  std::string link_type_p2;
  bool operator==(const MlxSettings&) const = default;
};

struct MlxFirmware {
  MlxSettings current;  // in effect since the last boot
  MlxSettings next;     // after the next boot
  bool operator==(const MlxFirmware&) const = default;
};

// Reads `mstconfig -e -d <pci> q` output (pure): the Current and Next Boot columns (of Default,
// Current, Next Boot) of SRIOV_EN, NUM_OF_VFS and LINK_TYPE_P1/P2, shown as "True(1)", "ETH(2)"
// or "8", a line starting with "*" when it differs from the default. Output without NUM_OF_VFS
// and SRIOV_EN, or with a line of theirs that does not read so, is kInvalidArgument quoting it.
Result<MlxFirmware> parseMstconfigQuery(std::string_view output);

// Next-boot values to write, by mstconfig name ("NUM_OF_VFS" -> "16").
using MlxChanges = std::map<std::string, std::string>;
// "LINK_TYPE_P1=ETH NUM_OF_VFS=16": the changes as mstconfig's arguments, space-separated.
std::string describeChanges(const MlxChanges& values);

class Firmware {
 public:
  virtual ~Firmware() = default;
  virtual Result<MlxFirmware> query(std::string_view pci_address) = 0;
  virtual Status set(std::string_view pci_address, const MlxChanges& values) = 0;
};

// The real one: runs `program` (looked up in PATH; Debian's mstflint package installs
// mstconfig), each call bounded by `timeout`.
std::unique_ptr<Firmware> mstconfigFirmware(
    std::string program = "mstconfig",
    std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace sriovdra::host
