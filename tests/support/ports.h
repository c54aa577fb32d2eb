#pragma once
// Loopback ports for the servers a test starts (control plane, components under test), and this
// machine's address for what must be reached from outside the host's loopback (pods).
#include <string>

namespace sriovdra::testing {

// A loopback port nothing listens on now and that this process has not handed out before.
// Throws std::runtime_error when none can be found.
int freePort();

// The IPv4 address of the interface of the default route (eth0's here); throws when none.
std::string hostAddress();

}  // namespace sriovdra::testing
