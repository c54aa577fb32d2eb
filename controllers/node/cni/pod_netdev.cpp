#include "node/cni/pod_netdev.h"

#include "cni/go_json.h"
#include "node/cni/plugin_host.h"

namespace sriovdra::cni_plugin {

Status nameFreeInPod(const host::NetNamespace& pod_ns, const std::string& if_name) {
  bool taken = false;
  Status st = pod_ns.run([&] {
    taken = host::Netdevs().link(if_name).ok();
    return Status::ok();
  });
  if (!st.isOk()) return fail("failed to look into the pod's network namespace: " + st.message());
  if (taken) {
    return fail("the pod already has an interface named " + if_name +
                ": choose another ifName for the VF");
  }
  return Status::ok();
}

Status releaseToHost(
    const host::NetNamespace& pod_ns, const host::NetNamespace& host_ns, const std::string& if_name,
    const std::string& host_name, const std::string& pci_address,
    const std::function<Status(const host::Netdevs&, int32_t index)>& before_move) {
  host::Netdevs nd;
  return pod_ns.run([&]() -> Status {
    auto link = nd.link(if_name);
    if (!link.ok()) {
      return Status(link.status().code() == Code::kNotFound ? Code::kNotFound : Code::kInternal,
                    "failed to get netlink device with name " + if_name + ": " +
                        cni::goQuote(link.status().message()));
    }
    if (!link->parent_device.empty() && link->parent_device != pci_address) {
      return fail("interface " + if_name + " in the pod is not VF " + pci_address +
                  " (it sits on " + link->parent_device + "): left where it is");
    }
    if (Status st = nd.setUp(link->index, false); !st.isOk()) {
      return fail("failed to set link " + if_name + " down: " + cni::goQuote(st.message()));
    }
    if (Status st = nd.rename(link->index, host_name); !st.isOk()) {
      return fail("failed to rename link " + if_name + " to host name " + host_name + ": " +
                  cni::goQuote(st.message()));
    }
    if (before_move) SDRA_RETURN_IF_ERROR(before_move(nd, link->index));
    if (Status st = nd.moveTo(link->index, host_ns); !st.isOk()) {
      return fail("failed to move interface " + host_name + " to init netns: " + st.message());
    }
    return Status::ok();
  });
}

}  // namespace sriovdra::cni_plugin
