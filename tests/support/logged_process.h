#pragma once
// An upstream program the tests run in the background (OLM, opm, the SR-IOV network operator),
// its stdout and stderr appended to one log file, killed when the spawning thread dies.
#include <string>
#include <utility>
#include <vector>

#include "base/process.h"

namespace sriovdra::testing {

// Fails the test (REQUIRE) when it cannot be started.
ChildProcess spawnLogged(std::vector<std::string> argv,
                         std::vector<std::pair<std::string, std::string>> env,
                         const std::string& log);

}  // namespace sriovdra::testing
