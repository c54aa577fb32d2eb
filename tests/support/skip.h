#pragma once
// Checks that cannot run on this machine are reported to ctest as skipped, never as passed:
// skip(why) notes it (a Catch2 warning says what did not run), the test case returns, the other
// cases of the binary still run, and the binary exits with kSkipExitCode when nothing failed.
// Every test is registered with SKIP_RETURN_CODE kSkipExitCode (cmake/SriovDra.cmake). Catch2 v2
// has no skip of its own.
#include <string>

namespace sriovdra::testing {

inline constexpr int kSkipExitCode = 77;

void skip(const std::string& why);
// Whether skip() was called in this process.
bool skipped();
// True when running as root; otherwise skip("not root: <what> did not run ...").
bool rootOr(const std::string& what);

}  // namespace sriovdra::testing
