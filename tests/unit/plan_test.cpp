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

TEST_CASE("a VF whose netdev is in a pod's namespace is left as it is and blocks its PF",
          "[host][plan][unit]") {
  // Taken over from the SR-IOV network operator: a pod it gave VF 0 to runs; no claim of ours.
  auto t = topology(2);
  t.pfs[0].vfs[0].assigned = api::kAssignedNetns;
  t.pfs[0].vfs[0].driver = "";  // would be rebound, were it free
  t.pfs[0].vfs[1].driver = "";
  auto plan = host::planHost({{itf("0000:0e:00.0", 2)}, {}}, t, {}, {});
  CHECK(described(plan) == std::vector<std::string>{"bind 0000:0e:00.2 to its default driver"});
  auto count = host::planHost({{itf("0000:0e:00.0", 4)}, {}}, t, {}, {});
  CHECK(count.actions.empty());
  REQUIRE(count.blocked.size() == 1);
  CHECK(count.blocked[0].claims ==
        std::vector<std::string>{"VF 0000:0e:00.1 (" + host::assignedHolder("netns") + ")"});
  CHECK_THAT(count.blocked[0].reason, Catch::Contains("has VFs in use"));
  // A claim of ours that holds it (our own pod's netdev is in its namespace too) is named as such.
  auto ours =
      host::planHost({{itf("0000:0e:00.0", 4)}, {}}, t, {}, {{"0000:0e:00.1", {"team-a/train-0"}}});
  CHECK(ours.blocked.at(0).claims == std::vector<std::string>{"team-a/train-0"});
  // Leaving the spec does not reset it either.
  auto reset = host::planHost({}, t, {"0000:0e:00.0"}, {});
  CHECK(reset.actions.empty());
  CHECK(reset.blocked.size() == 1);
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

TEST_CASE("InfiniBand VFs get their GUID, then their driver again", "[host][plan][unit]") {
  host::GuidAssigner derived("node-a", std::optional<std::vector<host::GuidPoolEntry>>());
  auto t = topology(2);
  const auto& pf = t.pfs[0];
  std::string want0 = host::guidText(derived.guidFor(pf, 0).value());
  std::string want1 = host::guidText(derived.guidFor(pf, 1).value());
  api::Interface split{pf.pci_address,
                       "",
                       2,
                       0,
                       "ib",
                       "",
                       false,
                       {{"kernel", "netdevice", "0-0", "a", 0, true, ""},
                        {"user", "vfio-pci", "1-1", "b", 0, true, ""}}};
  struct Row {
    std::string name;
    std::vector<std::string> guids;  // reported per VF ("" = the driver reports none)
    std::string vf1_driver;
    host::PreparedVfs prepared;
    std::vector<std::string> want;
  };
  const std::string set0 = "set the GUID of VF 0 of " + pf.name + " to " + want0;
  const std::string set1 = "set the GUID of VF 1 of " + pf.name + " to " + want1;
  const std::string rebind0 =
      "bind " + pf.vfs[0].pci_address + " to its default driver (from mlx5_core)";
  const std::vector<Row> rows = {
      {"fresh VFs: GUIDs set, the netdevice VF rebound, the vfio-pci one not",
       {"00:00:00:00:00:00:00:00", "00:00:00:00:00:00:00:00"},
       "vfio-pci",
       {},
       {set0, rebind0, set1}},
      {"GUIDs already right (after an agent restart): nothing", {want0, want1}, "vfio-pci", {}, {}},
      {"no GUIDs reported by the driver: left alone", {"", ""}, "vfio-pci", {}, {}},
      {"a VF prepared for a pod is not touched, also with another GUID than the assigner's",
       {"02:00:00:00:00:00:00:99", want1},
       "vfio-pci",
       {{pf.vfs[0].pci_address, {"ns/claim"}}},
       {}},
      {"a prepared VF without a GUID (made again by a reboot) gets its GUID: no pod can use it",
       {"00:00:00:00:00:00:00:00", want1},
       "vfio-pci",
       {{pf.vfs[0].pci_address, {"ns/claim"}}},
       {set0, rebind0}},
      {"the driver first, the GUID on the next pass",
       {"00:00:00:00:00:00:00:00", "00:00:00:00:00:00:00:00"},
       "mlx5_core",
       {},
       {set0, rebind0, "bind " + pf.vfs[1].pci_address + " to vfio-pci (from mlx5_core)"}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto topo = t;
    for (size_t i = 0; i < 2; ++i) {
      topo.pfs[0].vfs[i].guid = row.guids[i];
      topo.pfs[0].vfs[i].name = pf.name + "v" + std::to_string(i);  // netdevs on the host
    }
    topo.pfs[0].vfs[1].driver = row.vf1_driver;
    auto plan = host::planHost({{split}, {}}, topo, {}, row.prepared, &derived);
    CHECK(described(plan) == row.want);
    CHECK(plan.errors.empty());
  }
  SECTION("a prepared VF without a GUID and without a netdev (on another driver) is not touched") {
    auto topo = t;
    for (auto& vf : topo.pfs[0].vfs) vf.guid = "00:00:00:00:00:00:00:00";
    topo.pfs[0].vfs[1].driver = "vfio-pci";
    topo.pfs[0].vfs[0].name = "";
    auto plan = host::planHost({{split}, {}}, topo, {}, {{pf.vfs[0].pci_address, {"ns/claim"}}},
                               &derived);
    CHECK(described(plan) == std::vector<std::string>{set1});
  }
  SECTION("a prepared VF without a GUID whose netdev is in a pod is not touched") {
    auto topo = t;
    for (auto& vf : topo.pfs[0].vfs) vf.guid = "00:00:00:00:00:00:00:00";
    topo.pfs[0].vfs[1].driver = "vfio-pci";
    topo.pfs[0].vfs[0].assigned = "ns/pod";
    auto plan = host::planHost({{split}, {}}, topo, {}, {{pf.vfs[0].pci_address, {"ns/claim"}}},
                               &derived);
    CHECK(described(plan) == std::vector<std::string>{set1});
  }
  SECTION("a pool without a GUID for the VF is an error for the PF") {
    auto topo = t;
    for (auto& vf : topo.pfs[0].vfs) vf.guid = "00:00:00:00:00:00:00:00";
    topo.pfs[0].vfs[1].driver = "vfio-pci";
    host::GuidAssigner pool("node-a", std::optional<std::vector<host::GuidPoolEntry>>(
                                          {{pf.pci_address, "", {0x0200000000000010}, 0, 0}}));
    auto plan = host::planHost({{split}, {}}, topo, {}, {}, &pool);
    CHECK(described(plan) ==
          std::vector<std::string>{
              "set the GUID of VF 0 of " + pf.name + " to 02:00:00:00:00:00:00:10", rebind0});
    REQUIRE(plan.errors.size() == 1);
    CHECK_THAT(
        plan.errors[0],
        Catch::EndsWith("VF 1: the IB GUID pool has no GUID left for VF 1 of " + pf.pci_address));
  }
}

TEST_CASE("IB GUID pools in the SR-IOV network operator's format", "[host][plan][unit]") {
  auto pool = host::parseGuidPool(R"([
    {"pciAddress": "0000:0e:00.0", "guids": ["02:00:00:00:00:00:00:01", "02:00:00:00:00:00:00:02"]},
    {"pfGuid": "00:02:c9:03:00:00:00:0e", "rangeStart": "02:00:00:00:00:00:01:00",
     "rangeEnd": "02:00:00:00:00:00:01:01"}])");
  REQUIRE(pool.ok());
  host::GuidAssigner assign("node-a", std::optional(*pool));
  api::InterfaceExt by_pci;
  by_pci.pci_address = "0000:0e:00.0";
  CHECK(assign.guidFor(by_pci, 1).value() == 0x0200000000000002);
  CHECK_FALSE(assign.guidFor(by_pci, 2).ok());
  api::InterfaceExt by_guid;
  by_guid.pci_address = "0000:4b:00.0";
  by_guid.mac = "00:00:10:49:fe:80:00:00:00:00:00:00:00:02:c9:03:00:00:00:0e";
  CHECK(assign.guidFor(by_guid, 1).value() == 0x0200000000000101);
  CHECK_THAT(assign.guidFor(by_guid, 2).status().message(), Catch::Contains("no GUID left"));
  api::InterfaceExt other;
  other.pci_address = "0000:4c:00.0";
  CHECK_THAT(assign.guidFor(other, 0).status().message(),
             Catch::Contains("the IB GUID pool has no entry for 0000:4c:00.0"));

  struct Bad {
    std::string json, error;
  };
  const std::vector<Bad> bad = {
      {"{}", "not a JSON list"},
      {"[1]", "entry 0: not an object"},
      {R"([{"guids": ["02:00:00:00:00:00:00:01"]}])", "either pciAddress or pfGuid"},
      {R"([{"pciAddress": "a", "pfGuid": "02:00:00:00:00:00:00:01", "guids": []}])",
       "either pciAddress or pfGuid"},
      {R"([{"pciAddress": "a"}])", "either guids or rangeStart and rangeEnd"},
      {R"([{"pciAddress": "a", "rangeStart": "02:00:00:00:00:00:00:01"}])",
       "both rangeStart and rangeEnd"},
      {R"([{"pciAddress": "a", "rangeStart": "02:00:00:00:00:00:00:02", "rangeEnd": "02:00:00:00:00:00:00:01"}])",
       "rangeEnd must be greater than rangeStart"},
      {R"([{"pciAddress": "a", "guids": ["02:00"]}])", "guids: GUID \"02:00\""},
      {"[", "IB GUID pool: "},
  };
  for (const auto& b : bad) {
    INFO(b.json);
    auto got = host::parseGuidPool(b.json);
    REQUIRE_FALSE(got.ok());
    CHECK_THAT(got.status().message(), Catch::Contains(b.error));
  }

  // Without a pool: the same GUID for the same node, PF and VF, a different one for another;
  // always locally administered unicast. An unusable pool makes every GUID that error.
  host::GuidAssigner a("node-a", std::optional<std::vector<host::GuidPoolEntry>>());
  host::GuidAssigner again("node-a", std::optional<std::vector<host::GuidPoolEntry>>());
  host::GuidAssigner b("node-b", std::optional<std::vector<host::GuidPoolEntry>>());
  uint64_t g = a.guidFor(by_pci, 0).value();
  CHECK(g == again.guidFor(by_pci, 0).value());
  CHECK(g != a.guidFor(by_pci, 1).value());
  CHECK(g != b.guidFor(by_pci, 0).value());
  CHECK((g >> 56 & 0x03) == 0x02);
  host::GuidAssigner broken("node-a", Status(Code::kInvalidArgument, "guids: not a JSON list"));
  CHECK(broken.guidFor(by_pci, 0).status().message() == "guids: not a JSON list");
}

TEST_CASE(
    "Mellanox firmware: what the spec needs is set for the next boot; its PFs await the reboot",
    "[host][plan][firmware][unit]") {
  auto t = topology(0);  // ConnectX-6 ports, sriov_totalvfs 8, InfiniBand
  host::MlxFirmware eight{{true, 8, "IB", ""}, {true, 8, "IB", ""}};
  const std::map<std::string, host::MlxFirmware> read = {{"0000:0e:00", eight}};
  api::SriovNodeStateSpec spec{{itf("0000:0e:00.0", 16)}, {}};
  CHECK(host::firmwareToRead(spec, t) ==
        std::map<std::string, std::string>{{"0000:0e:00", "0000:0e:00.0"}});
  auto fw = host::planFirmware(spec, t, read);
  CHECK(fw.changes ==
        std::map<std::string, host::MlxChanges>{{"0000:0e:00.0", {{"NUM_OF_VFS", "16"}}}});
  CHECK(fw.awaiting_reboot == std::set<std::string>{"0000:0e:00.0"});
  REQUIRE(fw.reboot_reasons.size() == 1);
  CHECK(fw.reboot_reasons[0] ==
        "NIC 0000:0e:00 (0000:0e:00.0): firmware NUM_OF_VFS 8 -> 16 takes effect after a reboot");
  CHECK(fw.errors.empty());
  // The PF waits: no "exceeds sriov_totalvfs" error, no action, still configured by the agent.
  auto plan = host::planHost(spec, t, {}, {}, nullptr, fw.awaiting_reboot);
  CHECK(plan.errors.empty());
  CHECK(plan.actions.empty());
  CHECK(plan.configured.count("0000:0e:00.0") == 1);

  // Written already: not again, and still waiting. After the reboot: nothing.
  host::MlxFirmware written{eight.current, {true, 16, "IB", ""}};
  auto again = host::planFirmware(spec, t, {{"0000:0e:00", written}});
  CHECK(again.changes.empty());
  CHECK(again.awaiting_reboot.size() == 1);
  host::MlxFirmware rebooted{written.next, written.next};
  auto after = host::planFirmware(spec, t, {{"0000:0e:00", rebooted}});
  CHECK(after.changes.empty());
  CHECK(after.awaiting_reboot.empty());
  CHECK(after.reboot_reasons.empty());

  // Never lowered: a NIC that offers more keeps it.
  host::MlxFirmware many{{true, 64, "IB", ""}, {true, 64, "IB", ""}};
  CHECK(host::planFirmware({{itf("0000:0e:00.0", 4)}, {}}, t, {{"0000:0e:00", many}})
            .changes.empty());
}

TEST_CASE("Mellanox firmware: SR-IOV off, another link type, a NIC that cannot change it",
          "[host][plan][firmware][unit]") {
  auto t = topology(0);
  host::MlxFirmware off{{false, 0, "IB", ""}, {false, 0, "IB", ""}};
  auto eth = itf("0000:0e:00.0", 4);
  eth.link_type = "eth";
  auto fw = host::planFirmware({{eth}, {}}, t, {{"0000:0e:00", off}});
  CHECK(fw.changes == std::map<std::string, host::MlxChanges>{
                          {"0000:0e:00.0",
                           {{"LINK_TYPE_P1", "ETH"}, {"NUM_OF_VFS", "4"}, {"SRIOV_EN", "True"}}}});
  REQUIRE(fw.reboot_reasons.size() == 1);
  CHECK_THAT(fw.reboot_reasons[0], Catch::Contains("LINK_TYPE_P1 IB -> ETH, SRIOV_EN False -> "
                                                   "True, NUM_OF_VFS 0 -> 4"));
  // Firmware without LINK_TYPE_P1 (an Ethernet-only or fixed-protocol card): upstream's words.
  host::MlxFirmware fixed{{true, 8, "", ""}, {true, 8, "", ""}};
  auto refused = host::planFirmware({{eth}, {}}, t, {{"0000:0e:00", fixed}});
  REQUIRE(refused.errors.size() == 1);
  CHECK_THAT(refused.errors[0], Catch::Contains("does not support link type change") &&
                                    Catch::Contains("no LINK_TYPE_P1"));
  CHECK(refused.awaiting_reboot.empty());

  // Never read: other vendors, externally managed PFs, PFs the firmware already serves.
  auto intel = host::Topology{testing::fixture::e810Status(0).interfaces, {}, {}, {}};
  CHECK(host::firmwareToRead({{itf(intel.pfs[0].pci_address, 65)}, {}}, intel).empty());
  auto external = itf("0000:0e:00.0", 16);
  external.externally_managed = true;
  CHECK(host::firmwareToRead({{external}, {}}, t).empty());
  CHECK(host::firmwareToRead({{itf("0000:0e:00.0", 8)}, {}}, t).empty());
}

TEST_CASE("Mellanox firmware: both ports of a NIC share NUM_OF_VFS, the larger count wins",
          "[host][plan][firmware][unit]") {
  auto t = topology(0);
  auto second = t.pfs[0];
  second.pci_address = "0000:0e:00.1";
  second.name = "ibp14s0f1";
  t.pfs.push_back(second);
  api::SriovNodeStateSpec spec{{itf("0000:0e:00.0", 4), itf("0000:0e:00.1", 12)}, {}};
  CHECK(host::firmwareToRead(spec, t).size() == 1);  // one NIC, read once
  host::MlxFirmware eight{{true, 8, "IB", "IB"}, {true, 8, "IB", "IB"}};
  auto fw = host::planFirmware(spec, t, {{"0000:0e:00", eight}});
  CHECK(fw.changes ==
        std::map<std::string, host::MlxChanges>{{"0000:0e:00.0", {{"NUM_OF_VFS", "12"}}}});
  CHECK(fw.awaiting_reboot == std::set<std::string>{"0000:0e:00.0", "0000:0e:00.1"});
}

TEST_CASE("mstconfig's query output, as upstream's tests show it", "[host][firmware][unit]") {
  const std::string out = R"(
Device #1:
----------

Device type:        ConnectX4LX
Device:             19:00.0

Configurations:                                     Default              Current              Next Boot
        MEMIC_BAR_SIZE                              0                    0                    0
*       NUM_OF_VFS                                  8                    4                    16
        NUM_OF_PF                                   2                    2                    2
*       SRIOV_EN                                    True(1)              False(0)             True(1)
        LINK_TYPE_P1                                ETH(2)               ETH(2)               IB(1)
        LINK_TYPE_P2                                ETH(2)               ETH(2)               ETH(2)
        PCI_ATOMIC_MODE                             PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0) PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0) PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)
)";
  auto fw = host::parseMstconfigQuery(out);
  REQUIRE(fw.ok());
  CHECK(fw->current == host::MlxSettings{false, 4, "ETH", "ETH"});
  CHECK(fw->next == host::MlxSettings{true, 16, "IB", "ETH"});
  // No link type settings: a NIC whose protocol is fixed.
  auto fixed = host::parseMstconfigQuery("NUM_OF_VFS 8 8 8\nSRIOV_EN True(1) True(1) True(1)\n");
  REQUIRE(fixed.ok());
  CHECK(fixed->current.link_type_p1.empty());
  for (const char* bad :
       {"", "NUM_OF_VFS 8 8 8\n", "NUM_OF_VFS 8 x 8\nSRIOV_EN True True True\n",
        "NUM_OF_VFS 8 8\nSRIOV_EN True True True\n", "NUM_OF_VFS 8 8 8\nSRIOV_EN True Maybe True\n",
        "NUM_OF_VFS 8 -1 8\nSRIOV_EN True True True\n"}) {
    INFO(bad);
    auto r = host::parseMstconfigQuery(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
  }
}

TEST_CASE("a PF of the spec that is down is brought up", "[host][plan][unit]") {
  auto t = topology(1);
  t.pfs[0].link_admin_state = "down";
  CHECK(described(host::planHost({{itf("0000:0e:00.0", 1)}, {}}, t, {}, {})) ==
        std::vector<std::string>{"bring up ibp14s0"});
  t.pfs[0].link_admin_state = "up";
  CHECK(host::planHost({{itf("0000:0e:00.0", 1)}, {}}, t, {}, {}).empty());
  // A PF outside the spec is left as it is.
  t.pfs[1].link_admin_state = "down";
  CHECK(host::planHost({{itf("0000:0e:00.0", 1)}, {}}, t, {}, {}).empty());
}

TEST_CASE("an Ethernet netdevice VF gets its own MAC as its administrative MAC",
          "[host][plan][unit]") {
  auto t = topology(3);
  auto& pf = t.pfs[0];
  pf.link_type = "ETH";
  for (size_t i = 0; i < pf.vfs.size(); ++i) {
    pf.vfs[i].mac = "02:00:0e:00:0" + std::to_string(i + 1) + ":00";
  }
  auto eth = itf("0000:0e:00.0", 3);
  eth.link_type = "eth";
  std::map<std::string, std::string> admin = {{"0000:0e:00.1", "00:00:00:00:00:00"},
                                              {"0000:0e:00.2", "02:00:0e:00:02:00"},
                                              {"0000:0e:00.3", "02:00:0e:00:99:00"}};
  // VF 0 has none, VF 1 has its own already, VF 2 another one (set by hand): 0 and 2 get theirs.
  CHECK(described(host::planHost({{eth}, {}}, t, {}, {}, nullptr, {}, admin)) ==
        std::vector<std::string>{"set the MAC of VF 0 of ibp14s0 to 02:00:0e:00:01:00",
                                 "set the MAC of VF 2 of ibp14s0 to 02:00:0e:00:03:00"});
  // Not a VF prepared for a pod (its pod may use the MAC it has), not without a netdev MAC, not
  // on InfiniBand, not for vfio-pci groups.
  host::PreparedVfs prepared = {{"0000:0e:00.1", {"ns/claim"}}};
  CHECK(described(host::planHost({{eth}, {}}, t, {}, prepared, nullptr, {}, admin)) ==
        std::vector<std::string>{"set the MAC of VF 2 of ibp14s0 to 02:00:0e:00:03:00"});
  pf.vfs[0].mac = "";
  pf.vfs[2].mac = "";
  CHECK(host::planHost({{eth}, {}}, t, {}, {}, nullptr, {}, admin).empty());
  pf.vfs[0].mac = "02:00:0e:00:01:00";
  pf.link_type = "IB";
  CHECK(host::planHost({{eth}, {}}, t, {}, {}, nullptr, {}, admin).empty());
}

TEST_CASE("vfio-pci groups on a node without the vfio-pci driver are an error naming it",
          "[host][plan][unit]") {
  auto t = topology(2);
  t.pci_drivers = {"mlx5_core", "pcieport"};
  auto plan = host::planHost({{itf("0000:0e:00.0", 2, "vfio-pci")}, {}}, t, {}, {});
  CHECK(plan.actions.empty());  // no bind that cannot take
  REQUIRE(plan.errors.size() == 1);
  CHECK_THAT(plan.errors[0],
             Catch::Contains("need the vfio-pci driver") && Catch::Contains("modprobe vfio-pci"));
  t.pci_drivers.insert("vfio-pci");
  CHECK(described(host::planHost({{itf("0000:0e:00.0", 2, "vfio-pci")}, {}}, t, {}, {})).size() ==
        2);
}

TEST_CASE("what a last pass left undone is said, a bind that did not take naming its VF",
          "[host][plan][unit]") {
  host::Plan left;
  left.actions = {
      {host::Action::Kind::kBindDriver, "0000:0e:00.0", "0000:0e:00.3", "vfio-pci", "mlx5_core"},
      {host::Action::Kind::kSetMtu, "0000:0e:00.0", "ibp14s0", "4096", ""}};
  CHECK(host::describeUnconverged(left) ==
        std::vector<std::string>{
            "VF 0000:0e:00.3 is still on mlx5_core after binding it to vfio-pci: the driver did "
            "not take it (is its module loaded? see the kernel log)",
            "set the MTU of ibp14s0 to 4096: did not take effect (the host shows the old value)"});
}
