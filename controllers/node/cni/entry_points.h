#pragma once
// What each plugin binary runs: its commands (sriov_plugin.h, ib_sriov_plugin.h) on the given
// sysfs, PF netlink and (ib-sriov) RDMA subsystem, driven by runCniCommand with the process's
// environment, stdin, stdout and stderr (diagnostics). cmd/sriov and cmd/ib-sriov give the running
// kernel's (/sys and rtnetlink, RDMA netlink); the tests' images give the simulated kernel's
// (tools/cni_simulated.cpp).
#include <string>

#include "host/netlink.h"
#include "host/rdma.h"
#include "host/sysfs.h"

namespace sriovdra::cni_plugin {

// `state_dir` "" = the plugin's own (/var/lib/cni/sriov, /var/lib/cni/ib-sriov).
int sriovMain(host::Sysfs& sysfs, host::Netlink& netlink, const std::string& state_dir = "");
int ibSriovMain(host::Sysfs& sysfs, host::Netlink& netlink, host::Rdma& rdma,
                const std::string& state_dir = "");

}  // namespace sriovdra::cni_plugin
