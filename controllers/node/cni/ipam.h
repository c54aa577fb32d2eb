#pragma once
// What a main CNI plugin does around its IPAM plugin, as containernetworking/plugins' ipam
// package does it for the reference plugins:
//   delegateAdd/Del  run the IPAM plugin `type` from CNI_PATH (the first directory that has it)
//                    with the plugin's own stdin and CNI_* environment (CNI_COMMAND set to ADD or
//                    DEL), no shell, within `timeout`; ADD's answer is parsed as a CNI result of
//                    any version. Errors: the plugin's CNI error message, or why it did not run.
//   configureInterface  inside the pod's namespace (call it from NetNamespace::run): every
//                    address of the result on the interface (IPv6 enabled first when it was
//                    disabled), the link up, IPv6 addresses settled (DAD) when there is an IPv6
//                    gateway, then the routes (a route without a gateway takes its family's).
//                    An IPv6 address is added with optimistic DAD where the namespace's sysctls
//                    are writable, else with IFA_F_NODAD, so an address is never left tentative
//                    longer than the plugin may take.
#include <chrono>
#include <string>

#include "base/status.h"
#include "cni/result.h"
#include "cni/skel.h"
#include "host/netdev.h"

namespace sriovdra::cni_plugin {

Result<cni::CniResult> delegateAdd(const cni::CmdArgs& args, const std::string& type,
                                   std::chrono::milliseconds timeout);
Status delegateDel(const cni::CmdArgs& args, const std::string& type,
                   std::chrono::milliseconds timeout);

// `result.interfaces[*ip.interface]` must name `if_name` for each of its IPs.
Status configureInterface(const host::Netdevs& netdevs, const std::string& if_name,
                          const cni::CniResult& result);

}  // namespace sriovdra::cni_plugin
