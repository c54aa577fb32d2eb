// Catch2 entry point for every test binary. `-v N` style verbosity comes from SRIOV_DRA_TEST_V.
#define CATCH_CONFIG_RUNNER
#include <csignal>
#include <cstdlib>

#include <catch2/catch.hpp>

#include "base/log.h"

int main(int argc, char* argv[]) {
  std::signal(SIGPIPE, SIG_IGN);
  if (const char* v = std::getenv("SRIOV_DRA_TEST_V"); v != nullptr) {
    sriovdra::log::setVerbosity(std::atoi(v));
  }
  return Catch::Session().run(argc, argv);
}
