#pragma once
// What the agent reports in SriovNodeState.status after a pass over the host (pure).
//
// syncedStatus(): the discovered PFs, GPUs and PCIe tree; the alignment of the spec's devices
// that exist; advertisedVfs; syncStatus Failed (with lastSyncError) on errors, InProgress while
// changes wait for VFs in use (or for knowing which are, `in_use_unknown`), else Succeeded
// (observedGeneration = the spec's generation); and the conditions Progressing=False, Degraded,
// Blocked and Ready, each with the generation. While firmware changes wait for a reboot
// (`reboot`), syncStatus is InProgress, Blocked says RebootRequired unless VFs in use block too,
// and the condition RebootRequired is True with the reasons and where the reboot
// stands (reboot.h); once none is needed, a
// RebootRequired condition turns False (it is absent on nodes that never needed one). Conditions
// keep their lastTransitionTime unless their status changes.
//
// syncEvent(): the Event that tells a person what changed between two statuses, if anything
// did: SyncFailed (Warning), InUseUnknown (Warning), Blocked (Warning), RebootRequired (Warning)
// or Synced (Normal).
#include <optional>
#include <string>
#include <vector>

#include "api/node_state.h"
#include "host/discovery.h"
#include "host/plan.h"
#include "host/reboot.h"

namespace sriovdra::host {

struct SyncOutcome {
  std::vector<std::string> errors;
  std::vector<BlockedPf> blocked;
  int64_t advertised = 0;  // devices in the published ResourceSlices
  // Why the VFs in use could not be known ("" = they could): changes that destroy or rebind VFs
  // wait for it.
  std::string in_use_unknown;
  // Why the host must reboot: firmware changes written for the next boot (FirmwarePlan).
  std::vector<std::string> reboot;
  RebootStep reboot_step = RebootStep::kNone;  // where the reboot stands
  bool waiting() const { return !blocked.empty() || !in_use_unknown.empty() || !reboot.empty(); }
};

api::SriovNodeStateStatus syncedStatus(const api::SriovNodeStateStatus& before,
                                       const api::SriovNodeStateSpec& spec, int64_t generation,
                                       const Topology& topology, const SyncOutcome& outcome,
                                       const std::string& now);

struct SyncEvent {
  bool warning = false;
  std::string reason;
  std::string message;
};
std::optional<SyncEvent> syncEvent(const api::SriovNodeStateStatus& before,
                                   const api::SriovNodeStateStatus& after,
                                   const SyncOutcome& outcome, int64_t generation);

// What the status and the Event say while firmware changes wait for a reboot: the reasons, then
// where the reboot stands.
std::string rebootMessage(const SyncOutcome& outcome);

// What the status and the Event say while the VFs in use cannot be known (`why`).
std::string inUseUnknownMessage(const std::string& why);

// "<reason> (held by: a/x, VF 0000:3b:02.1 (...))" for each blocked PF.
std::vector<std::string> blockedMessages(const std::vector<BlockedPf>& blocked);

}  // namespace sriovdra::host
