#pragma once
// The `sriov` CNI plugin's part of the real-kernel test: ADD, CHECK, DEL and refusals of one VF,
// run by exec'ing a plugin binary as a runtime does (its environment, the configuration on stdin)
// with Debian's host-local as IPAM, against a kernel given as its Sysfs and Netlink. In the VM it
// is our `sriov` on Linux's igb; in the test, cni-simulated on the fixture that mirrors the
// guest (its VFs' netdevs veth interfaces named as the fixture names them), so both reports can be
// compared step by step.
//
// Each step's state leaves out what differs between two machines by design: netdev names (the
// guest's ethN, the fixture's eth0vN) and MACs the kernel chose (the VF netdev's own address is
// only said to be "as before" or not). A failing step's result is the errno the plugin's message
// names (EOPNOTSUPP, ...), else "failed" with the message in the state.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "host/netlink.h"
#include "host/sysfs.h"
#include "kernel/scenario.h"

namespace sriovdra::kernel_test {

struct CniScenarioOptions {
  std::string plugin;    // the sriov plugin binary
  std::string cni_path;  // where host-local is
  std::string work_dir;  // host-local's leases, the pod's namespace mount point
  std::vector<std::pair<std::string, std::string>> env;  // added to the plugin's environment
  // Called with each VF's netdev name (as sysfs shows it) once the VFs exist: the simulated run
  // creates stand-ins there; the VM has the real ones.
  std::function<void(const std::string&)> vf_netdev_created;
};

// Runs on the first SR-IOV PF discovery finds: makes 4 VFs, attaches VF 1 and VF 2 (on
// vfio-pci: DPDK mode), and removes the VFs again.
std::vector<Step> runCniScenario(host::Sysfs& sysfs, host::Netlink& netlink,
                                 const CniScenarioOptions& options);

}  // namespace sriovdra::kernel_test
