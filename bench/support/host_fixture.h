#pragma once
// A fixture server (host/fixtures.h) with its VFs created, as the agent discovers it and reports
// it: the simulated kernel on a scratch copy of the fixture tree, removed afterwards. The scale
// benches write what real agents write, not a hand-made status.
#include <string>

#include "api/node_state.h"
#include "host/model.h"

namespace sriovdra::bench {

struct FixtureHost {
  host::Topology topology;     // after `vfs_per_pf` VFs were created on every PF
  double kernel_seconds = 0;   // the simulated kernel creating them, uncontended
  double netlink_seconds = 0;  // its rtnetlink dump of the host's netdevs, read from its files
};

// Writes `fixture` under `scratch` (removed before and after), creates `vfs_per_pf` VFs on every
// PF through the simulated kernel and discovers the host. Exits with a message on failure.
FixtureHost discoverFixture(const std::string& fixture, int vfs_per_pf, const std::string& scratch);

// What the agent reports of the host: before any spec (`spec` empty, `before` empty), or once it
// advertises the spec's devices (`before`: what it reported first).
api::SriovNodeStateStatus agentStatus(const host::Topology& topology,
                                      const api::SriovNodeStateStatus& before,
                                      const api::SriovNodeStateSpec& spec);

// A scratch directory for fixture trees: in /dev/shm when there is one.
std::string scratchDir(const std::string& name);

}  // namespace sriovdra::bench
