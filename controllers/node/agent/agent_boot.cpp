// The agent's steps for what waits for the next boot (agent.h): the RDMA namespace mode
// (host/rdma_mode.h) and the reboot the operator grants (host/reboot.h). Mellanox firmware,
// the other reason to reboot, is configureFirmware's, beside the passes in agent.cpp.
#include <cerrno>
#include <filesystem>

#include "api/names.h"
#include "base/files.h"
#include "base/log.h"
#include "base/strings.h"
#include "host/rdma_mode.h"
#include "host/reboot.h"
#include "node/agent/agent.h"

namespace sriovdra::agent {

void Agent::configureRdmaMode(const api::SriovNodeStateSpec& spec,
                              api::SriovNodeStateStatus& status, host::SyncOutcome& outcome) {
  host::RdmaModeInput in{.desired = spec.rdma_mode};
  // Without ib_core (its class directory) there is no mode: it reads the option when it loads.
  // Not asked over netlink then: opening a NETLINK_RDMA socket would have the kernel load it.
  if (rdma_ && sysfs_->exists("sys/class/infiniband")) {
    auto mode = rdma_->netnsMode();
    if (mode.ok()) {
      in.current = *mode;
    } else if (mode.status().sysErrno() != EPROTONOSUPPORT) {  // EPROTONOSUPPORT: unloaded since
      std::string why =
          "reading the RDMA subsystem's network namespace mode: " + mode.status().message();
      status.rdma_mode.clear();
      if (spec.rdma_mode.empty()) {
        SDRA_VLOG(1) << why;  // nothing asked of it: not the sync's failure
      } else {
        outcome.errors.push_back(why);
      }
      return;
    }
  }
  status.rdma_mode = in.current;
  const std::string dir = sysfs_->root() + "/" + std::string(host::kModprobeDir);
  const std::string path = dir + "/" + std::string(host::kModprobeName);
  if (auto text = readFile(path, 1u << 16); text.ok()) in.file = *text;
  if (!spec.rdma_mode.empty()) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      std::string name = e.path().filename().string();
      if (name == host::kModprobeName || !name.ends_with(".conf")) continue;
      if (auto text = readFile(e.path().string(), 1u << 16); text.ok()) {
        in.others.emplace_back(name, *text);
      }
    }
    in.cmdline = sysfs_->read(host::kCmdlinePath).valueOr("");
  }
  auto plan = host::planRdmaMode(in);
  Status st;
  if (plan.write) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    st = writeFileAtomic(path, *plan.write, 0644);
    SDRA_LOG_INFO << "RDMA namespace mode " << spec.rdma_mode << " written to " << path
                  << (st.isOk() ? "" : ": " + st.message());
  } else if (plan.remove) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (ec) st = Status::fromErrno(ec.value(), "removing " + path);
  }
  if (!st.isOk()) {
    outcome.errors.push_back("setting the RDMA namespace mode for the next boot: " + st.message() +
                             " (the agent needs the host's /etc/modprobe.d)");
    return;
  }
  if (!plan.error.empty()) outcome.errors.push_back(plan.error);
  if (!plan.reboot.empty()) outcome.reboot.push_back(plan.reboot);
}

void Agent::rebootIfGranted(const api::SriovNodeState& state, host::SyncOutcome& outcome) {
  const std::string name = "reboot.json";
  const std::string path = options_.state_dir + "/" + name;
  auto text = readFile(path, 1u << 16);
  std::optional<host::RebootRecord> record;
  if (text.ok()) {
    record = host::decodeRebootRecord(*text);
    if (!record) SDRA_LOG_ERROR << "ignoring a corrupt " << path;
  }
  std::error_code ec;
  if (outcome.reboot.empty()) {
    if (text.ok()) std::filesystem::remove(path, ec);
    return;
  }
  auto boot = sysfs_->read(host::kBootIdPath);
  if (!boot.ok()) {
    outcome.errors.push_back("reading this boot's id (" + std::string(host::kBootIdPath) +
                             " under --sysfs-root), which a granted reboot is recorded against: " +
                             boot.status().message() +
                             "; give the agent the host's /proc or the right --sysfs-root");
    return;
  }
  host::RebootInput in{.awaiting = true,
                       .grant = state.metadata.annotation(api::kRebootGrantAnnotation),
                       .generation = std::to_string(state.metadata.generation),
                       .boot_id = *boot,
                       .record = record,
                       .can_reboot = rebooter_ != nullptr};
  outcome.reboot_step = host::rebootStep(in);
  if (outcome.reboot_step == host::RebootStep::kNotInEffect) {
    outcome.errors.push_back(
        "the node rebooted for generation " + in.grant + " (from boot " + record->boot_id +
        ") and still needs a reboot: " + join(outcome.reboot, "; ") +
        ". Firmware values: power-cycle the node, or check the NIC with mstconfig; the RDMA "
        "mode: an ib_core loaded from the initramfs does not read /etc/modprobe.d (rebuild the "
        "initramfs, or set ib_core.netns_mode on the kernel command line)");
    return;
  }
  if (outcome.reboot_step != host::RebootStep::kReboot) return;
  const std::string why =
      "the firmware or RDMA mode changes (reboot granted for generation " + in.grant + ")";
  Status st = writeStateFile(name, host::encodeRebootRecord({in.grant, *boot}));
  if (st.isOk()) st = rebooter_->reboot();
  if (!st.isOk()) {
    std::filesystem::remove(path, ec);  // the next pass tries again
    outcome.errors.push_back("rebooting the node for " + why + ": " + st.message());
    return;
  }
  SDRA_LOG_INFO << "rebooting the node for " << why;
  events_.normal(kube::ObjectReference::of(api::resources::kSriovNodeStates, state.metadata),
                 "Rebooting", "rebooting the node for " + why);
}

}  // namespace sriovdra::agent
