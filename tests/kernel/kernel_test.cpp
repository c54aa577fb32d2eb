// lib/host on a real kernel: Linux's own SR-IOV code (QEMU's emulated Intel 82576: igb, igbvf,
// vfio-pci) in a VM (vm.h), driven by the scenario (scenario.h) that the probe runs in the guest;
// and the simulated kernel held to it: the same scenario on the fixture that mirrors the guest
// ("igb-qemu") must give the same result and the same state at every step. The VM boots once
// per run of this binary (about 10-20 s under TCG); $SRIOV_DRA_KERNEL_VM names
// scripts/build-kernel-vm.sh's output, as scripts/test.sh sets it.
#include <cstdlib>
#include <optional>

#include <catch2/catch.hpp>

#include "base/strings.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "kernel/scenario.h"
#include "kernel/vm.h"
#include "support/skip.h"
#include "support/temp_dir.h"

using namespace sriovdra;

namespace {

struct VmResult {
  std::string serial;  // what the guest printed
  Result<kernel_test::Report> report = Status(Code::kInternal, "not run");
};

// The guest: one igb on the main root complex (pci0000:00), one behind a pxb-pcie expander
// bridge with root bus 0x40 on NUMA node 1.
const VmResult* vmRun() {
  static const std::optional<VmResult> run = []() -> std::optional<VmResult> {
    const char* dir = std::getenv("SRIOV_DRA_KERNEL_VM");
    if (dir == nullptr || *dir == '\0') return std::nullopt;
    static testing::TempDir work;
    VmResult r;
    auto serial = kernel_test::bootVm({.kernel_vm_dir = dir,
                                       .probe = SRIOV_DRA_KERNEL_PROBE,
                                       .work_dir = work.path(),
                                       .nics = {{0, 0}, {0x40, 1}}});
    if (!serial.ok()) {
      r.report = serial.status();
      return r;
    }
    r.serial = *serial;
    std::erase(r.serial, '\r');
    auto begin = r.serial.find(kernel_test::kReportBegin);
    auto end = r.serial.find(kernel_test::kReportEnd);
    if (begin == std::string::npos || end == std::string::npos || end < begin) {
      r.report = Status(Code::kInternal, "the guest printed no report");
      return r;
    }
    begin += std::string_view(kernel_test::kReportBegin).size();
    r.report = kernel_test::decodeReport(r.serial.substr(begin, end - begin));
    return r;
  }();
  if (!run) {
    testing::skip(
        "SRIOV_DRA_KERNEL_VM is not set: the real-kernel tests did not run "
        "(scripts/test.sh prepares the VM with scripts/build-kernel-vm.sh)");
    return nullptr;
  }
  return &*run;
}

const kernel_test::Step& stepNamed(const kernel_test::Report& r, const std::string& name) {
  for (const auto& s : r.steps) {
    if (s.name == name) return s;
  }
  FAIL("no step \"" << name << "\" in the report");
  throw std::logic_error("unreachable");
}

// One line per entry, each ending in a newline.
std::string joined(const std::vector<std::string>& lines) { return join(lines, "\n") + "\n"; }

}  // namespace

TEST_CASE("lib/host drives Linux's own SR-IOV: VFs, drivers, MTU, refusals", "[kernel]") {
  const VmResult* vm = vmRun();
  if (vm == nullptr) return;
  INFO("serial console:\n" << vm->serial);
  INFO(vm->report.status().message());
  REQUIRE(vm->report.ok());
  const auto& r = *vm->report;
  std::string steps;
  for (const auto& s : r.steps) steps += s.name + " -> " + s.result + "\n" + joined(s.state);
  INFO("steps in the guest:\n" << steps);
  // What Linux showed (docs/development.md, "The real kernel").
  auto state = [&](const std::string& step, size_t line) {
    const auto& lines = stepNamed(r, step).state;
    return line < lines.size() ? lines[line]
                               : std::string("(no line ") + std::to_string(line) + ")";
  };
  CHECK(state("discover", 0) ==
        "PF 0000:01:00.0 8086:10c9 driver=igb netdev=eth0 mtu=1500 link=ETH eswitch=legacy "
        "numVfs=0/7 vfDevice=10ca");
  CHECK(stepNamed(r, "set sriov_numvfs 4").result == "ok");
  CHECK(stepNamed(r, "set sriov_numvfs 4").state.size() == 6);
  CHECK(state("set sriov_numvfs 4", 4) ==
        "VF 3 0000:01:10.6 8086:10ca driver=igbvf netdev mtu=1500 override=(null)");
  CHECK(stepNamed(r, "write sriov_numvfs 2 over 4").result == "EBUSY");
  CHECK(stepNamed(r, "write sriov_numvfs 8 over 4 (more than sriov_totalvfs)").result == "ERANGE");
  CHECK(stepNamed(r, "plan: set sriov_numvfs of 0000:01:00.0 to 0").result == "ok");
  CHECK(stepNamed(r, "plan: set sriov_numvfs of 0000:01:00.0 to 2").state.size() == 4);
  CHECK(stepNamed(r, "bind VF 0 to vfio-pci").result == "ok");
  CHECK(state("bind VF 0 to vfio-pci", 1) ==
        "VF 0 0000:01:10.0 8086:10ca driver=vfio-pci no netdev override=vfio-pci "
        "/dev/vfio/<group>");
  CHECK(state("bind VF 0 to its default driver", 1) ==
        "VF 0 0000:01:10.0 8086:10ca driver=igbvf netdev mtu=1500 override=(null)");
  CHECK(stepNamed(r, "VF 1 mtu 9000").result == "ok");
  CHECK(stepNamed(r, "PF mtu 70000").result == "EINVAL");
  CHECK(stepNamed(r, "devlink eswitch set switchdev").result == "ENODEV");
  CHECK(stepNamed(r, "rtnetlink VF GUIDs of the PF").result == "0 VF(s) with GUIDs");
  CHECK(stepNamed(r, "rtnetlink set the GUIDs of VF 0").result == "EOPNOTSUPP");
  CHECK(stepNamed(r, "set sriov_numvfs 0").state ==
        std::vector<std::string>{"PF 0000:01:00.0 8086:10c9 driver=igb netdev=eth0 mtu=9000 "
                                 "link=ETH eswitch=legacy numVfs=0/7 vfDevice=10ca",
                                 "VFIO group nodes: 0"});
  // Two roots: q35's (no NUMA affinity) and a pxb-pcie expander's on NUMA node 1; the agent
  // publishes each VF under its own root and node, as sysfs places it.
  CHECK(r.placements ==
        std::vector<std::string>{
            "0000-01-10-0 pcieRoot=pci0000:00 numaNode=-1 (sysfs: pci0000:00 numa_node -1)",
            "0000-01-10-2 pcieRoot=pci0000:00 numaNode=-1 (sysfs: pci0000:00 numa_node -1)",
            "0000-41-10-0 pcieRoot=pci0000:40 numaNode=1 (sysfs: pci0000:40 numa_node 1)",
            "0000-41-10-2 pcieRoot=pci0000:40 numaNode=1 (sysfs: pci0000:40 numa_node 1)"});
}

TEST_CASE("the simulated kernel answers the scenario as Linux does", "[kernel]") {
  const VmResult* vm = vmRun();
  if (vm == nullptr) return;
  INFO("serial console:\n" << vm->serial);
  INFO(vm->report.status().message());
  REQUIRE(vm->report.ok());
  testing::TempDir dir;
  REQUIRE(host::writeFixture("igb-qemu", dir.path()).isOk());
  host::SimulatedKernel kernel(dir.path());
  auto simulated = kernel_test::runScenario(kernel, kernel);
  const auto& real = vm->report->steps;
  REQUIRE(simulated.size() == real.size());
  for (size_t i = 0; i < real.size(); ++i) {
    INFO("step " << i << ": " << real[i].name << "\nLinux: " << real[i].result << "\n"
                 << joined(real[i].state) << "simulated: " << simulated[i].result << "\n"
                 << joined(simulated[i].state));
    CHECK(simulated[i].name == real[i].name);
    CHECK(simulated[i].result == real[i].result);
    CHECK(simulated[i].state == real[i].state);
  }
}
