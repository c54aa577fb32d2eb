// The reboot for firmware changes (host/reboot.h): what the agent does at each step, the record
// it keeps, and the command it runs.
#include "host/reboot.h"

#include <filesystem>

#include <catch2/catch.hpp>

#include "base/files.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using host::RebootStep;

TEST_CASE("the agent reboots once per grant, and only for the generation granted",
          "[host][firmware][unit]") {
  const host::RebootRecord before_g7{"7", "boot-a"};
  struct Row {
    const char* name;
    host::RebootInput in;
    RebootStep want;
  };
  const std::vector<Row> rows = {
      {"nothing waits", {false, "7", "7", "boot-a", std::nullopt, true}, RebootStep::kNone},
      {"nothing waits, an old record",
       {false, "", "7", "boot-b", before_g7, true},
       RebootStep::kNone},
      {"not granted", {true, "", "7", "boot-a", std::nullopt, true}, RebootStep::kAwaitGrant},
      {"granted for an older generation",
       {true, "6", "7", "boot-a", std::nullopt, true},
       RebootStep::kAwaitGrant},
      {"granted", {true, "7", "7", "boot-a", std::nullopt, true}, RebootStep::kReboot},
      {"granted, no way to reboot",
       {true, "7", "7", "boot-a", std::nullopt, false},
       RebootStep::kAwaitPerson},
      {"started in this boot (the agent restarted)",
       {true, "7", "7", "boot-a", before_g7, true},
       RebootStep::kRebooting},
      {"rebooted, the values still wait",
       {true, "7", "7", "boot-b", before_g7, true},
       RebootStep::kNotInEffect},
      {"a record of an older grant",
       {true, "8", "8", "boot-b", before_g7, true},
       RebootStep::kReboot},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    CHECK(host::rebootStep(row.in) == row.want);
  }
  CHECK(host::rebootStepMessage(RebootStep::kNone).empty());
  CHECK_THAT(host::rebootStepMessage(RebootStep::kAwaitPerson),
             Catch::Contains("no --reboot-command"));
}

TEST_CASE("the reboot record reads back what was written, and nothing else",
          "[host][firmware][unit]") {
  host::RebootRecord r{"12", "0f1e2d3c-0000-4000-8000-000000000002"};
  CHECK(host::decodeRebootRecord(host::encodeRebootRecord(r)) == r);
  for (const char* bad : {"", "{", "[]", R"({"grant":"1"})", R"({"grant":1,"bootID":"b"})",
                          R"({"grant":"1","bootID":null})"}) {
    INFO(bad);
    CHECK_FALSE(host::decodeRebootRecord(bad).has_value());
  }
}

TEST_CASE("the reboot command runs as argv, and its failures say what failed",
          "[host][firmware][unit]") {
  testing::TempDir dir;
  const std::string marker = dir.path() + "/rebooted; touch injected";
  REQUIRE(host::commandRebooter({"touch", marker})->reboot().isOk());
  CHECK(std::filesystem::exists(marker));  // one argument, never a shell's words
  CHECK_FALSE(std::filesystem::exists("injected"));

  Status failed = host::commandRebooter({"sh", "-c", "echo no permission >&2; exit 3"})->reboot();
  CHECK(failed.code() == Code::kInternal);
  CHECK_THAT(failed.message(), Catch::Contains("exited with 3: no permission"));
  Status missing = host::commandRebooter({"/nonexistent/systemctl", "reboot"})->reboot();
  CHECK(missing.code() == Code::kNotFound);
  CHECK_THAT(missing.message(), Catch::Contains("--reboot-command"));
  CHECK(host::commandRebooter({})->reboot().code() == Code::kInvalidArgument);
}
