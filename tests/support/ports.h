#pragma once
// Loopback ports for the servers a test starts (control plane, components under test).

namespace sriovdra::testing {

// A loopback port nothing listens on now and that this process has not handed out before.
// Throws std::runtime_error when none can be found.
int freePort();

}  // namespace sriovdra::testing
