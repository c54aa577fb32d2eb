#pragma once
// The RDMA subsystem's network namespace mode a SriovNetworkPoolConfig asks for (its rdmaMode,
// in the node's spec as system.rdmaMode), applied as the SR-IOV network operator applies it:
// ib_core's netns_mode module option (0 exclusive, 1 shared) in kModprobeFile, upstream's file,
// which modprobe reads when ib_core loads at boot, and a reboot (reboot.h: asked for, granted by
// the operator after a drain) while the running kernel's mode differs. Linux refuses to change
// the mode at run time while any network namespace but the initial one exists (EBUSY): on a
// node with pods, always. Upstream also puts ib_core.netns_mode on the kernel command line, for
// an ib_core loaded from the initramfs; the agent changes no boot loader, so on such a node the
// granted reboot does not take and the sync fails saying why (reboot.h kNotInEffect).
// Pure: the agent reads the mode (rdma.h netnsMode) and the file, and does what the plan says.
#include <optional>
#include <string>
#include <string_view>

namespace sriovdra::host {

// Under --sysfs-root: the agent's container mounts the host's /etc/modprobe.d there.
inline constexpr std::string_view kModprobeFile =
    "etc/modprobe.d/sriov_network_operator_modules_config.conf";

struct RdmaModeInput {
  std::string desired;              // "shared", "exclusive" or "" (no mode asked)
  std::string current;              // the running kernel's; "" = no RDMA subsystem loaded
  std::optional<std::string> file;  // kModprobeFile's content, nullopt when absent
};

struct RdmaModePlan {
  std::optional<std::string> write;  // the content kModprobeFile is to have
  bool remove = false;               // no mode asked: the file an operator wrote goes
  std::string reboot;                // why the node must reboot ("" = it need not)
};

// The file's content for `mode` ("shared" or "exclusive").
std::string modprobeContent(std::string_view mode);
// Written when the content differs (also while the kernel already runs in the mode, so the next
// boot keeps it); removed, with no mode asked, only when it is one an SR-IOV operator wrote (its
// comment says so), never someone else's; a reboot while the kernel's mode differs and an RDMA
// subsystem is loaded (without one, ib_core reads the option when it loads).
RdmaModePlan planRdmaMode(const RdmaModeInput& in);
// True for a reboot reason planRdmaMode gave (the RebootRequired condition's reason follows it).
bool isRdmaModeReason(std::string_view reason);

}  // namespace sriovdra::host
