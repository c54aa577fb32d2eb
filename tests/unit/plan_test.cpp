// planHost(): what the agent does to match the spec, and what it refuses to do.
#include "host/plan.h"

#include <catch2/catch.hpp>

#include "support/policy_fixtures.h"

using namespace sriovdra;

namespace {

host::Topology topology(int vfs_per_pf) {
  auto status = testing::fixture::a100Status(vfs_per_pf);
  return {status.interfaces, {}, {}, {}};
}

api::Interface itf(const std::string& pci, int64_t vfs, std::string device_type = "netdevice",
                   std::string range = "") {
  if (range.empty()) range = "0-" + std::to_string(vfs - 1);
  return {pci, "", vfs, 0, "ib", "", false, {{"r", device_type, range, "p", 0, true, ""}}};
}

std::vector<std::string> described(const host::Plan& p) {
  std::vector<std::string> out;
  for (const auto& a : p.actions) out.push_back(a.describe());
  return out;
}

}  // namespace

TEST_CASE("changing a VF count writes 0 first", "[host][plan][unit]") {
  auto plan = host::planHost({{itf("0000:0e:00.0", 4)}, {}}, topology(1), {}, {});
  CHECK(described(plan) == std::vector<std::string>{"set sriov_numvfs of 0000:0e:00.0 to 0",
                                                    "set sriov_numvfs of 0000:0e:00.0 to 4"});
  CHECK(plan.configured == std::set<std::string>{"0000:0e:00.0"});
  CHECK(plan.destructive());
}

TEST_CASE("from 0 VFs the count is written at once", "[host][plan][unit]") {
  auto plan = host::planHost({{itf("0000:0e:00.0", 2)}, {}}, topology(0), {}, {});
  CHECK(described(plan) == std::vector<std::string>{"set sriov_numvfs of 0000:0e:00.0 to 2"});
  CHECK_FALSE(plan.destructive());  // creating VFs takes nothing from anyone
}

TEST_CASE("a matching host needs nothing; other PFs are left alone", "[host][plan][unit]") {
  auto plan = host::planHost({{itf("0000:0e:00.0", 1)}, {}}, topology(1), {}, {});
  CHECK(plan.empty());
  CHECK(plan.errors.empty());
}

TEST_CASE("VF groups put their VFs on the right driver", "[host][plan][unit]") {
  auto t = topology(4);
  api::Interface split{"0000:0e:00.0",
                       "",
                       4,
                       0,
                       "ib",
                       "",
                       false,
                       {{"kernel", "netdevice", "0-1", "a", 0, true, ""},
                        {"dpdk", "vfio-pci", "2-2", "b", 0, false, ""}}};
  auto plan = host::planHost({{split}, {}}, t, {}, {});
  CHECK(described(plan) ==
        std::vector<std::string>{"bind 0000:0e:00.3 to vfio-pci (from mlx5_core)"});
  CHECK(plan.destructive());  // a rebind takes the VF from whoever uses it
  t.pfs[0].vfs[2].driver = "vfio-pci";
  t.pfs[0].vfs[3].driver = "vfio-pci";  // VF 3 is in no group: left as it is
  CHECK(host::planHost({{split}, {}}, t, {}, {}).empty());
  t.pfs[0].vfs[0].driver = "";
  CHECK(described(host::planHost({{split}, {}}, t, {}, {})) ==
        std::vector<std::string>{"bind 0000:0e:00.1 to its default driver"});
}

TEST_CASE("the PF MTU is raised, never lowered", "[host][plan][unit]") {
  auto up = itf("0000:0e:00.0", 1);
  up.mtu = 4096;
  auto t = topology(1);
  t.pfs[0].mtu = 2048;
  CHECK(described(host::planHost({{up}, {}}, t, {}, {})) ==
        std::vector<std::string>{"set the MTU of ibp14s0 to 4096"});
  up.mtu = 1500;
  CHECK(host::planHost({{up}, {}}, t, {}, {}).empty());
}

TEST_CASE("PFs configured before and gone from the spec are reset; others never",
          "[host][plan][unit]") {
  auto plan = host::planHost({}, topology(1), {"0000:0e:00.0"}, {});
  CHECK(described(plan) == std::vector<std::string>{"set sriov_numvfs of 0000:0e:00.0 to 0"});
  CHECK(plan.configured.empty());
}

TEST_CASE("a PF with a VF prepared for a pod is not touched: Blocked with the claims",
          "[host][plan][unit]") {
  host::PreparedVfs prepared = {{"0000:0e:00.1", {"team-a/train-0"}}};
  auto plan = host::planHost({{itf("0000:0e:00.0", 4)}, {}}, topology(1), {}, prepared);
  CHECK(plan.actions.empty());
  REQUIRE(plan.blocked.size() == 1);
  CHECK(plan.blocked[0].claims == std::vector<std::string>{"team-a/train-0"});
  CHECK_THAT(plan.blocked[0].reason, Catch::Contains("from 1 to 4 would destroy them"));

  auto reset = host::planHost({}, topology(1), {"0000:0e:00.0"}, prepared);
  CHECK(reset.actions.empty());
  CHECK(reset.blocked.size() == 1);
  CHECK(reset.configured == std::set<std::string>{"0000:0e:00.0"});
}

TEST_CASE("impossible specs are errors, not actions", "[host][plan][unit]") {
  auto plan =
      host::planHost({{itf("0000:0e:00.0", 9), itf("0000:ff:00.0", 1)}, {}}, topology(0), {}, {});
  CHECK(plan.actions.empty());
  REQUIRE(plan.errors.size() == 2);
  CHECK_THAT(plan.errors[0], Catch::Contains("numVfs 9 exceeds sriov_totalvfs 8"));
  CHECK_THAT(plan.errors[1], Catch::Contains("0000:ff:00.0 from the spec is not on this node"));
  auto external = itf("0000:0e:00.0", 4);
  external.externally_managed = true;
  auto ext = host::planHost({{external}, {}}, topology(1), {}, {});
  CHECK(ext.actions.empty());
  CHECK_THAT(ext.errors.at(0), Catch::Contains("externally managed and has 1 VFs"));
}

TEST_CASE("a linkType the host does not have is an error, never ignored", "[host][plan][unit]") {
  auto eth = itf("0000:0e:00.0", 1);
  eth.link_type = "eth";  // the fixture's ports are InfiniBand
  auto plan = host::planHost({{eth}, {}}, topology(1), {}, {});
  REQUIRE(plan.errors.size() == 1);
  CHECK_THAT(plan.errors[0], Catch::Contains("linkType eth is asked, the port is IB") &&
                                 Catch::Contains("firmware setting"));
  CHECK(host::planHost({{itf("0000:0e:00.0", 1)}, {}}, topology(1), {}, {}).errors.empty());
}

TEST_CASE("an eSwitch mode change goes VFs to 0, mode, VFs back", "[host][plan][unit]") {
  struct Row {
    std::string name;
    int have_vfs;
    std::string have_mode;
    int64_t want_vfs;
    std::string want_mode;
    std::vector<std::string> expected;
  };
  const std::string pf = "0000:0e:00.0";
  std::vector<Row> rows = {
      {"legacy with VFs to switchdev",
       1,
       "legacy",
       4,
       "switchdev",
       {"set sriov_numvfs of " + pf + " to 0",
        "set the eSwitch mode of pci/" + pf + " to switchdev",
        "set sriov_numvfs of " + pf + " to 4"}},
      {"no VFs yet",
       0,
       "legacy",
       2,
       "switchdev",
       {"set the eSwitch mode of pci/" + pf + " to switchdev",
        "set sriov_numvfs of " + pf + " to 2"}},
      {"same count, only the mode",
       2,
       "legacy",
       2,
       "switchdev",
       {"set sriov_numvfs of " + pf + " to 0",
        "set the eSwitch mode of pci/" + pf + " to switchdev",
        "set sriov_numvfs of " + pf + " to 2"}},
      {"an empty eSwitchMode is legacy",
       2,
       "switchdev",
       2,
       "",
       {"set sriov_numvfs of " + pf + " to 0", "set the eSwitch mode of pci/" + pf + " to legacy",
        "set sriov_numvfs of " + pf + " to 2"}},
      {"to switchdev with 0 VFs",
       1,
       "legacy",
       0,
       "switchdev",
       {"set sriov_numvfs of " + pf + " to 0",
        "set the eSwitch mode of pci/" + pf + " to switchdev"}},
      {"already there", 2, "switchdev", 2, "switchdev", {}},
  };
  for (const auto& row : rows) {
    SECTION(row.name) {
      auto t = topology(row.have_vfs);
      t.pfs[0].eswitch_mode = row.have_mode;
      auto want = itf(pf, row.want_vfs, "netdevice", row.want_vfs > 0 ? "" : "0-0");
      want.eswitch_mode = row.want_mode;
      want.link_type = "";
      auto plan = host::planHost({{want}, {}}, t, {}, {});
      CHECK(plan.errors.empty());
      CHECK(described(plan) == row.expected);
    }
  }
}

TEST_CASE("an eSwitch mode change waits for VFs in use; an external PF's mode is only checked",
          "[host][plan][unit]") {
  auto t = topology(2);
  auto want = itf("0000:0e:00.0", 2);
  want.eswitch_mode = "switchdev";
  want.link_type = "";
  auto blocked = host::planHost({{want}, {}}, t, {}, {{t.pfs[0].vfs[1].pci_address, {"ns/c"}}});
  CHECK(blocked.actions.empty());
  REQUIRE(blocked.blocked.size() == 1);
  CHECK_THAT(blocked.blocked[0].reason, Catch::Contains("changing its eSwitch mode to switchdev "
                                                        "would destroy them"));
  want.externally_managed = true;
  auto ext = host::planHost({{want}, {}}, t, {}, {});
  CHECK(ext.actions.empty());
  REQUIRE(ext.errors.size() == 1);
  CHECK_THAT(ext.errors[0],
             Catch::Contains("externally managed and in eSwitch mode legacy, not the switchdev") &&
                 Catch::Contains("devlink dev eswitch set pci/0000:0e:00.0 mode switchdev"));
}

TEST_CASE("a switchdev PF that leaves the spec goes back to 0 VFs and legacy",
          "[host][plan][unit]") {
  auto t = topology(2);
  t.pfs[0].eswitch_mode = "switchdev";
  auto plan = host::planHost({}, t, {"0000:0e:00.0"}, {});
  CHECK(described(plan) ==
        std::vector<std::string>{"set sriov_numvfs of 0000:0e:00.0 to 0",
                                 "set the eSwitch mode of pci/0000:0e:00.0 to legacy"});
  t.pfs[0].num_vfs = 0;
  t.pfs[0].vfs.clear();
  CHECK(described(host::planHost({}, t, {"0000:0e:00.0"}, {})) ==
        std::vector<std::string>{"set the eSwitch mode of pci/0000:0e:00.0 to legacy"});
}
