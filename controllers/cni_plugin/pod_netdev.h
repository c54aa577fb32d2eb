#pragma once
// What both SR-IOV CNI plugins do to give a VF's netdev back (upstream's ReleaseVF, with its
// messages; internal to controllers/cni_plugin): inside the pod's namespace the interface
// `if_name` down, renamed `host_name`, `before_move` (the sriov plugin restores the MAC and MTU
// there), then moved into the host's namespace.
#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "host/netdev.h"
#include "host/netns.h"

namespace sriovdra::cni_plugin {

Status releaseToHost(
    const host::NetNamespace& pod_ns, const host::NetNamespace& host_ns, const std::string& if_name,
    const std::string& host_name,
    const std::function<Status(const host::Netdevs&, int32_t index)>& before_move = {});

}  // namespace sriovdra::cni_plugin
