#include "node/cni/commands.h"

#include "host/netdev.h"
#include "node/cni/ipam.h"

namespace sriovdra::cni_plugin {

std::string delPrefix(const cni::CmdArgs& args) {
  return "DEL of " + args.container_id + "/" + args.if_name + ": ";
}

bool stillTheVf(const PluginHost& h, const cni::CmdArgs& args, const std::string& device,
                const std::string& pf, int64_t index) {
  auto where = VfSysfs(*h.sysfs).locate(device);
  if (where.ok() && where->pf == pf && where->index == index) return true;
  h.log(delPrefix(args) + "VF " + device + " is gone (" +
        (where.ok() ? "it is another PF's or index now" : where.status().message()) +
        "): nothing to reset");
  return false;
}

Status ipamAdd(const PluginHost& h, const cni::CmdArgs& args, const std::string& type,
               const std::string& device, const host::NetNamespace* pod_ns, cni::CniResult& result,
               bool& added) {
  auto ipam = delegateAdd(args, type, h.ipam_timeout);
  if (!ipam.ok()) {
    return fail("failed to set up IPAM plugin type " + cni::goQuote(type) + " from the device " +
                cni::goQuote(device) + ": " + ipam.status().message());
  }
  added = true;
  if (ipam->ips.empty()) return fail("IPAM plugin returned missing IP config");
  ipam->interfaces = result.interfaces;
  for (auto& ip : ipam->ips) ip.interface = 0;
  result = std::move(*ipam);
  if (pod_ns == nullptr) return Status::ok();
  host::Netdevs nd;
  return pod_ns->run([&] { return configureInterface(nd, args.if_name, result); });
}

}  // namespace sriovdra::cni_plugin
