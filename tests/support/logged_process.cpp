#include "support/logged_process.h"

#include <catch2/catch.hpp>

namespace sriovdra::testing {

ChildProcess spawnLogged(std::vector<std::string> argv,
                         std::vector<std::pair<std::string, std::string>> env,
                         const std::string& log) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.env = std::move(env);
  spec.stdout_path = log;
  spec.stderr_path = log;
  spec.kill_with_parent = true;
  auto child = ChildProcess::spawn(spec);
  REQUIRE(child.ok());
  return std::move(*child);
}

}  // namespace sriovdra::testing
