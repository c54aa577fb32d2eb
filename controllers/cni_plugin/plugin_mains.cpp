#include "cni_plugin/plugin_mains.h"

#include <cstdlib>
#include <iostream>

#include "cni_plugin/ib_sriov_plugin.h"
#include "cni_plugin/plugin_main.h"
#include "cni_plugin/sriov_plugin.h"

namespace sriovdra::cni_plugin {
namespace {

std::string getenvOrEmpty(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  return v == nullptr ? "" : v;
}

void toStderr(std::string_view line) { std::cerr << line << "\n"; }

}  // namespace

int sriovMain(const PluginKernel& kernel) {
  SriovPlugin plugin({.sysfs = kernel.sysfs, .netlink = kernel.netlink, .log = toStderr});
  PluginCommands commands{
      .add = [&](const cni::CmdArgs& a) { return plugin.add(a); },
      .del = [&](const cni::CmdArgs& a) { return plugin.del(a); },
  };
  return runCniCommand(commands, "CNI SR-IOV plugin (sriov-dra-operator)", getenvOrEmpty, std::cin,
                       std::cout, std::cerr);
}

int ibSriovMain(const PluginKernel& kernel) {
  IbSriovPlugin plugin({.sysfs = kernel.sysfs,
                        .netlink = kernel.netlink,
                        .state_dir = "/var/lib/cni/ib-sriov",
                        .log = toStderr});
  PluginCommands commands{
      .add = [&](const cni::CmdArgs& a) { return plugin.add(a); },
      .del = [&](const cni::CmdArgs& a) { return plugin.del(a); },
  };
  return runCniCommand(commands, "CNI InfiniBand SR-IOV plugin (sriov-dra-operator)", getenvOrEmpty,
                       std::cin, std::cout, std::cerr);
}

}  // namespace sriovdra::cni_plugin
