#include <catch2/catch.hpp>

#include "host/pci.h"

using sriovdra::host::PciRun;

namespace {

// The run made of `addresses`, and how many joined it.
std::pair<PciRun, size_t> runOf(const std::vector<std::string>& addresses) {
  PciRun run;
  size_t joined = 0;
  for (const auto& a : addresses) joined += run.extend(a) ? 1 : 0;
  return {run, joined};
}

}  // namespace

TEST_CASE("evenly spaced PCI addresses make one run that gives them back", "[pci][unit]") {
  struct Case {
    const char* name;
    std::vector<std::string> addresses;
    size_t joined;  // the first `joined` addresses make the run
  };
  const std::vector<Case> cases = {
      {"VFs at stride 1 across a device boundary",
       {"0000:3b:01.6", "0000:3b:01.7", "0000:3b:02.0", "0000:3b:02.1"},
       4},
      {"igb's VFs at offset 128, stride 2", {"0000:01:10.0", "0000:01:10.2", "0000:01:10.4"}, 3},
      {"VFs across a bus boundary", {"0000:10:1f.7", "0000:11:00.0"}, 2},
      {"a gap ends the run", {"0000:3b:01.0", "0000:3b:01.1", "0000:3b:01.3"}, 2},
      {"a lower address ends the run", {"0000:3b:01.1", "0000:3b:01.0"}, 1},
      {"the same address twice ends the run", {"0000:3b:01.1", "0000:3b:01.1"}, 1},
      {"another domain ends the run", {"0000:3b:01.0", "0001:3b:01.1"}, 1},
      {"upper case is not canonical", {"0000:3B:01.0"}, 0},
      {"not an address", {"gpu-0"}, 0},
      {"a function past 7 is not an address", {"0000:3b:01.8"}, 0},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto [run, joined] = runOf(c.addresses);
    CHECK(joined == c.joined);
    REQUIRE(run.size() == c.joined);
    for (uint32_t i = 0; i < run.size(); ++i) {
      CHECK(run.at(i) == c.addresses[i]);
      CHECK(run.indexOf(c.addresses[i]) == std::optional<uint32_t>(i));
    }
  }
}

TEST_CASE("a run knows which addresses it holds", "[pci][unit]") {
  auto [run, joined] = runOf({"0000:01:10.0", "0000:01:10.2", "0000:01:10.4"});
  REQUIRE(joined == 3);
  CHECK(run.indexOf("0000:01:10.4") == std::optional<uint32_t>(2));
  CHECK_FALSE(run.indexOf("0000:01:10.1"));  // between two of its addresses
  CHECK_FALSE(run.indexOf("0000:01:10.6"));  // the next one, not added
  CHECK_FALSE(run.indexOf("0000:01:0f.6"));  // before the first
  CHECK_FALSE(run.indexOf("0001:01:10.0"));  // another domain
  CHECK_FALSE(run.indexOf("0000:01:10.0 "));
  CHECK_FALSE(PciRun().indexOf("0000:01:10.0"));
  auto [one, n] = runOf({"0000:01:10.0"});
  CHECK(one.indexOf("0000:01:10.0") == std::optional<uint32_t>(0));
  CHECK_FALSE(one.indexOf("0000:01:10.1"));
}
