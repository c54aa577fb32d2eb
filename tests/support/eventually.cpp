#include "support/eventually.h"

#include <thread>

#include <catch2/catch.hpp>

namespace sriovdra::testing {

void eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout,
                const std::function<std::string()>& describe) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) {
      FAIL("condition not reached within " << timeout.count() << " ms: " << describe());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace sriovdra::testing
