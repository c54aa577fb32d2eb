#pragma once
// What each plugin binary runs: its commands (sriov_plugin.h, ib_sriov_plugin.h) on the given
// kernel, driven by runCniCommand with the process's environment, stdin, stdout and stderr.
// cmd/sriov and cmd/ib-sriov give the running kernel (/sys and rtnetlink); the tests' images give
// the simulated one for the PFs' side (tools/cni_simulated.cpp).
#include "host/netlink.h"
#include "host/sysfs.h"

namespace sriovdra::cni_plugin {

struct PluginKernel {
  host::Sysfs* sysfs = nullptr;
  host::Netlink* netlink = nullptr;
};

int sriovMain(const PluginKernel& kernel);
int ibSriovMain(const PluginKernel& kernel);

}  // namespace sriovdra::cni_plugin
