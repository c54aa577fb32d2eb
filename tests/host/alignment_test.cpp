// Alignment classes, the report over the reference claim and slices, and the placement study on
// the a100-reference server (4 roots x (2 GPUs + 2 PFs), 2 roots per NUMA node).
#include "scheduling/alignment.h"

#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/node_state.h"
#include "dra/slices.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "host/sysfs.h"
#include "study/simulate.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using scheduling::PairAlignment;

namespace {

study::SimServer a100(int vfs_per_pf = 1) {
  testing::TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel kernel(dir.path());
  auto topology = host::discover(kernel, kernel);
  REQUIRE(topology.ok());
  return study::serverFromTopology(*topology, vfs_per_pf);
}

scheduling::DevicePlacement at(std::string root, std::string sw, int64_t numa) {
  scheduling::DevicePlacement p;
  p.node = "n";
  p.pcie_root = std::move(root);
  p.pcie_switch = std::move(sw);
  p.numa = numa;
  return p;
}

double share(const study::StrategyResult& r, PairAlignment a) {
  return static_cast<double>(r.pairs.at(a)) / static_cast<double>(r.scheduled);
}

}  // namespace

TEST_CASE("pairs are classified best first", "[alignment][unit]") {
  CHECK(scheduling::classify(at("pci0000:00", "0000:01:00.0", 0),
                             at("pci0000:00", "0000:01:00.0", 0)) == PairAlignment::kSameSwitch);
  CHECK(scheduling::classify(at("pci0000:00", "0000:01:00.0", 0),
                             at("pci0000:00", "0000:05:00.0", 0)) == PairAlignment::kSameRoot);
  CHECK(scheduling::classify(at("pci0000:00", "", 0), at("pci0000:00", "", 0)) ==
        PairAlignment::kSameRoot);
  CHECK(scheduling::classify(at("pci0000:00", "", 0), at("pci0000:3a", "", 0)) ==
        PairAlignment::kSameNuma);
  CHECK(scheduling::classify(at("pci0000:00", "", 0), at("pci0000:b9", "", 1)) ==
        PairAlignment::kCrossNuma);
  CHECK(scheduling::classify(at("", "", 0), at("pci0000:b9", "", 1)) == PairAlignment::kUnknown);
  CHECK(scheduling::classify(at("pci0000:00", "", -1), at("pci0000:b9", "", 1)) ==
        PairAlignment::kUnknown);
}

TEST_CASE("a slice's placements are kept as one run per PF and read back unchanged",
          "[alignment][host]") {
  // The a100-reference server with 8 VFs on each of its 8 PFs, its slice as the agent builds it.
  testing::TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel kernel(dir.path());
  auto before = host::discover(kernel, kernel);
  REQUIRE(before.ok());
  for (const auto& pf : before->pfs) {
    REQUIRE(kernel.write("sys/bus/pci/devices/" + pf.pci_address + "/sriov_numvfs", "8").isOk());
  }
  auto topology = host::discover(kernel, kernel);
  REQUIRE(topology.ok());
  std::vector<api::Device> devices;
  for (const auto& pf : topology->pfs) {
    for (const auto& vf : pf.vfs)
      devices.push_back({api::deviceName(vf.pci_address), vf.pci_address});
  }
  auto set = dra::buildSlices("a100-06", devices, topology->pfs, {});
  REQUIRE(set.slices.size() == 1);
  api::ResourceSlice slice;
  slice.metadata.name = set.slices[0].name;
  slice.spec = set.slices[0].spec;
  // A GPU-like device of our driver's slice that is not named after its address stays as it is.
  slice.spec.devices.push_back(slice.spec.devices.back());
  slice.spec.devices.back().name = "odd-one";

  auto placements = scheduling::SlicePlacements::of(slice);
  CHECK(placements.runs() == 9);  // one per PF, and the odd one
  auto got = placements.devices();
  REQUIRE(got.size() == slice.spec.devices.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const auto& d = slice.spec.devices[i];
    const std::string driver(api::kDriverName);
    INFO(d.name);
    CHECK(got[i].name == d.name);
    CHECK(got[i].pci_address == *api::stringAttribute(d, driver, api::attr::kPciAddress));
    CHECK(got[i].pf == *api::stringAttribute(d, driver, api::attr::kPfPciAddress));
    CHECK(got[i].pf_name == *api::stringAttribute(d, driver, api::attr::kPfName));
    CHECK(got[i].pcie_root == *api::stringAttribute(d, driver, api::attr::kPcieRoot));
    CHECK(got[i].numa == api::findAttribute(d, driver, api::attr::kNumaNode)->int_value);
    CHECK(placements.device(d.name) == got[i]);
  }
  CHECK_FALSE(placements.device("0000-0e-01-7"));  // past the PF's 8 VFs
  CHECK_FALSE(placements.device("gpu-0"));
  // The slice of another node of the same shape shares the kept devices.
  slice.spec.node_name = slice.spec.pool.name = "a100-07";
  auto other = scheduling::SlicePlacements::of(slice);
  CHECK(other.node == "a100-07");
  CHECK(other.devices() == got);
}

TEST_CASE("the reference claim's GPU and VF are reported on the same root", "[alignment][unit]") {
  // The observed claim (a100-06: gpu-3 + VF 0000-11-00-1) with slices shaped like the observed
  // ones for those two devices, both on pci0000:00 as topology-client-aligned.txt shows.
  auto claim = api::ResourceClaim::decode(
      testing::loadFixtureObject("reference/resourceclaim-aligned-observed.yaml"));
  REQUIRE(claim.ok());
  auto gpu_slice = api::ResourceSlice::decode(
      testing::loadFixtureObject("reference/resourceslice-gpu-observed.json"));
  auto vf_slice = api::ResourceSlice::decode(
      testing::loadFixtureObject("reference/resourceslice-sriov-observed.json"));
  REQUIRE(gpu_slice.ok());
  REQUIRE(vf_slice.ok());
  for (auto* s : {&*gpu_slice, &*vf_slice}) {
    s->spec.node_name = s->spec.pool.name = "a100-06";
    s->spec.devices.resize(1);
  }
  auto& g = gpu_slice->spec.devices[0];
  g.name = "gpu-3";
  g.attributes["resource.kubernetes.io/pciBusID"] = api::AttributeValue::ofString("0000:0a:00.0");
  g.attributes["resource.kubernetes.io/pcieRoot"] = api::AttributeValue::ofString("pci0000:00");
  auto& v = vf_slice->spec.devices[0];
  v.name = "0000-11-00-1";
  v.attributes["resource.kubernetes.io/pcieRoot"] = api::AttributeValue::ofString("pci0000:00");
  v.attributes["sriovnetwork.k8snetworkplumbingwg.io/pfPciAddress"] =
      api::AttributeValue::ofString("0000:11:00.0");
  v.attributes["dra.net/numaNode"] = api::AttributeValue::ofInt(0);

  auto gpu_placements = scheduling::SlicePlacements::of(*gpu_slice);
  auto vf_placements = scheduling::SlicePlacements::of(*vf_slice);
  scheduling::ClusterTopology topology({&gpu_placements, &vf_placements}, {});
  auto report = scheduling::alignmentReport({&*claim}, topology);
  REQUIRE(report.size() == 1);
  const auto& r = report[0];
  CHECK(r.pod == "ib-write-bw-aligned-client");
  CHECK(r.node == "a100-06");
  REQUIRE(r.gpus.size() == 1);
  REQUIRE(r.vfs.size() == 1);
  CHECK(r.gpus[0].pci_address == "0000:0a:00.0");
  CHECK(r.vfs[0].pf == "0000:11:00.0");
  REQUIRE(r.pairs.size() == 1);
  CHECK(r.pairs[0].alignment == PairAlignment::kSameRoot);
  CHECK(r.shared_pfs.empty());
  CHECK(scheduling::countPairs(report).at(PairAlignment::kSameRoot) == 1);

  // With the node's SriovNodeState the switch is known too: both sit behind one switch.
  api::SriovNodeState state;
  state.metadata.name = "a100-06";
  state.status.gpus.push_back(
      {"0000:0a:00.0", "10de", "20b2", "nvidia", "pci0000:00", 0, "0000:03:00.0"});
  api::InterfaceExt pf;
  pf.pci_address = "0000:11:00.0";
  pf.pcie_root = "pci0000:00";
  pf.numa_node = 0;
  pf.pcie_switch = "0000:03:00.0";
  state.status.interfaces.push_back(pf);
  scheduling::ClusterTopology with_state({&gpu_placements, &vf_placements},
                                         {api::NodeReport::of(state)});
  CHECK(scheduling::alignmentReport({&*claim}, with_state)[0].pairs[0].alignment ==
        PairAlignment::kSameSwitch);
}

TEST_CASE("the placement study reproduces the topology's combinatorics", "[alignment][unit]") {
  auto server = a100();
  REQUIRE(server.gpus.size() == 8);
  REQUIRE(server.vfs.size() == 8);
  SECTION("one pod per server: the odds of a random pair, by hand") {
    // A GPU has 2 of the 8 VFs under its switch, 2 on the other root of its NUMA node and 4 on
    // the other NUMA node: 25 %, 25 %, 50 % for independent picks; always the same NUMA node with
    // the topology manager (2 of its 4 VFs under the GPU's switch: 50 %).
    auto results = study::simulate({server, 2000, 2000, 7, {}});
    REQUIRE(results.size() == 3);
    const auto& plugins = results[0];
    CHECK(plugins.scheduled == 2000);
    CHECK(share(plugins, PairAlignment::kSameSwitch) == Approx(0.25).margin(0.04));
    CHECK(share(plugins, PairAlignment::kSameNuma) == Approx(0.25).margin(0.04));
    CHECK(share(plugins, PairAlignment::kCrossNuma) == Approx(0.50).margin(0.04));
    const auto& numa = results[1];
    CHECK(share(numa, PairAlignment::kSameSwitch) == Approx(0.50).margin(0.04));
    CHECK(numa.pairs.at(PairAlignment::kCrossNuma) == 0);
    const auto& dra_result = results[2];
    CHECK(dra_result.pairs.at(PairAlignment::kSameSwitch) == 2000);
    CHECK(dra_result.mean_gbps == Approx(study::Figures{}.gbps_aligned));
    CHECK(dra_result.mean_kv_ms == Approx(study::Figures{}.kv_ms_aligned));
  }
  SECTION("a full cluster: every pod placed, DRA always aligned, and one seed, one answer") {
    study::SimulationInput in{server, 4, 32, 11, {}};
    auto results = study::simulate(in);
    for (const auto& r : results) {
      CHECK(r.scheduled == 32);
      CHECK(r.pending == 0);
    }
    CHECK(results[2].pairs.at(PairAlignment::kSameSwitch) == 32);
    CHECK(study::markdownTable(in, results) == study::markdownTable(in, study::simulate(in)));
  }
  SECTION("more pods than GPUs stay pending") {
    auto results = study::simulate({server, 1, 10, 3, {}});
    for (const auto& r : results) {
      CHECK(r.scheduled == 8);
      CHECK(r.pending == 2);
    }
  }
  SECTION("the table shows the figures, with the same-NUMA time scaled from bandwidth") {
    study::Figures f;
    CHECK(f.kvMs(PairAlignment::kSameNuma) ==
          Approx(f.kv_ms_aligned * f.gbps_aligned / f.gbps_same_numa));
    study::SimulationInput in{server, 1, 8, 1, {}};
    auto table = study::markdownTable(in, study::simulate(in));
    char row[160];
    std::snprintf(row, sizeof row,
                  "| dra-pcieRoot | 8 | 0 | 100.0 %% | 0.0 %% | 0.0 %% | 0.0 %% | 0.0 %% | %.1f | "
                  "%.2f |",
                  f.gbps_aligned, f.kv_ms_aligned);
    CHECK_THAT(table, Catch::Contains(row));
    CHECK_THAT(study::csvTable(study::simulate(in)),
               Catch::StartsWith("strategy,scheduled,pending,same_switch,same_root,same_numa,"
                                 "cross_numa,unknown,mean_gbps,mean_kv_ms\n"));
  }
}
