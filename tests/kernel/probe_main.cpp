// Runs inside the real-kernel test's VM (tests/kernel/vm.h), as the guest's /probe/run: the
// scenario on the first SR-IOV PF, then 2 VFs on every PF and their placements, against the
// guest's own sysfs and netlink. Prints the report between marker lines on the serial console.
#include <cstdio>

#include "host/apply.h"
#include "host/discovery.h"
#include "kernel/scenario.h"

using namespace sriovdra;

int main() {
  host::RealSysfs sysfs("/");
  host::KernelNetlink netlink;
  auto steps = kernel_test::runScenario(sysfs, netlink);
  if (auto t = host::discover(sysfs, netlink); t.ok()) {
    for (const auto& pf : t->pfs) {
      (void)host::applyAction(
          sysfs, netlink, {host::Action::Kind::kSetNumVfs, pf.pci_address, pf.pci_address, "2"});
    }
  }
  std::string report = kernel_test::encodeReport(steps, kernel_test::placements(sysfs, netlink));
  std::printf("\n%s\n%s\n%s\n", kernel_test::kReportBegin, report.c_str(), kernel_test::kReportEnd);
  return 0;
}
