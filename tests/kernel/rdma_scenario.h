#pragma once
// The RDMA part of the real-kernel test: lib/host's KernelRdma (rdma.h) against Linux's RDMA core
// in the VM, with a soft-RoCE device (rxe) on a netdev as the only RDMA device QEMU can give. It
// checks the wire format (answers parsed, moves sent and refused with the kernel's errno) and
// what of the simulated kernel's rules (simulated_kernel.h) rxe can show: exclusive mode hides a
// device from other namespaces, rxe (which cannot take back user contexts) refuses to move in
// either mode, and Linux's own EBUSY for a mode change while another namespace exists, which the
// simulation leaves out. Shared mode's refusal of every move and mlx5's moves need other
// hardware: the simulation follows Linux's source there (ib_device_set_netns_put). Runs before the
// probe makes any other network namespace (exclusive mode needs that). Setting the mode and adding
// or deleting rxe are the test's own requests: the product never does either.
#include <string>
#include <vector>

#include "kernel/scenario.h"

namespace sriovdra::kernel_test {

// `netdev`: where rxe0 goes (the guest's first PF netdev).
std::vector<Step> runRdmaScenario(const std::string& netdev);

}  // namespace sriovdra::kernel_test
