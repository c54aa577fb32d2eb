// The per-VF families of upstream's metrics exporter, from the node's PFs, the kernel's counters
// and the checkpoint: names, labels and values as Prometheus reads them.
#include "node/agent/vf_exporter.h"

#include <sstream>

#include <catch2/catch.hpp>
#include <prometheus/text_serializer.h>

#include "support/metrics_text.h"

using namespace sriovdra;

namespace {

api::InterfaceExt pf(const std::string& name, const std::string& pci, int64_t numa,
                     std::vector<std::pair<int64_t, std::string>> vfs) {
  api::InterfaceExt p{.name = name, .pci_address = pci, .numa_node = numa};
  for (const auto& [id, address] : vfs) p.vfs.push_back({.pci_address = address, .vf_id = id});
  return p;
}

std::string text(const std::vector<prometheus::MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace

TEST_CASE("VF counters and pod devices under upstream's exporter names", "[metrics][unit]") {
  std::vector<api::InterfaceExt> pfs = {
      pf("ens1f0", "0000:11:00.0", 0,
         {{0, "0000:11:00.1"}, {1, "0000:11:00.2"}, {2, "0000:11:00.3"}}),
      pf("ens2f0", "0000:21:00.0", -1, {{0, "0000:21:00.1"}}),
      pf("ens3f0", "0000:31:00.0", 1, {{0, "0000:31:00.1"}}),  // the kernel did not answer
  };
  std::map<std::string, std::vector<host::VfStats>> stats = {
      // VF 2 of ens1f0 is gone from the kernel; VF 7 is not in the status yet.
      {"ens1f0",
       {{.vf = 0},
        {.vf = 1,
         .rx_packets = 5,
         .tx_packets = 6,
         .rx_bytes = 1500,
         .tx_bytes = 3000,
         .broadcast = 1,
         .multicast = 2,
         .rx_dropped = 3,
         .tx_dropped = 4},
        {.vf = 7, .rx_bytes = 99}}},
      {"ens2f0", {{.vf = 0, .tx_bytes = 42}}},
  };
  dra::Checkpoint checkpoint;
  checkpoint.claims["uid-1"] = {
      .uid = "uid-1",
      .namespace_ = "llm",
      .name = "client-devices",
      .pod_uid = "pod-uid-1",
      .pod_name = "client",
      .state = dra::PreparedClaim::State::kPrepared,
      .devices = {{.pci_address = "0000:11:00.2", .resource_name = "openshift.io/cx6_vfs"}}};
  checkpoint.claims["uid-2"] = {.uid = "uid-2",
                                .namespace_ = "llm",
                                .state = dra::PreparedClaim::State::kPreparing,
                                .devices = {{.pci_address = "0000:11:00.1"}}};
  std::string t = text(agent::vfFamilies(pfs, stats, checkpoint));

  auto vf = [](const std::string& stat, const std::string& labels) {
    return "sriov_vf_" + stat + "{" + labels + "}";
  };
  const std::string busy = R"(numa_node="0",pciAddr="0000:11:00.2",pf="ens1f0",vf="1")";
  CHECK(testing::sampleValue(t, vf("rx_bytes", busy)) == 1500);
  CHECK(testing::sampleValue(t, vf("tx_bytes", busy)) == 3000);
  CHECK(testing::sampleValue(t, vf("rx_packets", busy)) == 5);
  CHECK(testing::sampleValue(t, vf("tx_packets", busy)) == 6);
  CHECK(testing::sampleValue(t, vf("rx_broadcast", busy)) == 1);
  CHECK(testing::sampleValue(t, vf("rx_multicast", busy)) == 2);
  CHECK(testing::sampleValue(t, vf("rx_dropped", busy)) == 3);
  CHECK(testing::sampleValue(t, vf("tx_dropped", busy)) == 4);
  CHECK(testing::sampleValue(
            t, vf("rx_bytes", R"(numa_node="0",pciAddr="0000:11:00.1",pf="ens1f0",vf="0")")) == 0);
  // No NUMA affinity: an empty numa_node, as upstream reads -1.
  CHECK(testing::sampleValue(
            t, vf("tx_bytes", R"(numa_node="",pciAddr="0000:21:00.1",pf="ens2f0",vf="0")")) == 42);
  CHECK_THAT(t, Catch::Contains("# TYPE sriov_vf_rx_bytes counter"));
  CHECK_THAT(t, Catch::Contains("# HELP sriov_vf_rx_bytes Statistic rx_bytes."));
  // Left out: a VF the kernel no longer has, one the status does not list, a PF not read.
  CHECK_THAT(t, !Catch::Contains("0000:11:00.3"));
  CHECK_THAT(t, !Catch::Contains("vf=\"7\""));
  CHECK_THAT(t, !Catch::Contains("ens3f0"));

  // One pod device per VF of a prepared claim; a claim still being prepared has none.
  CHECK(
      testing::sampleValue(
          t,
          R"(sriov_kubepoddevice{container="",dev_type="openshift.io/cx6_vfs",namespace="llm",pciAddr="0000:11:00.2",pod="client"})") ==
      1);
  CHECK_THAT(t, !Catch::Contains(R"(pciAddr="0000:11:00.1",pod=)"));
  CHECK_THAT(t, Catch::Contains("# TYPE sriov_kubepoddevice counter"));

  SECTION("a node without PFs or claims: the families, no series") {
    std::string empty = text(agent::vfFamilies({}, {}, {}));
    CHECK_THAT(empty, Catch::Contains("# TYPE sriov_vf_tx_dropped counter"));
    CHECK_THAT(empty, !Catch::Contains("sriov_vf_tx_dropped{"));
  }
}
