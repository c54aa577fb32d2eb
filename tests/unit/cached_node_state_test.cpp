// What the operator keeps of a SriovNodeState: the VFs as runs, the hardware and the spec's
// interfaces shared by nodes alike, and what the render and the readers get back.
#include "operator/cached_node_state.h"

#include <catch2/catch.hpp>

#include "base/interner.h"
#include "base/json.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;

namespace {

json::Document stateJson(const std::string& name, const api::SriovNodeStateSpec& spec,
                         const api::SriovNodeStateStatus& status) {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::Value& md = json::ensureObject(doc, "metadata", a);
  json::setString(md, "name", name, a);
  json::setString(md, "resourceVersion", "7", a);
  spec.encode(api::Writer(json::ensureObject(doc, "spec", a), a));
  status.encode(api::Writer(json::ensureObject(doc, "status", a), a));
  return doc;
}

// Every VF as the render reads it: only vfID, pciAddress and deviceID.
std::vector<api::VirtualFunction> asRenderReadsThem(std::vector<api::VirtualFunction> vfs) {
  for (auto& vf : vfs)
    vf = {.pci_address = vf.pci_address, .device_id = vf.device_id, .vf_id = vf.vf_id};
  return vfs;
}

api::VirtualFunction vf(int64_t id, std::string pci, std::string device = "101e") {
  return {.name = "ens0v" + std::to_string(id),
          .mac = "02:00:00:00:00:0" + std::to_string(id % 10),
          .driver = "mlx5_core",
          .pci_address = std::move(pci),
          .device_id = std::move(device),
          .mtu = 1500,
          .vf_id = id};
}

}  // namespace

TEST_CASE("VFs are kept as runs and given back as the render reads them",
          "[operator][cache][unit]") {
  struct Case {
    const char* name;
    std::vector<api::VirtualFunction> vfs;
    size_t runs;
  };
  const std::vector<Case> cases = {
      {"none", {}, 0},
      {"one PF's VFs, stride 1",
       {vf(0, "0000:10:00.1"), vf(1, "0000:10:00.2"), vf(2, "0000:10:00.3")},
       1},
      {"igb's stride 2", {vf(0, "0000:01:10.0"), vf(1, "0000:01:10.2"), vf(2, "0000:01:10.4")}, 1},
      {"a gap in the VF ids starts a run",
       {vf(0, "0000:10:00.1"), vf(2, "0000:10:00.2"), vf(3, "0000:10:00.3")},
       2},
      {"another device id starts a run",
       {vf(0, "0000:10:00.1"), vf(1, "0000:10:00.2", "1889"), vf(2, "0000:10:00.3", "1889")},
       2},
      {"an address not written canonically is kept as it came",
       {vf(0, "0000:10:00.1"), vf(1, "0000:10:00.2"), vf(2, "0000:10:0A.0"), vf(3, "0000:10:00.4")},
       3},
      {"an empty address is kept as it came", {vf(0, ""), vf(1, "0000:10:00.2")}, 2},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto compact = op::CompactVfs::of(c.vfs);
    CHECK(compact.runs() == c.runs);
    CHECK(compact.size() == c.vfs.size());
    CHECK(compact.expand() == asRenderReadsThem(c.vfs));
  }
  auto many = testing::fixture::ethernetStatus(1, 200).interfaces.at(0).vfs;
  CHECK(op::CompactVfs::of(many).runs() == 1);
  CHECK(op::CompactVfs::of(many).expand() == asRenderReadsThem(many));
}

TEST_CASE("a cached state keeps what the operator reads and shares the hardware of nodes alike",
          "[operator][cache][unit]") {
  auto status = testing::fixture::ethernetStatus(2, 8);
  status.interfaces[0].mac = "02:aa:00:00:00:01";
  status.gpus.push_back({"0000:07:00.0", "10de", "20b2", "nvidia", "pci0000:00", 0, ""});
  status.pcie_roots.push_back({"pci0000:00", 0, {}, {"0000:07:00.0"}});
  api::setCondition(status.conditions, {"Ready", "True", "Synced", "", "", 1},
                    "2026-12-04T00:00:00Z");
  api::SriovNodeStateSpec spec;
  spec.interfaces.push_back({"0000:10:00.0",
                             "ens0",
                             8,
                             1500,
                             "ETH",
                             "legacy",
                             false,
                             {{"res", "netdevice", "0-7", "np", 0, true, "", false}}});
  spec.devices.push_back({"0000-10-00-1", "0000:10:00.1", {}, false, {}, false});

  auto a = op::CachedNodeState::decode(stateJson("a", spec, status));
  REQUIRE(a.ok());
  // Another node: the same hardware and spec, but its own MAC address and conditions.
  auto other_status = status;
  other_status.interfaces[0].mac = "02:bb:00:00:00:01";
  other_status.conditions[0].message = "another node";
  auto b = op::CachedNodeState::decode(stateJson("b", spec, other_status));
  REQUIRE(b.ok());

  CHECK(a->hardware == b->hardware);  // one copy
  CHECK(a->spec_interfaces == b->spec_interfaces);
  CHECK_FALSE(a->sameStatus(*b));  // the conditions differ
  CHECK(a->spec.interfaces.empty());
  CHECK(a->spec.devices.empty());
  CHECK(a->status.interfaces.empty());
  CHECK(a->status.pcie_roots.empty());
  CHECK(a->spec_digest == op::specDigest(op::encodeSpec(spec)));
  CHECK(a->devices_by_resource == std::map<std::string, int64_t>{{"", 1}});
  CHECK(a->specWithoutDevices() == api::SriovNodeStateSpec{spec.interfaces, {}});

  for (const auto& pf : a->hardware->pfs) CHECK(pf.vfs.capacity() == 0);  // nothing left behind
  auto discovered = a->discovered();
  REQUIRE(discovered.interfaces.size() == 2);
  CHECK(discovered.interfaces[0].mac.empty());
  CHECK(discovered.interfaces[0].vfs == asRenderReadsThem(status.interfaces[0].vfs));
  CHECK(discovered.interfaces[1].name == "ens1");
  CHECK(discovered.gpus == status.gpus);
  CHECK(discovered.conditions == status.conditions);
  CHECK(discovered.sync_status == "Succeeded");

  auto report = a->report();
  CHECK(report.node == "a");
  CHECK(report.pfs.size() == 2);
  CHECK(report.gpus.size() == 1);
}

TEST_CASE("hardware nobody holds any more is forgotten", "[operator][cache][unit]") {
  auto& interner = Interner<op::ReportedHardware>::global();
  size_t before = interner.size();
  auto status = testing::fixture::ethernetStatus(1, 3);
  status.interfaces[0].name = "forgotten0";
  {
    auto a = op::CachedNodeState::decode(stateJson("a", {}, status));
    REQUIRE(a.ok());
    CHECK(interner.size() == before + 1);
  }
  CHECK(interner.size() == before);
}
