#pragma once
// What the agent must do to the host so that it matches SriovNodeState.spec (pure).
// * VF counts: set sriov_numvfs, writing 0 first when changing a non-zero count.
// * Drivers: every VF of a VF group on the group's driver (vfio-pci, or the default driver for
//   netdevice); VFs outside every group are left as they are.
// * MTU: raise a PF's MTU to the spec (never lower it); set netdevice VF MTUs of a group.
// * PFs this agent configured earlier (the record) and that left the spec are reset to 0 VFs.
// * PFs marked externally managed keep their VF count (an error if it is too low).
// * eSwitchMode (empty = legacy): a PF in another mode gets, in the order the kernel requires,
//   sriov_numvfs 0 (when it has VFs), the mode through devlink, then its VF count. An externally
//   managed PF in another mode is an error. PFs reset on leaving the spec go back to legacy.
// * linkType is not changed here (a firmware setting, planFirmware): a PF that differs from the
//   spec is an error naming the field (never reported as matching).
// * PFs in `awaiting_reboot` (planFirmware) are left as they are: their spec takes effect after
//   the reboot that their firmware needs. They still count as in the spec.
// * InfiniBand VFs of a group (with `guids`): a VF whose port GUID (as the PF's driver reports it)
//   is not the one GuidAssigner gives gets that GUID as node and port GUID, then, on a network
//   driver, is rebound so that its driver reads it. VFs whose driver reports no GUID are left
//   alone; a GUID the assigner cannot give is an error for the PF.
// * Never destroys or rebinds a VF that is prepared for a pod, or that discovery found assigned
//   (its netdev in a pod's network namespace, whoever gave it: the SR-IOV network operator's
//   pods during a takeover): that PF is reported Blocked with the claims and such VFs instead.
//   One exception: a prepared InfiniBand VF on the host without a GUID (made again since it was
//   prepared: a reboot) gets its GUID and rebind, as no pod can use it without one.
//   An assigned VF keeps its driver, GUID, MTU and MAC; once its netdev is back, it is planned
//   as any other.
// * A PF of the spec (not awaiting a reboot) whose netdev is down is brought up, as the SR-IOV
//   network operator does (VFs pass traffic only with their PF up, and some drivers take VF rate
//   limits only then).
// * Each VF of a netdevice group on an Ethernet PF gets its own MAC as its administrative MAC
//   (`vf_admin_macs`: what the PFs report, readVfAdminMacs), as the SR-IOV network operator does:
//   the VF keeps its MAC across driver rebinds, and a DPDK pod's result carries one.
// * A group of vfio-pci VFs on a node without the vfio-pci driver (Topology::pci_drivers, when
//   read) is an error naming the module: the agent loads no kernel modules.
// Drivers of VFs that do not exist yet are planned on the next pass, after the VFs appear.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/node_state.h"
#include "host/discovery.h"
#include "host/firmware.h"
#include "host/guids.h"
#include "host/prepared.h"

namespace sriovdra::host {

struct Action {
  enum class Kind {
    kSetNumVfs,
    kSetMtu,
    kBindDriver,
    kSetEswitchMode,
    kSetVfGuid,
    kSetLinkUp,
    kSetVfMac
  };
  Kind kind;
  std::string pf;  // PF address (for messages and grouping)
  // kSetNumVfs, kSetEswitchMode: PF address; kSetMtu, kSetLinkUp: netdev name; kBindDriver: VF
  // address; kSetVfGuid, kSetVfMac: the PF's netdev name.
  std::string target;
  // The count, the MTU, the driver ("" = the device's default driver), the eSwitch mode, the
  // GUID or the MAC.
  std::string value;
  std::string from;    // kBindDriver: the driver bound now ("" = none)
  int64_t vf_id = -1;  // kSetVfGuid, kSetVfMac: the VF
  std::string describe() const;
  bool operator==(const Action&) const = default;
  // Writing 0 VFs or rebinding a VF: what a pod using the VF would lose it to.
  bool destructive() const;
};

struct BlockedPf {
  std::string pf;
  // namespace/name of the claims holding its VFs, and assigned VFs no claim holds
  // ("VF <address> (assignedHolder)")
  std::vector<std::string> claims;
  std::string reason;
};

struct Plan {
  std::vector<Action> actions;
  std::vector<BlockedPf> blocked;
  std::vector<std::string> errors;
  std::set<std::string> configured;  // PFs the agent configures (the new record)
  bool empty() const { return actions.empty(); }
  bool destructive() const;
};

// How a BlockedPf names a VF that is assigned but held by no claim: what holds it.
std::string assignedHolder(std::string_view assigned);

// `guids`: nullptr leaves VF GUIDs alone.
Plan planHost(const api::SriovNodeStateSpec& spec, const Topology& discovered,
              const std::set<std::string>& record, const PreparedVfs& prepared,
              const GuidAssigner* guids = nullptr,
              const std::set<std::string>& awaiting_reboot = {},
              const std::map<std::string, std::string>& vf_admin_macs = {});

// What a plan left undone says after the agent's last pass: each action, as an error for the
// node's status (a driver bind that did not take names the VF and the driver).
std::vector<std::string> describeUnconverged(const Plan& left);

// Firmware (pure), as the SR-IOV network operator's Mellanox plugin decides it, in two steps.
// firmwareToRead(): the Mellanox NICs (vendor 15b3) whose firmware the spec may need changed: a
// PF of the spec, not externally managed, that asks for more VFs than its sriov_totalvfs or for
// another link type. By NIC (the PCI address without its function), the address of a PF to ask.
// Any other NIC is never queried.
std::map<std::string, std::string> firmwareToRead(const api::SriovNodeStateSpec& spec,
                                                  const Topology& discovered);

struct FirmwarePlan {
  std::map<std::string, MlxChanges> changes;  // next-boot values, by the PF address to write to
  std::set<std::string> awaiting_reboot;      // PFs of the spec that wait for the reboot
  std::vector<std::string> reboot_reasons;    // one per NIC that needs one
  std::vector<std::string> errors;
};
// planFirmware(): for each NIC read (`firmware`, by NIC), with N the largest numVfs its PFs in the
// spec ask for: SRIOV_EN=True when N > 0 and the next boot would have it off, NUM_OF_VFS=N when
// the next boot would offer fewer (never lowered: a NIC keeps what it offers), LINK_TYPE_P<n>
// (function 0 is P1) when a port of the spec has another link type (ETH or IB) and the firmware
// will not give it at the next boot; a NIC without that setting cannot change it (an error, in
// upstream's words). Values the next boot already has are not written again. A reboot is needed
// while the current values do not serve the spec; the NIC's PFs in the spec then await it.
FirmwarePlan planFirmware(const api::SriovNodeStateSpec& spec, const Topology& discovered,
                          const std::map<std::string, MlxFirmware>& firmware);

}  // namespace sriovdra::host
