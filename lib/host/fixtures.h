#pragma once
// Fixture sysfs trees shaped like real servers, written in the real Linux layout
// (sys/devices/pciDDDD:BB/<root port>/<switch ports>/<device>, sys/bus/pci/devices links,
// sys/class/net, sys/class/infiniband, iommu groups, drivers), for the simulated kernel, the
// demo and the tests. Topologies:
//   a100-reference  2 NUMA nodes, roots pci0000:00, pci0000:3a (NUMA 0), pci0000:80, pci0000:b9
//                   (NUMA 1), each with one PCIe switch holding 2 A100 GPUs (10de:20b2) and 2
//                   ConnectX-6 InfiniBand PFs (15b3:101b, VF 101c, mlx5_core, 8 VFs), named and
//                   addressed as on the reference cluster (ibp14s0 0000:0e:00.0, ...).
//   a100-roce       the same server with its ConnectX-6 ports set to Ethernet (RoCE): the same
//                   addresses, PFs enp14s0np0, enp17s0np0, ..., MTU 9000.
//   e810-ethernet   two Intel E810 Ethernet PFs (8086:1593, VF 1889, ice/iavf, 256 VFs each),
//                   ens1f0/ens1f1 with the altNames enp59s0f0np0/enp59s0f1np1, eSwitch legacy.
//   shared-root     one root complex pci0000:00 with two switches, each holding a GPU and a NIC:
//                   a shared pcieRoot does not mean a shared switch there.
//   many-pfs        eight dual-port E810 NICs on eight roots: 16 PFs x 256 VFs (benchmarks).
//   igb-qemu        the real-kernel test's guest (tests/kernel): one Intel 82576 (8086:10c9, VF
//                   10ca, igb/igbvf, 7 VFs at offset 128, stride 2), eth0, on pci0000:00.
// PFs start with 0 VFs; writing sriov_numvfs through the simulated kernel creates them. Each
// fixture is a host in its first boot: proc/sys/kernel/random/boot_id is kFirstBootId.
#include <string>
#include <vector>

#include "base/status.h"

namespace sriovdra::host {

inline constexpr const char* kFirstBootId = "00000000-0000-4000-8000-000000000001";

std::vector<std::string> fixtureTopologies();

// Writes the topology under `root` (which must be empty or absent).
Status writeFixture(const std::string& topology, const std::string& root);

}  // namespace sriovdra::host
