// buildSlices(): attributes as the reference driver publishes them, splitting, stable
// membership and pool generations.
#include "dra/slices.h"

#include <catch2/catch.hpp>

#include "api/names.h"
#include "support/fixtures.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;

namespace {

std::vector<api::Device> devicesOf(const std::vector<api::InterfaceExt>& pfs,
                                   const std::string& res) {
  std::vector<api::Device> out;
  for (const auto& pf : pfs) {
    for (const auto& vf : pf.vfs) {
      out.push_back(
          {api::deviceName(vf.pci_address),
           vf.pci_address,
           {{std::string(api::attr::kResourceName), api::AttributeValue::ofString(res)}}});
    }
  }
  return out;
}

}  // namespace

TEST_CASE("VF 0000-c7-00-1 carries exactly the observed reference attributes",
          "[dra][slices][unit]") {
  auto status = testing::fixture::a100Status(1);
  for (auto& pf : status.interfaces) {
    for (auto& vf : pf.vfs) vf.rdma_device = "mlx5_x";
  }
  auto set =
      dra::buildSlices("a100-04", devicesOf(status.interfaces, "cx6_vfs"), status.interfaces, {});
  REQUIRE(set.slices.size() == 1);
  const auto& spec = set.slices[0].spec;
  CHECK(spec.pool == api::ResourcePool{"a100-04", 0, 1});
  REQUIRE(spec.devices.size() == 8);
  const api::SliceDevice* vf = nullptr;
  for (const auto& d : spec.devices) {
    if (d.name == "0000-c7-00-1") vf = &d;
  }
  REQUIRE(vf != nullptr);
  auto observed = api::ResourceSlice::decode(
      testing::loadFixtureObject("reference/resourceslice-sriov-observed.json"));
  REQUIRE(observed.ok());
  CHECK(vf->attributes == observed->spec.devices[0].attributes);
}

TEST_CASE("300 devices become 3 slices of one complete pool", "[dra][slices][unit]") {
  auto status = testing::fixture::ethernetStatus(3, 100);
  auto devices = devicesOf(status.interfaces, "e810");
  auto first = dra::buildSlices("n1", devices, status.interfaces, {});
  REQUIRE(first.slices.size() == 3);
  CHECK(first.slices[0].spec.devices.size() == 128);
  CHECK(first.slices[1].spec.devices.size() == 128);
  CHECK(first.slices[2].spec.devices.size() == 44);
  for (const auto& s : first.slices) {
    CHECK(s.spec.pool.resource_slice_count == 3);
    CHECK(s.spec.pool.name == "n1");
  }
  CHECK(first.slices[2].name == "n1-sriovnetwork-2");

  SECTION("one device's attributes change one slice and keep the generation") {
    auto changed = devices;
    changed[200].attributes["example.com/tier"] = api::AttributeValue::ofString("gold");
    auto next = dra::buildSlices("n1", changed, status.interfaces, dra::summaries(first.slices));
    int differing = 0;
    for (size_t i = 0; i < 3; ++i) differing += !(next.slices[i].spec == first.slices[i].spec);
    CHECK(differing == 1);
    CHECK(next.slices[1].spec.pool.generation == first.slices[1].spec.pool.generation);
    // The digests tell the same: the node compares them, not the specs it no longer keeps.
    for (size_t i = 0; i < 3; ++i) {
      CHECK(next.slices[i].digest == dra::sliceDigest(next.slices[i].spec));
      CHECK((next.slices[i].digest == first.slices[i].digest) ==
            (next.slices[i].spec == first.slices[i].spec));
    }
  }
  SECTION("removing devices keeps the others where they were, and bumps the generation") {
    auto fewer = devices;
    fewer.erase(fewer.begin(), fewer.begin() + 100);  // 200 left: 2 slices needed
    auto next = dra::buildSlices("n1", fewer, status.interfaces, dra::summaries(first.slices));
    REQUIRE(next.slices.size() == 2);
    CHECK(next.slices[1].spec.devices == first.slices[1].spec.devices);
    CHECK(next.slices[0].spec.pool.generation == first.slices[0].spec.pool.generation + 1);
    CHECK(next.slices[0].spec.pool.resource_slice_count == 2);
    // A new generation is a new digest, whatever the devices.
    CHECK(next.slices[1].digest != first.slices[1].digest);
    CHECK(next.slices[1].digest == dra::sliceDigest(next.slices[1].spec));
  }
}

TEST_CASE("a slice summary keeps the names, the pool and the digest of its slice",
          "[dra][slices][unit]") {
  auto status = testing::fixture::ethernetStatus(1, 3);
  auto set = dra::buildSlices("n1", devicesOf(status.interfaces, "e810"), status.interfaces, {});
  REQUIRE(set.slices.size() == 1);
  const auto& slice = set.slices[0];
  auto summary = dra::SliceSummary::of(slice.name, slice.spec);
  CHECK(summary == dra::SliceSummary::of(slice));
  CHECK(summary.name == "n1-sriovnetwork-0");
  CHECK(summary.pool == "n1");
  CHECK(summary.generation == slice.spec.pool.generation);
  REQUIRE(summary.devices.size() == 3);
  CHECK(summary.devices[0] == slice.spec.devices[0].name);
  CHECK(summary.digest == slice.digest);

  auto retiered = slice.spec;
  retiered.devices[0].attributes["example.com/tier"] = api::AttributeValue::ofString("gold");
  CHECK(dra::sliceDigest(retiered) != summary.digest);
  auto newer = slice.spec;
  ++newer.pool.generation;
  CHECK(dra::sliceDigest(newer) != summary.digest);
}

TEST_CASE("spec devices that do not exist are reported, not published", "[dra][slices][unit]") {
  auto status = testing::fixture::a100Status(1);
  std::vector<api::Device> devices = {{"0000-0e-00-1", "0000:0e:00.1", {}},
                                      {"0000-0e-00-2", "0000:0e:00.2", {}}};
  auto set = dra::buildSlices("n", devices, status.interfaces, {});
  CHECK(set.slices.at(0).spec.devices.size() == 1);
  CHECK(set.missing == std::vector<std::string>{"0000-0e-00-2"});
}

TEST_CASE("a node without devices publishes one empty slice", "[dra][slices][unit]") {
  auto set = dra::buildSlices("n", {}, {}, {});
  REQUIRE(set.slices.size() == 1);
  CHECK(set.slices[0].spec.devices.empty());
}

TEST_CASE("a device the API server would refuse is left out and named; the others are published",
          "[dra][slices][unit]") {
  auto status = testing::fixture::a100Status(1);
  auto devices = devicesOf(status.interfaces, "cx6_vfs");
  // Two DeviceAttributes selected 0000-0e-00-1 with 10 attributes each: 14 built in + 1 + 20.
  for (int i = 0; i < 20; ++i) {
    devices[0].attributes["example.com/a" + std::to_string(i)] = api::AttributeValue::ofInt(i);
  }
  devices[1].attributes["example.com/note"] = api::AttributeValue::ofString(std::string(65, 'x'));
  auto set = dra::buildSlices("n", devices, status.interfaces, {});
  REQUIRE(set.slices.size() == 1);
  CHECK(set.slices[0].spec.devices.size() == 6);
  REQUIRE(set.refused.size() == 2);
  CHECK(set.refused[0] == "device " + devices[0].name +
                              ": 35 attributes and 0 capacities; a device carries at most 32 in "
                              "all (14 are built in): remove attributes from the DeviceAttributes "
                              "that select it");
  CHECK(set.refused[1] == "device " + devices[1].name +
                              ": attribute \"example.com/note\": \"xxxxxxxxxxxxxxxxxxxx...\" is "
                              "longer than 64 characters");
}

TEST_CASE("a device of an isRdma: false policy is published rdmaCapable false",
          "[dra][slices][unit]") {
  auto status = testing::fixture::a100Status(1);
  for (auto& pf : status.interfaces) pf.vfs[0].rdma_device = "mlx5_9";  // every VF has one
  auto devices = devicesOf(status.interfaces, "cx6_vfs");
  devices[0].no_rdma = true;
  auto set = dra::buildSlices("n", devices, status.interfaces, {});
  REQUIRE(set.slices.size() == 1);
  const std::string rdma(api::attr::kRdmaCapable);
  for (const auto& d : set.slices[0].spec.devices) {
    INFO(d.name);
    CHECK(d.attributes.at(rdma) == api::AttributeValue::ofBool(d.name != devices[0].name));
  }
}

TEST_CASE("a device of an excludeTopology policy is published without dra.net/numaNode",
          "[dra][slices][unit]") {
  auto status = testing::fixture::a100Status(1);
  auto devices = devicesOf(status.interfaces, "cx6_vfs");
  devices[0].exclude_topology = true;
  auto set = dra::buildSlices("n", devices, status.interfaces, {});
  REQUIRE(set.slices.size() == 1);
  const std::string numa(api::attr::kNumaNode);
  for (const auto& d : set.slices[0].spec.devices) {
    INFO(d.name);
    CHECK(d.attributes.count(numa) == (d.name == devices[0].name ? 0U : 1U));
    CHECK(d.attributes.count(std::string(api::attr::kPcieRoot)) == 1);  // alignment stays possible
  }
}
