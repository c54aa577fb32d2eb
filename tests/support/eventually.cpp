#include "support/eventually.h"

#include <catch2/catch.hpp>

#include "support/poll.h"

namespace sriovdra::testing {

void eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout,
                const std::function<std::string()>& describe) {
  if (!pollUntil(cond, timeout)) {
    FAIL("condition not reached within " << timeout.count() << " ms: " << describe());
  }
}

}  // namespace sriovdra::testing
