#include "host/sync_status.h"

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "host/rdma_mode.h"

namespace sriovdra::host {

std::vector<std::string> blockedMessages(const std::vector<BlockedPf>& blocked) {
  std::vector<std::string> out;
  out.reserve(blocked.size());
  for (const auto& b : blocked)
    out.push_back(b.reason + " (held by: " + join(b.claims, ", ") + ")");
  return out;
}

std::string rebootMessage(const SyncOutcome& outcome) {
  std::string out = join(outcome.reboot, "; ") + "; the node must reboot (drained first) for them";
  std::string step = rebootStepMessage(outcome.reboot_step);
  return step.empty() ? out : out + ": " + step;
}

std::string inUseUnknownMessage(const std::string& why) {
  return "cannot tell which VFs pods use (" + why +
         "); changes that destroy or rebind VFs wait until it can";
}

api::SriovNodeStateStatus syncedStatus(const api::SriovNodeStateStatus& before,
                                       const api::SriovNodeStateSpec& spec, int64_t gen,
                                       const Topology& topology, const SyncOutcome& outcome,
                                       const std::string& now) {
  api::SriovNodeStateStatus status = before;
  status.interfaces = topology.pfs;
  status.gpus = topology.gpus;
  status.pcie_roots = topology.roots;
  std::vector<api::Device> existing;
  std::set<std::string> vf_addresses;
  for (const auto& pf : topology.pfs) {
    for (const auto& vf : pf.vfs) vf_addresses.insert(vf.pci_address);
  }
  for (const auto& d : spec.devices) {
    if (vf_addresses.count(d.pci_address) != 0) existing.push_back(d);
  }
  status.alignment = computeAlignment(topology, existing);
  status.advertised_vfs = outcome.advertised;
  status.gpu_count = static_cast<int64_t>(topology.gpus.size());
  status.last_sync_error = join(outcome.errors, "; ");
  if (!outcome.errors.empty()) {
    status.sync_status = "Failed";
  } else if (outcome.waiting()) {
    status.sync_status = "InProgress";
  } else {
    status.sync_status = "Succeeded";
    status.observed_generation = gen;
  }
  std::string waiting = join(blockedMessages(outcome.blocked), "; ");
  std::string blocked_reason = "VfsInUse";
  if (!outcome.in_use_unknown.empty()) {
    waiting = inUseUnknownMessage(outcome.in_use_unknown);
    blocked_reason = "InUseUnknown";
  } else if (waiting.empty() && !outcome.reboot.empty()) {
    waiting = rebootMessage(outcome);
    blocked_reason = "RebootRequired";
  }
  api::setCondition(status.conditions,
                    {"Progressing", "False", "Done", "no change pending", "", gen}, now);
  api::setCondition(
      status.conditions,
      outcome.errors.empty()
          ? api::Condition{"Degraded", "False", "AsExpected", "the host matches the spec", "", gen}
          : api::Condition{"Degraded", "True", "SyncFailed", status.last_sync_error, "", gen},
      now);
  api::setCondition(status.conditions,
                    !outcome.waiting()
                        ? api::Condition{"Blocked", "False", "NothingInUse",
                                         "no VF that must change is in use", "", gen}
                        : api::Condition{"Blocked", "True", blocked_reason, waiting, "", gen},
                    now);
  if (!outcome.reboot.empty()) {
    bool rdma_only = std::all_of(outcome.reboot.begin(), outcome.reboot.end(), isRdmaModeReason);
    api::setCondition(status.conditions,
                      {"RebootRequired", "True", rdma_only ? "RdmaModeChanged" : "FirmwareChanged",
                       rebootMessage(outcome), "", gen},
                      now);
  } else if (api::findCondition(status.conditions, "RebootRequired") != nullptr) {
    api::setCondition(
        status.conditions,
        {"RebootRequired", "False", "FirmwareInEffect",
         "the firmware settings and the RDMA namespace mode the spec needs are in effect", "", gen},
        now);
  }
  bool ok = outcome.errors.empty() && !outcome.waiting();
  api::setCondition(
      status.conditions,
      ok ? api::Condition{"Ready", "True", "Synced",
                          std::to_string(outcome.advertised) + " VF(s) advertised", "", gen}
         : api::Condition{"Ready", "False", outcome.errors.empty() ? "Blocked" : "SyncFailed",
                          outcome.errors.empty() ? waiting : status.last_sync_error, "", gen},
      now);
  return status;
}

std::optional<SyncEvent> syncEvent(const api::SriovNodeStateStatus& before,
                                   const api::SriovNodeStateStatus& after,
                                   const SyncOutcome& outcome, int64_t gen) {
  auto blockedText = [](const api::SriovNodeStateStatus& s) {
    const api::Condition* c = api::findCondition(s.conditions, "Blocked");
    return c != nullptr ? c->message : std::string();
  };
  if (after.sync_status == before.sync_status && after.last_sync_error == before.last_sync_error &&
      blockedText(after) == blockedText(before)) {
    return std::nullopt;
  }
  if (after.sync_status == "Failed") return SyncEvent{true, "SyncFailed", after.last_sync_error};
  if (!outcome.in_use_unknown.empty()) {
    return SyncEvent{true, "InUseUnknown", inUseUnknownMessage(outcome.in_use_unknown)};
  }
  if (!outcome.blocked.empty()) {
    return SyncEvent{true, "Blocked", join(blockedMessages(outcome.blocked), "; ")};
  }
  if (!outcome.reboot.empty()) return SyncEvent{true, "RebootRequired", rebootMessage(outcome)};
  if (after.sync_status == "Succeeded") {
    return SyncEvent{false, "Synced",
                     "the host matches generation " + std::to_string(gen) + "; " +
                         std::to_string(outcome.advertised) + " VF(s) advertised"};
  }
  return std::nullopt;
}

}  // namespace sriovdra::host
