// Runs inside the real-kernel test's VM (tests/kernel/vm.h), as the guest's /probe/run: the RDMA
// subsystem's scenario (before anything makes a network namespace), the scenario on the first
// SR-IOV PF, the CNI plugin's scenario there (our /probe/sriov with
// /probe/host-local), then 2 VFs on every PF and their placements, against the guest's own sysfs
// and netlink. Prints the report between marker lines on the serial console.
#include <cstdio>
#include <utility>

#include "host/apply.h"
#include "host/discovery.h"
#include "host/netdev.h"
#include "host/netns.h"
#include "kernel/cni_scenario.h"
#include "kernel/rdma_scenario.h"
#include "kernel/scenario.h"

using namespace sriovdra;

int main() {
  host::RealSysfs sysfs("/");
  host::KernelNetlink netlink;
  // First, while the guest has no other network namespace: the RDMA subsystem's rules, with
  // soft-RoCE on the first PF's netdev.
  std::vector<kernel_test::Step> rdma_steps;
  if (auto t = host::discover(sysfs, netlink); t.ok() && !t->pfs.empty()) {
    rdma_steps = kernel_test::runRdmaScenario(t->pfs.front().name);
  }
  // The pod's namespace, for the scenario's VF netdev.
  auto host_ns = host::NetNamespace::current();
  auto pod_ns = host::NetNamespace::createTemporary();
  auto move = [&](const std::string& netdev, bool to_pod) -> Status {
    if (!host_ns.ok()) return host_ns.status();
    if (!pod_ns.ok()) return pod_ns.status();
    auto moveIn = [&](const host::NetNamespace& to) -> Status {
      host::Netdevs nd;
      auto link = nd.link(netdev);
      if (!link.ok()) return link.status();
      return nd.moveTo(link->index, to);
    };
    return to_pod ? moveIn(*pod_ns) : pod_ns->run([&] { return moveIn(*host_ns); });
  };
  kernel_test::Report report{
      kernel_test::runScenario(sysfs, netlink, move), {}, {}, std::move(rdma_steps)};
  report.cni_steps = kernel_test::runCniScenario(
      sysfs, netlink,
      {.plugin = "/probe/sriov", .cni_path = "/probe", .work_dir = "/run/cni-test"});
  std::vector<std::string> failed;  // shown beside the placements, which then lack those VFs
  if (auto t = host::discover(sysfs, netlink); t.ok()) {
    for (const auto& pf : t->pfs) {
      Status st = host::applyAction(
          sysfs, netlink, {host::Action::Kind::kSetNumVfs, pf.pci_address, pf.pci_address, "2"});
      if (!st.isOk()) failed.push_back("2 VFs on " + pf.pci_address + ": " + st.toString());
    }
  }
  report.placements = kernel_test::placements(sysfs, netlink);
  report.placements.insert(report.placements.end(), failed.begin(), failed.end());
  std::printf("\n%s\n%s\n%s\n", kernel_test::kReportBegin,
              kernel_test::encodeReport(report).c_str(), kernel_test::kReportEnd);
  return 0;
}
