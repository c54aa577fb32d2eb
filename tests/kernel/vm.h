#pragma once
// One boot of the real-kernel test's VM: QEMU (TCG; KVM is not usable on this machine kind) with
// Debian's kernel and the base initramfs of scripts/build-kernel-vm.sh, to which the probe program
// and the shared libraries `ldd` names for it (and for `programs`) are appended as a second cpio
// archive (Linux
// unpacks both). The guest's /init loads igb, igbvf and vfio-pci, runs the probe as /probe/run
// and powers off; everything the guest printed on its serial console is returned. The console
// goes to a file in the work directory, not through a pipe: one of four boots under load here,
// through QEMU's stdio stalled until the timeout, and a file also keeps what a hung guest printed.
//
// The machine: q35 with an intel-iommu (interrupt remapping off: it panics under TCG; without an
// IOMMU VFs get no group and vfio-pci cannot bind), SeaBIOS, one vCPU, two NUMA nodes (the
// second has memory and no CPU: with a vCPU each, CI's loaded 2-core machine stalled the guest on
// RCU, the second vCPU's timer never firing, until the timeout), and one emulated
// Intel 82576 (`igb`, 7 VFs) per entry of `nics`: behind a root port of the main root complex
// (pci0000:00), or of a pxb-pcie expander bridge, a root bus of its own (pci0000:<bus>) on the
// given NUMA node. Each NIC's backend is a port of a QEMU hub of its own: the PF has a link, and
// the guest reaches nothing, the host least of all.
#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"

namespace sriovdra::kernel_test {

struct VmNic {
  int expander_bus = 0;  // 0: on pci0000:00; else the pxb-pcie's bus number (pci0000:<bus>)
  int numa_node = 0;     // of the expander bridge
};

struct VmOptions {
  std::string kernel_vm_dir;  // scripts/build-kernel-vm.sh's output (vmlinux, base.cpio)
  std::string probe;          // the program the guest runs
  // More programs the guest gets under /probe/<name>, with the libraries they load.
  std::vector<std::string> programs;
  std::string work_dir;  // scratch: the probe's initramfs
  std::vector<VmNic> nics;
  std::chrono::seconds timeout{300};
};

// The serial log of one boot; an error when QEMU cannot start, fails or outlives the timeout,
// with what the guest printed until then.
Result<std::string> bootVm(const VmOptions& options);

}  // namespace sriovdra::kernel_test
