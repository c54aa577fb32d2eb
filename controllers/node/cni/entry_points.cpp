#include "node/cni/entry_points.h"

#include <cstdlib>
#include <iostream>

#include "node/cni/ib_sriov_plugin.h"
#include "node/cni/run_command.h"
#include "node/cni/sriov_plugin.h"

namespace sriovdra::cni_plugin {
namespace {

std::string getenvOrEmpty(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  return v == nullptr ? "" : v;
}

PluginHost processHost(host::Sysfs& sysfs, host::Netlink& netlink, host::Rdma* rdma,
                       const std::string& state_dir) {
  return {.sysfs = &sysfs,
          .netlink = &netlink,
          .rdma = rdma,
          .state_dir = state_dir,
          .log = [](std::string_view line) { std::cerr << line << "\n"; }};
}

template <typename Plugin>
int run(Plugin& plugin, std::string_view about) {
  PluginCommands commands{
      .add = [&](const cni::CmdArgs& a) { return plugin.add(a); },
      .del = [&](const cni::CmdArgs& a) { return plugin.del(a); },
  };
  return runCniCommand(commands, about, getenvOrEmpty, std::cin, std::cout, std::cerr);
}

}  // namespace

int sriovMain(host::Sysfs& sysfs, host::Netlink& netlink, const std::string& state_dir) {
  SriovPlugin plugin(processHost(sysfs, netlink, nullptr, state_dir));
  return run(plugin, "CNI SR-IOV plugin (sriov-dra-operator)");
}

int ibSriovMain(host::Sysfs& sysfs, host::Netlink& netlink, host::Rdma& rdma,
                const std::string& state_dir) {
  IbSriovPlugin plugin(processHost(sysfs, netlink, &rdma, state_dir));
  return run(plugin, "CNI InfiniBand SR-IOV plugin (sriov-dra-operator)");
}

}  // namespace sriovdra::cni_plugin
