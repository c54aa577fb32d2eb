// syncedStatus() and syncEvent(): what the agent reports after a pass over the host. Pure.
#include "host/sync_status.h"

#include <catch2/catch.hpp>

#include "host/rdma_mode.h"

using namespace sriovdra;

namespace {

host::Topology oneVf() {
  host::Topology t;
  api::InterfaceExt pf;
  pf.name = "ibp14s0";
  pf.pci_address = "0000:0e:00.0";
  pf.pcie_root = "pci0000:00";
  api::VirtualFunction vf;
  vf.pci_address = "0000:0e:00.1";
  pf.vfs.push_back(vf);
  t.pfs.push_back(pf);
  return t;
}

std::string conditionOf(const api::SriovNodeStateStatus& s, const std::string& type) {
  const api::Condition* c = api::findCondition(s.conditions, type);
  return c == nullptr ? "" : c->status + " " + c->reason;
}

}  // namespace

TEST_CASE("the status after a pass says Succeeded, Failed or InProgress, with its conditions",
          "[host][unit]") {
  struct Row {
    std::string name;
    host::SyncOutcome outcome;
    std::string sync_status;
    int64_t observed_generation = 0;
    std::string ready, degraded, blocked;
    std::optional<std::string> event;  // "Warning SyncFailed" / "Normal Synced" / ...
  };
  const std::vector<Row> rows = {
      {"nothing wrong",
       {{}, {}, 1},
       "Succeeded",
       7,
       "True Synced",
       "False AsExpected",
       "False NothingInUse",
       "Normal Synced"},
      {"a write failed",
       {{"set sriov_numvfs of 0000:0e:00.0 to 4: EBUSY"}, {}, 1},
       "Failed",
       3,
       "False SyncFailed",
       "True SyncFailed",
       "False NothingInUse",
       "Warning SyncFailed"},
      {"a change waits for a VF in use",
       {{}, {{"0000:0e:00.0", {"ns/claim"}, "PF ibp14s0 has VFs in use"}}, 1},
       "InProgress",
       3,
       "False Blocked",
       "False AsExpected",
       "True VfsInUse",
       "Warning Blocked"},
      {"which VFs are in use cannot be known",
       {{}, {}, 1, "listing ResourceClaims: forbidden"},
       "InProgress",
       3,
       "False Blocked",
       "False AsExpected",
       "True InUseUnknown",
       "Warning InUseUnknown"},
      {"firmware changes wait for a reboot",
       {{}, {}, 1, "", {"NIC 0000:0e:00 (0000:0e:00.0): firmware NUM_OF_VFS 8 -> 16"}},
       "InProgress",
       3,
       "False Blocked",
       "False AsExpected",
       "True RebootRequired",
       "Warning RebootRequired"},
  };
  api::SriovNodeStateSpec spec;
  spec.devices.push_back({"0000-0e-00-1", "0000:0e:00.1", {}});
  for (const auto& row : rows) {
    INFO(row.name);
    api::SriovNodeStateStatus before;
    before.observed_generation = 3;
    auto after = host::syncedStatus(before, spec, 7, oneVf(), row.outcome, "2026-12-01T00:00:00Z");
    CHECK(after.sync_status == row.sync_status);
    CHECK(after.observed_generation == row.observed_generation);
    CHECK(after.advertised_vfs == 1);
    CHECK(after.interfaces.size() == 1);
    CHECK(conditionOf(after, "Ready") == row.ready);
    CHECK(conditionOf(after, "Degraded") == row.degraded);
    CHECK(conditionOf(after, "Blocked") == row.blocked);
    CHECK(conditionOf(after, "Progressing") == "False Done");
    for (const auto& c : after.conditions) CHECK(c.observed_generation == 7);
    auto event = host::syncEvent(before, after, row.outcome, 7);
    REQUIRE(event.has_value() == row.event.has_value());
    CHECK(std::string(event->warning ? "Warning " : "Normal ") + event->reason == *row.event);
    // The same pass again changes nothing and says nothing.
    auto again = host::syncedStatus(after, spec, 7, oneVf(), row.outcome, "2026-12-01T00:01:00Z");
    CHECK(again == after);
    CHECK_FALSE(host::syncEvent(after, again, row.outcome, 7).has_value());
  }
}

TEST_CASE("RebootRequired appears when firmware waits for a reboot and turns False after it",
          "[host][firmware][unit]") {
  api::SriovNodeStateSpec spec;
  host::SyncOutcome fine{{}, {}, 1};
  host::SyncOutcome reboot{
      {}, {}, 1, "", {"NIC 0000:0e:00 (0000:0e:00.0): firmware NUM_OF_VFS 8 -> 16"}};
  auto never = host::syncedStatus({}, spec, 1, oneVf(), fine, "2026-12-01T00:00:00Z");
  CHECK(api::findCondition(never.conditions, "RebootRequired") == nullptr);
  auto waiting = host::syncedStatus(never, spec, 2, oneVf(), reboot, "2026-12-01T00:01:00Z");
  CHECK(conditionOf(waiting, "RebootRequired") == "True FirmwareChanged");
  CHECK(api::findCondition(waiting.conditions, "RebootRequired")->message ==
        "NIC 0000:0e:00 (0000:0e:00.0): firmware NUM_OF_VFS 8 -> 16; the node must reboot "
        "(drained first) for them");
  // Where the reboot stands follows the reasons, in the condition and in Blocked.
  reboot.reboot_step = host::RebootStep::kAwaitGrant;
  auto asked = host::syncedStatus(waiting, spec, 2, oneVf(), reboot, "2026-12-01T00:02:00Z");
  CHECK_THAT(api::findCondition(asked.conditions, "RebootRequired")->message,
             Catch::EndsWith("for them: waiting for the operator to grant it (a rollout slot of "
                             "the node's pool, then the drain)"));
  CHECK(api::findCondition(asked.conditions, "Blocked")->message ==
        api::findCondition(asked.conditions, "RebootRequired")->message);
  auto said = host::syncEvent(waiting, asked, reboot, 2);
  REQUIRE(said.has_value());
  CHECK(said->reason == "RebootRequired");
  auto rebooted = host::syncedStatus(waiting, spec, 2, oneVf(), fine, "2026-12-01T00:09:00Z");
  CHECK(conditionOf(rebooted, "RebootRequired") == "False FirmwareInEffect");
  CHECK(rebooted.sync_status == "Succeeded");
  // The reason names the RDMA mode when only it waits; with firmware too, firmware.
  host::RdmaModeInput mode{.desired = "exclusive", .current = "shared"};
  host::SyncOutcome rdma{{}, {}, 1, "", {host::planRdmaMode(mode).reboot}};
  auto rdma_only = host::syncedStatus(never, spec, 2, oneVf(), rdma, "2026-12-01T00:10:00Z");
  CHECK(conditionOf(rdma_only, "RebootRequired") == "True RdmaModeChanged");
  rdma.reboot.push_back(reboot.reboot[0]);
  auto both = host::syncedStatus(never, spec, 2, oneVf(), rdma, "2026-12-01T00:11:00Z");
  CHECK(conditionOf(both, "RebootRequired") == "True FirmwareChanged");
}
