#pragma once
// The RDMA subsystem's network namespace mode a SriovNetworkPoolConfig asks for (its rdmaMode,
// in the node's spec as system.rdmaMode), applied as the SR-IOV network operator applies it:
// ib_core's netns_mode module option (0 exclusive, 1 shared) in kModprobeName, upstream's file,
// which modprobe reads when ib_core loads at boot, and a reboot (reboot.h: asked for, granted by
// the operator after a drain) while the running kernel's mode differs. Linux refuses to change
// the mode at run time while any network namespace but the initial one exists (EBUSY): on a
// node with pods, always. Upstream also puts ib_core.netns_mode on the kernel command line; the
// agent changes no boot loader. modprobe takes the files of /etc/modprobe.d in name order, the
// last netns_mode winning, and the kernel command line over them all: when another file or the
// command line would undo the mode, no reboot is asked for (it would drain the node for
// nothing) and the sync fails naming it. An initramfs that loads ib_core without the file still
// defeats it: the granted reboot does not take and the sync fails saying why (reboot.h).
// Pure: the agent reads the mode (rdma.h netnsMode), the directory and /proc/cmdline, and does
// what the plan says.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sriovdra::host {

// Under --sysfs-root: the agent's container mounts the host's /etc/modprobe.d there.
inline constexpr std::string_view kModprobeDir = "etc/modprobe.d";
inline constexpr std::string_view kModprobeName = "sriov_network_operator_modules_config.conf";
inline constexpr std::string_view kCmdlinePath = "proc/cmdline";

struct RdmaModeInput {
  std::string desired;              // "shared", "exclusive" or "" (no mode asked)
  std::string current;              // the running kernel's; "" = no RDMA subsystem loaded
  std::optional<std::string> file;  // kModprobeName's content, nullopt when absent
  // The other *.conf files of the directory, by name, and the kernel command line.
  std::vector<std::pair<std::string, std::string>> others;
  std::string cmdline;
};

struct RdmaModePlan {
  std::optional<std::string> write;  // the content kModprobeName is to have
  bool remove = false;               // no mode asked: the file an operator wrote goes
  std::string reboot;                // why the node must reboot ("" = it need not)
  std::string error;                 // what would undo the mode at the next boot
};

// The file's content for `mode` ("shared" or "exclusive"); its first line says it is ours.
std::string modprobeContent(std::string_view mode);
// Written when the content differs (also while the kernel already runs in the mode, so the next
// boot keeps it); removed, with no mode asked, only when its first line says an SR-IOV operator
// wrote it (ours, or the SR-IOV network operator's), never someone else's; a reboot while the
// kernel's mode differs and an RDMA subsystem is loaded (without one, ib_core reads the option
// when it loads), unless another file or the command line would set another mode at boot.
RdmaModePlan planRdmaMode(const RdmaModeInput& in);
// What sets ib_core's netns_mode when it loads at boot, as modprobe reads it: the last
// netns_mode of an "options ib_core ..." line of the *.conf `files` (name, content) in name
// order, then ib_core.netns_mode= on the kernel command line over them; the value ("0" or "1")
// and who sets it (the file's path, or "the kernel command line"); nullopt: nothing does.
std::optional<std::pair<std::string, std::string>> netnsModeAtBoot(
    std::vector<std::pair<std::string, std::string>> files, std::string_view cmdline);
// True for a reboot reason planRdmaMode gave (the RebootRequired condition's reason follows it).
bool isRdmaModeReason(std::string_view reason);

}  // namespace sriovdra::host
