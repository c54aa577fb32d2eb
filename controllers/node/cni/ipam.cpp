#include "node/cni/ipam.h"

#include <thread>

#include <linux/if_addr.h>

#include "base/strings.h"
#include "cni/config.h"
#include "cni/exec.h"

namespace sriovdra::cni_plugin {
namespace {

Result<std::string> run(const cni::CmdArgs& args, const std::string& type, const char* command,
                        std::chrono::milliseconds timeout) {
  if (!cni::isPluginType(type)) {
    return Status(Code::kInvalidArgument, "IPAM plugin type \"" + type + "\" is not a plugin name");
  }
  return cni::execPlugin(type, splitList(args.path, ':'),
                         {{"CNI_COMMAND", command},
                          {"CNI_CONTAINERID", args.container_id},
                          {"CNI_NETNS", args.netns},
                          {"CNI_IFNAME", args.if_name},
                          {"CNI_ARGS", args.args},
                          {"CNI_PATH", args.path}},
                         args.stdin_data, timeout);
}

// The sysctl under /proc/sys/net of `if_name`, "<family>/conf/<if_name>/<name>".
std::string confKey(const char* family, const std::string& if_name, const char* name) {
  return std::string(family) + "/conf/" + if_name + "/" + name;
}

}  // namespace

Result<cni::CniResult> delegateAdd(const cni::CmdArgs& args, const std::string& type,
                                   std::chrono::milliseconds timeout) {
  auto out = run(args, type, "ADD", timeout);
  if (!out.ok()) return out.status();
  return cni::CniResult::parse(*out);
}

Status delegateDel(const cni::CmdArgs& args, const std::string& type,
                   std::chrono::milliseconds timeout) {
  auto out = run(args, type, "DEL", timeout);
  return out.ok() ? Status::ok() : out.status();
}

Status configureInterface(const host::Netdevs& netdevs, const std::string& if_name,
                          const cni::CniResult& result) {
  auto link = netdevs.link(if_name);
  if (!link.ok()) {
    return Status(link.status().code(),
                  "failed to lookup \"" + if_name + "\": " + link.status().message());
  }
  std::optional<IpAddress> v4gw, v6gw;
  bool ipv6_ready = false;
  uint32_t v6_flags = 0;
  for (const auto& ip : result.ips) {
    if (!ip.interface) continue;
    if (*ip.interface < 0 || static_cast<size_t>(*ip.interface) >= result.interfaces.size() ||
        result.interfaces[static_cast<size_t>(*ip.interface)].name != if_name) {
      return Status(Code::kInvalidArgument, "failed to add IP addr " + ip.address.text() +
                                                " to \"" + if_name + "\": invalid interface index");
    }
    if (!ip.address.address.isV4() && !ipv6_ready) {
      for (const std::string& iface : {std::string("lo"), if_name}) {
        auto disabled = netdevs.sysctl(confKey("ipv6", iface, "disable_ipv6"));
        if (!disabled.ok() || *disabled == "0") continue;
        Status st = netdevs.setSysctl(confKey("ipv6", iface, "disable_ipv6"), "0");
        if (!st.isOk()) {
          return Status(Code::kIo,
                        "failed to enable IPv6 for interface \"" + iface + "\": " + st.message());
        }
      }
      // Optimistic DAD makes the address usable at once; where the sysctl cannot be written
      // (a read-only /proc/sys), the address skips DAD rather than stay tentative.
      if (!netdevs.setSysctl(confKey("ipv6", if_name, "optimistic_dad"), "1").isOk()) {
        v6_flags = IFA_F_NODAD;
      }
      ipv6_ready = true;
    }
    Status added =
        netdevs.addAddress(link->index, ip.address, ip.address.address.isV4() ? 0 : v6_flags);
    if (!added.isOk()) {
      return Status(added.code(), "failed to add IP addr " + ip.address.text() + " to \"" +
                                      if_name + "\": " + added.message());
    }
    if (ip.gateway) {
      auto& gw = ip.gateway->isV4() ? v4gw : v6gw;
      if (!gw) gw = ip.gateway;
    }
  }
  if (Status up = netdevs.setUp(link->index, true); !up.isOk()) {
    return Status(up.code(), "failed to set \"" + if_name + "\" UP: " + up.message());
  }
  if (v6gw) {
    // Routes through an IPv6 gateway need a source address that left DAD.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (true) {
      auto addresses = netdevs.addresses(link->index);
      if (!addresses.ok()) return addresses.status();
      bool tentative = false;
      for (const auto& a : *addresses) {
        if (a.prefix.address.isV4()) continue;
        if ((a.flags & IFA_F_DADFAILED) != 0) {
          return Status(Code::kInternal, "link " + if_name + " has address " + a.prefix.text() +
                                             " in DADFAILED state");
        }
        if ((a.flags & IFA_F_TENTATIVE) != 0 && (a.flags & IFA_F_OPTIMISTIC) == 0) tentative = true;
      }
      if (!tentative || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  for (const auto& r : result.routes) {
    std::optional<IpAddress> gw = r.gw;
    if (!gw) gw = r.dst.address.isV4() ? v4gw : v6gw;
    Status st = netdevs.addRoute(link->index, r.dst, gw);
    if (!st.isOk()) {
      return Status(st.code(), "failed to add route '" + r.dst.text() + " via " +
                                   (gw ? gw->text() : std::string("<nil>")) + " dev " + if_name +
                                   "': " + st.message());
    }
  }
  return Status::ok();
}

}  // namespace sriovdra::cni_plugin
