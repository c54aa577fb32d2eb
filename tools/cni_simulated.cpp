// cni-simulated: the `sriov` CNI plugin (and, when run under the name ib-sriov, the `ib-sriov`
// plugin) with the simulated kernel standing in for the PFs' side of SR-IOV
// (host/simulated_kernel.h: VF settings and GUIDs, the VFs' sysfs), for the demo and the tests
// (never shipped in the product's images). The VFs' netdevs are the running kernel's (the tests
// and the demo create ifb interfaces named as the fixture's VF netdevs), moved into pods for real.
// The fixture's root is $SRIOV_DRA_SIMULATED_ROOT (where the simulated agent's --sysfs-root
// points), and the plugins' state directories are under its var/lib/cni; without it the plugin
// fails saying so. It stops at the fault points a test arms under <root>/faults
// (host/simulated_faults.h).
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "cni/skel.h"
#include "host/simulated_faults.h"
#include "host/simulated_kernel.h"
#include "node/cni/entry_points.h"

int main(int argc, char** argv) {
  const char* root = std::getenv("SRIOV_DRA_SIMULATED_ROOT");
  if (root == nullptr || *root == '\0') {
    std::cout << sriovdra::cni::errorJson(
        {sriovdra::cni::kErrInvalidEnvironment,
         "SIMULATION: SRIOV_DRA_SIMULATED_ROOT must name the fixture's root", ""});
    return 1;
  }
  sriovdra::host::stopAtArmedFaultPoints(std::string(root) + "/faults");
  sriovdra::host::SimulatedKernel kernel(root);
  std::string_view name = argc > 0 ? argv[0] : "";
  // The simulated node's CNI state lives with it, never in the machine's /var/lib/cni.
  std::string state = std::string(root) + "/var/lib/cni/";
  if (name.ends_with("ib-sriov")) {
    return sriovdra::cni_plugin::ibSriovMain(kernel, kernel, kernel, state + "ib-sriov");
  }
  return sriovdra::cni_plugin::sriovMain(kernel, kernel, state + "sriov");
}
