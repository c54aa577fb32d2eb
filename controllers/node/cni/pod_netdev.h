#pragma once
// What both SR-IOV CNI plugins do with a VF's netdev in a pod's namespace (internal to
// controllers/node/cni):
//   nameFreeInPod  ADD checks the pod has no interface of the name before moving the VF in: a
//                  clash found only after the move would leave the VF half-moved, and undoing it
//                  must never touch the pod's own interface.
//   releaseToHost  upstream's ReleaseVF, with its messages: inside the pod's namespace the
//                  interface `if_name` down, renamed `host_name`, `before_move` (the sriov plugin
//                  restores the MAC and MTU there), then moved into the host's namespace. An
//                  interface whose parent device (IFLA_PARENT_DEV_NAME, where the kernel reports
//                  one) is not the VF `pci_address` is left alone: a pod may have renamed the VF
//                  and named another interface so. kNotFound: the pod has no interface of
//                  that name.
#include <cstdint>
#include <functional>
#include <string>

#include "base/status.h"
#include "host/netdev.h"
#include "host/netns.h"

namespace sriovdra::cni_plugin {

Status nameFreeInPod(const host::NetNamespace& pod_ns, const std::string& if_name);

Status releaseToHost(
    const host::NetNamespace& pod_ns, const host::NetNamespace& host_ns, const std::string& if_name,
    const std::string& host_name, const std::string& pci_address,
    const std::function<Status(const host::Netdevs&, int32_t index)>& before_move = {});

}  // namespace sriovdra::cni_plugin
