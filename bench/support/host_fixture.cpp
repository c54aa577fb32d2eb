#include "support/host_fixture.h"

#include <chrono>
#include <filesystem>

#include "base/time.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "host/sync_status.h"
#include "support/floor.h"

namespace sriovdra::bench {

FixtureHost discoverFixture(const std::string& fixture, int vfs_per_pf,
                            const std::string& scratch) {
  FixtureHost out;
  std::filesystem::remove_all(scratch);
  mustBeOk(host::writeFixture(fixture, scratch), "writing the fixture " + fixture);
  {
    host::SimulatedKernel kernel(scratch);
    auto before = host::discover(kernel, kernel);
    mustBeOk(before.status(), "discovering the fixture " + fixture);
    auto t0 = std::chrono::steady_clock::now();
    for (const auto& pf : before->pfs) {
      mustBeOk(kernel.write("sys/bus/pci/devices/" + pf.pci_address + "/sriov_numvfs",
                            std::to_string(vfs_per_pf)),
               "creating VFs on " + pf.pci_address);
    }
    out.kernel_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    mustBeOk(kernel.links().status(), "dumping the fixture's netdevs");
    out.netlink_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto topology = host::discover(kernel, kernel);
    mustBeOk(topology.status(), "discovering the fixture " + fixture + " with its VFs");
    out.topology = std::move(*topology);
  }
  std::filesystem::remove_all(scratch);
  return out;
}

api::SriovNodeStateStatus agentStatus(const host::Topology& topology,
                                      const api::SriovNodeStateStatus& before,
                                      const api::SriovNodeStateSpec& spec) {
  host::SyncOutcome outcome;
  outcome.advertised = static_cast<int64_t>(spec.devices.size());
  return host::syncedStatus(before, spec, 1, topology, outcome,
                            formatRfc3339(std::chrono::system_clock::now()));
}

std::string scratchDir(const std::string& name) {
  std::string base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  return base + "/" + name;
}

}  // namespace sriovdra::bench
