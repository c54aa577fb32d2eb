// lib/host on a real kernel: Linux's own SR-IOV code (QEMU's emulated Intel 82576: igb, igbvf,
// vfio-pci) in a VM (vm.h), driven by the scenario (scenario.h) that the probe runs in the guest;
// and the simulated kernel held to it: the same scenario on the fixture that mirrors the guest
// ("igb-qemu") must give the same result and the same state at every step. The VM boots once
// per run of this binary (about 10-20 s under TCG); $SRIOV_DRA_KERNEL_VM names
// scripts/build-kernel-vm.sh's output, as scripts/test.sh sets it.
#include <cstdlib>
#include <optional>
#include <thread>

#include <catch2/catch.hpp>
#include <sched.h>

#include "base/process.h"
#include "base/strings.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "kernel/cni_scenario.h"
#include "kernel/scenario.h"
#include "kernel/vm.h"
#include "support/skip.h"
#include "support/temp_dir.h"

using namespace sriovdra;

namespace {

// Debian's host-local (containernetworking-plugins), the IPAM of the CNI scenario.
constexpr const char* kHostLocal = "/usr/lib/cni/host-local";

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
                                       .programs = {SRIOV_DRA_SRIOV_CNI, kHostLocal},
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

// What the guest did, for the test's messages: each step, its result and its state.
std::string described(const std::vector<kernel_test::Step>& steps) {
  std::string out;
  for (const auto& s : steps) out += s.name + " -> " + s.result + "\n" + joined(s.state);
  return out;
}

// Every step of the simulated kernel's run as Linux's: its name, result and state.
void checkSameSteps(const std::vector<kernel_test::Step>& simulated,
                    const std::vector<kernel_test::Step>& real) {
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

}  // namespace

TEST_CASE("lib/host drives Linux's own SR-IOV: VFs, drivers, MTU, refusals", "[kernel]") {
  const VmResult* vm = vmRun();
  if (vm == nullptr) return;
  INFO("serial console:\n" << vm->serial);
  INFO(vm->report.status().message());
  REQUIRE(vm->report.ok());
  const auto& r = *vm->report;
  INFO("steps in the guest:\n" << described(r.steps));
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
  CHECK(stepNamed(r, "rtnetlink VF counters of the PF").result == "2 VF(s), all zero");
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

TEST_CASE("lib/host's RDMA netlink on Linux's RDMA core: the rules the simulated kernel follows",
          "[kernel][rdma]") {
  const VmResult* vm = vmRun();
  if (vm == nullptr) return;
  INFO("serial console:\n" << vm->serial);
  INFO(vm->report.status().message());
  REQUIRE(vm->report.ok());
  const auto& steps = vm->report->rdma_steps;
  INFO("RDMA steps in the guest:\n" << described(steps));
  // Soft-RoCE on the first PF, Linux's default mode read back, then the rules: rxe cannot move
  // in either mode (only drivers that can take back user contexts, mlx5 among them, can: the
  // simulated kernel moves mlx5 devices only); exclusive mode hides the device from another
  // namespace (ENODEV, as the simulated kernel answers); a mode change while another namespace
  // exists is EBUSY (the simulation's set-up skips that rule).
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"rdma link add rxe0 type rxe netdev eth0", "ok"},
      {"rdma system show", "netns shared"},
      {"rdma dev set rxe0 netns (its own), shared mode", "EOPNOTSUPP"},
      {"rdma system set netns exclusive", "ok"},
      {"rdma system show, after", "netns exclusive"},
      {"rdma dev set rxe0 netns pod", "EOPNOTSUPP"},
      {"rdma dev set mlx5_9 netns pod (the dump lists no such device)", "ENODEV"},
      {"in the pod: rdma dev set rxe0 netns (the host's)", "ENODEV"},
      {"rdma system set netns shared, a pod namespace exists", "EBUSY"},
      {"rdma link delete rxe0", "ok"}};
  REQUIRE(steps.size() == expected.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    CHECK(steps[i].name == expected[i].first);
    CHECK(steps[i].result == expected[i].second);
  }
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
  auto simulated =
      kernel_test::runScenario(kernel, kernel, [&](const std::string& netdev, bool to_pod) {
        return to_pod ? kernel.moveToNetns(netdev, "pod") : kernel.returnFromNetns("pod", netdev);
      });
  const auto& real = vm->report->steps;
  checkSameSteps(simulated, real);
}

TEST_CASE("our sriov CNI plugin on Linux's igb: every setting applied, shown and put back",
          "[kernel][cni]") {
  const VmResult* vm = vmRun();
  if (vm == nullptr) return;
  INFO("serial console:\n" << vm->serial);
  INFO(vm->report.status().message());
  REQUIRE(vm->report.ok());
  const auto& r = *vm->report;
  INFO("CNI steps in the guest:\n" << described(r.cni_steps));
  auto step = [&](const std::string& name) -> const kernel_test::Step& {
    for (const auto& s : r.cni_steps) {
      if (s.name == name) return s;
    }
    FAIL("no CNI step \"" << name << "\"");
    throw std::logic_error("unreachable");
  };
  const std::string fresh =
      "VF 1 mac=none vlan=0 qos=0 proto=802.1Q spoofchk=on trust=off "
      "min_tx_rate=0 max_tx_rate=0 link_state=auto";
  REQUIRE(step("cni: PF mtu 1500, sriov_numvfs 4, up, pod namespace").result == "ok");
  CHECK(step("cni: PF mtu 1500, sriov_numvfs 4, up, pod namespace").state.at(0) == fresh);
  const auto& add =
      step("cni ADD: MAC, VLAN 100 QoS 2, spoofchk off, trust on, max rate 100, IPv4 + IPv6");
  REQUIRE(add.result == "ok");
  // What Linux's igb shows through the PF (rtnetlink), the netdev in the pod, the host without it.
  CHECK(add.state.at(0) ==
        "VF 1 mac=02:11:22:33:44:55 vlan=100 qos=2 proto=802.1Q spoofchk=off trust=on "
        "min_tx_rate=0 max_tx_rate=100 link_state=auto");
  CHECK(add.state.at(2) ==
        "pod: net1 up mac=02:11:22:33:44:55 mtu=1500 10.56.217.10/24 fd00:10:56::10/64, "
        "route 10.60.0.0/16 via 10.56.217.1");
  CHECK(add.state.at(3) == "host: VF 1 netdev absent");
  CHECK_THAT(add.state.at(4), Catch::Contains("name=net1 mac=02:11:22:33:44:55 mtu=1500") &&
                                  Catch::Contains("address=10.56.217.10/24 gateway=10.56.217.1") &&
                                  Catch::Contains("address=fd00:10:56::10/64") &&
                                  Catch::Contains("dst=10.60.0.0/16"));
  CHECK(step("cni CHECK").result == "ok");
  const auto& del = step("cni DEL");
  CHECK(del.result == "ok");
  CHECK(del.state.at(0) == fresh);
  CHECK(del.state.at(2) == "pod: no net1");
  CHECK(del.state.at(3) == "host: VF 1 netdev present, MAC as before, mtu 1500, down");
  CHECK(step("cni DEL again").result == "ok");
  // What igb refuses fails the ADD with the kernel's reason and leaves the VF as it was; the
  // runtime's DEL after it succeeds (the driver refusing to set the value back does not matter:
  // the VF has it).
  for (const auto& [what, errno_name] :
       std::vector<std::pair<std::string, std::string>>{{"link_state enable", "EOPNOTSUPP"},
                                                        {"802.1ad", "EPROTONOSUPPORT"},
                                                        {"min_tx_rate 10", "EINVAL"}}) {
    INFO(what);
    const auto& refused = step("cni ADD refused: " + what);
    CHECK(refused.result == errno_name);
    CHECK(refused.state.at(0) == fresh);
    CHECK(refused.state.at(2) == "pod: no net1");
    CHECK(refused.state.at(3) == "host: VF 1 netdev present, MAC as before, mtu 1500, down");
    const auto& del_after = step("cni DEL after the refused ADD (" + what + ")");
    CHECK(del_after.result == "ok");
    CHECK(del_after.state.at(0) == fresh);
  }
  // DPDK mode: VF 2 on vfio-pci, configured through the PF only, and reset on DEL.
  REQUIRE(step("cni: bind VF 2 to vfio-pci").result == "ok");
  const auto& dpdk = step("cni ADD DPDK: VF 2 on vfio-pci, MAC, VLAN 200, trust on");
  CHECK(dpdk.result == "ok");
  CHECK(dpdk.state.at(1) ==
        "VF 2 mac=02:11:22:33:44:66 vlan=200 qos=0 proto=802.1Q spoofchk=on trust=on "
        "min_tx_rate=0 max_tx_rate=0 link_state=auto");
  CHECK_THAT(dpdk.state.at(4), Catch::Contains("name=net2 mac=02:11:22:33:44:66"));
  const auto& undone = step("cni DEL DPDK");
  CHECK(undone.result == "ok");
  CHECK(undone.state.at(1) ==
        "VF 2 mac=none vlan=0 qos=0 proto=802.1Q spoofchk=on trust=off "
        "min_tx_rate=0 max_tx_rate=0 link_state=auto");
  CHECK(step("cni: VF 2 back on its driver, sriov_numvfs 0").result == "ok");
}

TEST_CASE("the simulated kernel answers the CNI plugin as Linux's igb does", "[kernel][cni]") {
  const VmResult* vm = vmRun();
  if (vm == nullptr) return;
  INFO(vm->report.status().message());
  REQUIRE(vm->report.ok());
  testing::TempDir dir;
  REQUIRE(host::writeFixture("igb-qemu", dir.path()).isOk());
  // The same scenario with cni-simulated: the PF's side on the fixture, each VF's netdev a veth
  // interface of the fixture's name, all in a network namespace of this test's own.
  std::vector<kernel_test::Step> simulated;
  std::string problem;
  std::thread([&] {
    if (::unshare(CLONE_NEWNET) != 0) {
      problem = "unshare(CLONE_NEWNET) failed: run as root";
      return;
    }
    host::SimulatedKernel kernel(dir.path());
    simulated = kernel_test::runCniScenario(
        kernel, kernel,
        {.plugin = SRIOV_DRA_SRIOV_CNI_SIMULATED,
         .cni_path = "/usr/lib/cni",
         .work_dir = dir.path() + "/cni",
         .env = {{"SRIOV_DRA_SIMULATED_ROOT", dir.path()}},
         .vf_netdev_created = [peers = 0](const std::string& name) mutable {
           // One end of a veth pair (an ifb takes no MAC), its peer beside it.
           (void)runProcess({.argv = {"ip", "link", "add", name, "type", "veth", "peer", "name",
                                      "peer" + std::to_string(peers++)}},
                            std::chrono::seconds(10));
         }});
  }).join();
  REQUIRE(problem.empty());
  const auto& real = vm->report->cni_steps;
  checkSameSteps(simulated, real);
}
