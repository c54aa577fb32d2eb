// sriov-dra-agent-simulated: sriov-dra-agent on the simulated kernel, for the demo and the tests
// (never shipped in the product's images): writes under --sysfs-root and netlink calls behave as
// Linux's do (host/simulated_kernel.h), so a fixture server's VFs can be created on a machine
// without SR-IOV hardware. Same flags as sriov-dra-agent; with a --reboot-command it reboots the
// simulated host instead of running the command.
// It stops at the fault points a test arms under <sysfs-root>/faults (host/simulated_faults.h).
#include "base/log.h"
#include "host/simulated_faults.h"
#include "host/simulated_kernel.h"
#include "sriov-dra-agent/agent_main.h"

namespace {

sriovdra::process::HostKernel simulated(const std::string& sysfs_root) {
  SDRA_LOG_WARN << "SIMULATION: writes under " << sysfs_root
                << " and netlink behave like the kernel; no hardware is touched";
  sriovdra::host::stopAtArmedFaultPoints(sysfs_root + "/faults");
  auto kernel = std::make_shared<sriovdra::host::SimulatedKernel>(sysfs_root);
  return {kernel, kernel, kernel, kernel, kernel};
}

}  // namespace

int main(int argc, char** argv) { return sriovdra::agentMain(argc, argv, simulated); }
