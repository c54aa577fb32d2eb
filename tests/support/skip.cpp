#include "support/skip.h"

#include <atomic>

#include <catch2/catch.hpp>
#include <unistd.h>

namespace sriovdra::testing {
namespace {

std::atomic<bool> any_skipped{false};

}  // namespace

void skip(const std::string& why) {
  any_skipped = true;
  WARN("skipped: " << why);
}

bool skipped() { return any_skipped; }

bool rootOr(const std::string& what) {
  if (::geteuid() == 0) return true;
  skip("not root: " + what + " did not run (scripts/test.sh runs as root)");
  return false;
}

}  // namespace sriovdra::testing
