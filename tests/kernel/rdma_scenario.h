#pragma once
// The RDMA part of the real-kernel test: lib/host's KernelRdma (rdma.h) against Linux's RDMA core
// in the VM, with a soft-RoCE device (rxe) on a netdev as the only RDMA device QEMU can give. It
// checks the wire format (an answer parsed, a move sent) and the rules the simulated kernel
// follows (simulated_kernel.h): shared mode refuses moves, exclusive mode hides a device from
// other namespaces, a driver that cannot take back user contexts (rxe) refuses to move, and
// Linux's own EBUSY for a mode change while another namespace exists, which the simulation leaves
// out. Runs before the probe makes any other network namespace (exclusive mode needs that).
// Setting the mode and adding or deleting rxe are the test's own requests: the product never
// does either.
#include <string>
#include <vector>

#include "kernel/scenario.h"

namespace sriovdra::kernel_test {

// `netdev`: where rxe0 goes (the guest's first PF netdev).
std::vector<Step> runRdmaScenario(const std::string& netdev);

}  // namespace sriovdra::kernel_test
