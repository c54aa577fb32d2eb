#pragma once
// What a CNI plugin of ours reaches outside itself (internal to controllers/node/cni): the VFs
// and PFs in sysfs, the PFs' side of their VFs over netlink, the RDMA subsystem (ib-sriov's
// rdmaIsolation), its state directory, its time
// limits and where diagnostics go. The netdevs in namespaces are always the running kernel's
// (host/netdev.h); the binaries give the real sysfs and netlink, the tests and cni-simulated the
// simulated kernel's.
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "host/netlink.h"
#include "host/rdma.h"
#include "host/sysfs.h"

namespace sriovdra::cni_plugin {

struct PluginHost {
  host::Sysfs* sysfs = nullptr;      // /sys: the VFs, their PFs and drivers
  host::Netlink* netlink = nullptr;  // the PFs' side of their VFs
  host::Rdma* rdma = nullptr;        // RDMA devices into pods (ib-sriov); nullptr: refused
  std::string state_dir;             // "" = the plugin's own (/var/lib/cni/sriov, .../ib-sriov)
  std::chrono::milliseconds lock_timeout{1000};
  std::chrono::milliseconds ipam_timeout{10000};
  // Diagnostics that are not errors (what a best-effort step could not do).
  std::function<void(std::string_view)> log = [](std::string_view) {};
};

// A plugin's own failure (CNI code 999), in upstream's words.
inline Status fail(const std::string& message) { return Status(Code::kInternal, message); }

}  // namespace sriovdra::cni_plugin
