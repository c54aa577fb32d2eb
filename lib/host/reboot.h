#pragma once
// Rebooting the host for firmware changes (firmware.h) or the RDMA namespace mode
// (rdma_mode.h), never without the operator's grant.
//   1. The agent asks: its SriovNodeState's condition RebootRequired is True (sync_status.h).
//   2. The operator takes a rollout slot of the node's pool for it, drains the node (every pod
//      but DaemonSets' and static ones; without drains, it waits until no pod uses the node's
//      VFs) and grants the reboot: api::kRebootGrantAnnotation = the generation it is for.
//   3. The agent reboots through its Rebooter, once per grant: before reboot() it keeps a
//      RebootRecord (the grant and this boot's id) in its state directory, so neither a restart
//      in the same boot nor the next boot reboots again for that grant. What is still not in
//      effect after the granted reboot fails the sync (firmware: a power cycle may be needed;
//      the RDMA mode: an initramfs that loads ib_core without the option).
// Which boot this is: the kernel's boot_id (kBootIdPath, through the Sysfs seam), new on every
// boot.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sriovdra::host {

inline constexpr std::string_view kBootIdPath = "proc/sys/kernel/random/boot_id";

class Rebooter {
 public:
  virtual ~Rebooter() = default;
  // Starts a reboot of the host and returns; the reboot normally stops this process soon after.
  // Thread-safety: called by the agent's reconcile only (one at a time).
  virtual Status reboot() = 0;
};

// Runs `argv` (argv[0] looked up in PATH; no shell), bounded by `timeout`; exit status 0 means
// the reboot was started. Errors: kNotFound when argv[0] is not there, kInternal with what it
// printed when it fails, kUnavailable when it does not finish in time.
std::unique_ptr<Rebooter> commandRebooter(
    std::vector<std::string> argv, std::chrono::milliseconds timeout = std::chrono::seconds(60));

// The reboot the agent started: for which grant, from which boot.
struct RebootRecord {
  std::string grant;
  std::string boot_id;
  bool operator==(const RebootRecord&) const = default;
};
std::string encodeRebootRecord(const RebootRecord& record);
// nullopt for anything but what encodeRebootRecord wrote (a corrupt file).
std::optional<RebootRecord> decodeRebootRecord(std::string_view text);

enum class RebootStep {
  kNone,         // no firmware value waits for a reboot
  kAwaitGrant,   // the operator has not granted a reboot for this generation yet
  kAwaitPerson,  // granted, but this agent has no way to reboot: a person or a tool reboots
  kReboot,       // reboot now
  kRebooting,    // this boot started the granted reboot already
  kNotInEffect,  // the granted reboot happened and the values still wait: a failure
};

struct RebootInput {
  bool awaiting = false;   // firmware values wait for a reboot
  std::string grant;       // the grant annotation's value ("" = none)
  std::string generation;  // the SriovNodeState's generation: what a grant for it says
  std::string boot_id;
  std::optional<RebootRecord> record;
  bool can_reboot = false;  // a Rebooter is configured
};
// What to do (pure).
RebootStep rebootStep(const RebootInput& in);

// What the RebootRequired condition adds for `step`: the step a person waits for.
std::string rebootStepMessage(RebootStep step);

}  // namespace sriovdra::host
