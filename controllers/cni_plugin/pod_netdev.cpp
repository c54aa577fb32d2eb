#include "cni_plugin/pod_netdev.h"

#include "cni/go_json.h"
#include "cni_plugin/vf_sysfs.h"

namespace sriovdra::cni_plugin {

Status releaseToHost(
    const host::NetNamespace& pod_ns, const host::NetNamespace& host_ns, const std::string& if_name,
    const std::string& host_name,
    const std::function<Status(const host::Netdevs&, int32_t index)>& before_move) {
  host::Netdevs nd;
  return pod_ns.run([&]() -> Status {
    auto link = nd.link(if_name);
    if (!link.ok()) {
      return fail("failed to get netlink device with name " + if_name + ": " +
                  cni::goQuote(link.status().message()));
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
