// The offline `sriov-dra` subcommands as a user runs them: the built binary, its exit codes, and
// output another program can read.
#include <sstream>

#include <catch2/catch.hpp>

#include "base/json.h"
#include "base/process.h"
#include "support/operator_process.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;

namespace {

ProcessOutput sriovDra(const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {testing::binDir() + "/sriov-dra"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  auto out = runProcess(spec, 60s);
  REQUIRE(out.ok());
  return *out;
}

std::vector<std::vector<std::string>> csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) cells.push_back(f);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST_CASE("sriov-dra fixture writes a server that sriov-dra discover reads back", "[cli][host]") {
  testing::TempDir dir;
  std::string root = dir.path() + "/a100";
  auto wrote = sriovDra({"fixture", "--topology", "a100-reference", "--out", root});
  CHECK(wrote.exit_code == 0);
  CHECK_THAT(wrote.out, Catch::Contains("--sysfs-root " + root));
  auto discovered = sriovDra({"discover", "--sysfs-root", root, "-o", "json"});
  REQUIRE(discovered.exit_code == 0);
  auto doc = json::parse(discovered.out);
  REQUIRE(doc.ok());
  CHECK((*doc)["interfaces"].Size() == 8);
  CHECK((*doc)["gpus"].Size() == 8);
  CHECK((*doc)["pcieRoots"].Size() == 4);

  // Writing over an existing tree, or an unknown server, fails with a message and exit code 1.
  auto again = sriovDra({"fixture", "--topology", "a100-reference", "--out", root});
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.err, Catch::Contains("already holds a sys/ tree"));
  auto unknown = sriovDra({"fixture", "--topology", "nope", "--out", dir.path() + "/x"});
  CHECK(unknown.exit_code == 1);
  // Every server the message offers can be written.
  std::string known = unknown.err.substr(unknown.err.find("known: ") + 7);
  std::istringstream names(known);
  for (std::string name; std::getline(names, name, ',');) {
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(" \n") + 1);
    INFO(name);
    CHECK(sriovDra({"fixture", "--topology", name, "--out", dir.path() + "/" + name}).exit_code ==
          0);
  }
  auto missing = sriovDra({"discover", "--sysfs-root", dir.path() + "/none"});
  CHECK(missing.exit_code != 0);
  CHECK_THAT(missing.err, Catch::Contains("--sysfs-root"));
}

TEST_CASE("sriov-dra simulate prints the placement study as CSV a spreadsheet reads",
          "[cli][host]") {
  auto out = sriovDra({"simulate", "--nodes", "2", "--pods", "16", "-o", "csv"});
  REQUIRE(out.exit_code == 0);
  auto rows = csv(out.out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0][0] == "strategy");
  CHECK(rows[3][0] == "dra-pcieRoot");
  CHECK(rows[3][1] == "16");  // scheduled
  CHECK(rows[3][3] == "16");  // same_switch: every DRA pair aligned
  for (size_t r = 1; r < rows.size(); ++r) CHECK(rows[r][2] == "0");  // nothing pending
  auto bad = sriovDra({"simulate", "--nodes", "0"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--nodes"));
}
