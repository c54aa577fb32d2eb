// Catch2 entry point for every test binary. `-v N` style verbosity comes from SRIOV_DRA_TEST_V.
// A binary whose cases all passed but some skipped a check exits with kSkipExitCode (skip.h).
#define CATCH_CONFIG_RUNNER
#include <csignal>
#include <cstdlib>

#include <catch2/catch.hpp>

#include "base/log.h"
#include "support/skip.h"

int main(int argc, char* argv[]) {
  std::signal(SIGPIPE, SIG_IGN);
  if (const char* v = std::getenv("SRIOV_DRA_TEST_V"); v != nullptr) {
    sriovdra::log::setVerbosity(static_cast<int>(std::strtol(v, nullptr, 10)));
  }
  int failed = Catch::Session().run(argc, argv);
  if (failed == 0 && sriovdra::testing::skipped()) return sriovdra::testing::kSkipExitCode;
  return failed;
}
