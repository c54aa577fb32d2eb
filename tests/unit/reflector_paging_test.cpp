#include <catch2/catch.hpp>

#include "kube/reflector.h"

using sriovdra::kube::nextPageLimit;

TEST_CASE("a list's pages hold as many objects as fit their byte budget, within the count limit",
          "[reflector][unit]") {
  struct Case {
    const char* name;
    size_t objects;
    size_t bytes;
    size_t page_bytes;
    int64_t max;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"small objects: the count limit", 16, size_t{16} * 1500, 4u << 20, 500, 500},
      {"30 KiB objects: 136 per 4 MiB", 16, size_t{16} * 30 * 1024, 4u << 20, 500, 136},
      {"1.5 MiB objects: two per page", 16, size_t{16} * 1536 * 1024, 4u << 20, 500, 2},
      {"objects over the budget: still one per page", 3, size_t{3} * (8u << 20), 4u << 20, 500, 1},
      {"nothing seen yet: the count limit", 0, 0, 4u << 20, 500, 500},
      {"an empty page: the count limit", 4, 0, 4u << 20, 500, 500},
      {"a count limit of one stays one", 16, 16, 4u << 20, 1, 1},
      {"a count limit below one is one", 16, 16, 4u << 20, 0, 1},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(nextPageLimit(c.objects, c.bytes, c.page_bytes, c.max) == c.want);
  }
}
