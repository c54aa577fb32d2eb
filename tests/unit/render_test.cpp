// render(): SriovNetworkNodePolicy merge semantics (the upstream worked cases), resource
// policies, DeviceAttributes and determinism.
#include "policy/render.h"

#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "base/pointers.h"
#include "support/fixtures.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;
using namespace sriovdra::testing::fixture;
using policy::render;
using policy::RenderInput;

namespace {

const std::string kResourceNameAttr(api::attr::kResourceName);

struct Scenario {
  api::Node node = testing::fixture::node("a100-04", {{"dra-sriov-cx6", "true"}});
  api::SriovNodeStateStatus status = a100Status();
  std::vector<api::SriovNetworkNodePolicy> node_policies;
  std::vector<api::SriovResourcePolicy> resource_policies;
  std::vector<api::DeviceAttributes> attributes;
  std::string prefix;
  policy::RenderResult run() const {
    return render(RenderInput{node,
                              pointers(node_policies),
                              pointers(resource_policies),
                              pointers(attributes),
                              status,
                              {prefix}});
  }
};

const api::Interface& iface(const policy::RenderResult& r, const std::string& pci) {
  for (const auto& i : r.spec.interfaces) {
    if (i.pci_address == pci) return i;
  }
  FAIL("no interface " << pci);
  throw std::logic_error("unreachable");
}

std::vector<std::pair<std::string, std::string>> groups(const api::Interface& i) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& g : i.vf_groups) out.emplace_back(g.resource_name, g.vf_range);
  return out;
}

Scenario referenceScenario() {
  Scenario s;
  s.node_policies.push_back(*api::SriovNetworkNodePolicy::decode(
      testing::loadFixtureObject("reference/sriovnetworknodepolicy-cx6-vfs.yaml")));
  s.resource_policies.push_back(*api::SriovResourcePolicy::decode(
      testing::loadFixtureObject("reference/sriovresourcepolicy-cx6-advertise-vfs.yaml")));
  s.attributes.push_back(*api::DeviceAttributes::decode(
      testing::loadFixtureObject("reference/deviceattributes-cx6-vfs-attrs.yaml")));
  return s;
}

}  // namespace

TEST_CASE("the reference policies render 8 IB interfaces and 8 cx6_vfs devices",
          "[policy][render][unit]") {
  auto out = referenceScenario().run();
  REQUIRE(out.spec.interfaces.size() == 8);
  for (const auto& i : out.spec.interfaces) {
    INFO(i.name);
    CHECK(i.num_vfs == 1);
    CHECK(i.link_type == "ib");
    REQUIRE(i.vf_groups.size() == 1);
    CHECK(i.vf_groups[0].resource_name == "cx6_vfs");
    CHECK(i.vf_groups[0].vf_range == "0-0");
    CHECK(i.vf_groups[0].is_rdma);
    CHECK(i.vf_groups[0].device_type == "netdevice");
    CHECK(i.vf_groups[0].policy_name == "cx6-vfs");
  }
  REQUIRE(out.spec.devices.size() == 8);
  for (const auto& d : out.spec.devices) {
    INFO(d.name);
    CHECK(d.name == api::deviceName(d.pci_address));
    CHECK(d.attributes ==
          api::Attributes{{kResourceNameAttr, api::AttributeValue::ofString("cx6_vfs")}});
  }
  CHECK(out.spec.devices[7].name == "0000-ca-00-1");
  CHECK(out.conflicts.empty());
  CHECK(out.warnings.empty());
  CHECK(out.matches.at({policy::kNodePolicyKind, "cx6-vfs"}) == 8);
  CHECK(out.matches.at({policy::kResourcePolicyKind, "cx6-advertise-vfs"}) == 8);
  CHECK(out.matches.at({policy::kDeviceAttributesKind, "cx6-vfs-attrs"}) == 8);
}

TEST_CASE("a node without the label gets an empty spec", "[policy][render][unit]") {
  auto s = referenceScenario();
  s.node = node("a100-05");
  auto out = s.run();
  CHECK(out.spec.interfaces.empty());
  CHECK(out.spec.devices.empty());
  CHECK(out.matches.empty());
}

TEST_CASE("a resource prefix adds the Multus resourceName attribute", "[policy][render][unit]") {
  auto s = referenceScenario();
  s.prefix = "openshift.io";
  auto out = s.run();
  REQUIRE(out.spec.devices.size() == 8);
  CHECK(out.spec.devices[0].attributes.at(std::string(api::attr::kCniResourceName)) ==
        api::AttributeValue::ofString("openshift.io/cx6_vfs"));
}

TEST_CASE("higher priority policy wins an overlapping VF range", "[policy][render][unit]") {
  Scenario s;
  s.status = a100Status(8);
  s.node_policies = {NodePolicy("low").priority(50).pf("ibp14s0#0-3").resource("a").get(),
                     NodePolicy("high").priority(10).pf("ibp14s0#2-5").resource("b").get()};
  auto out = s.run();
  const auto& i = iface(out, "0000:0e:00.0");
  CHECK(groups(i) == std::vector<std::pair<std::string, std::string>>{{"b", "2-5"}});
  REQUIRE(out.conflicts.size() == 1);
  CHECK(out.conflicts[0].loser.name == "low");
  CHECK(out.conflicts[0].winner == "high");
  CHECK(out.conflicts[0].target == "ibp14s0 (0000:0e:00.0)");
  CHECK_THAT(out.conflicts[0].reason,
             Catch::Contains("overlaps") && Catch::Contains("higher priority"));
}

TEST_CASE("the upstream merge cases for policies sharing one PF", "[policy][render][unit]") {
  struct Row {
    std::string name;
    NodePolicy first;
    NodePolicy second;
    std::vector<std::pair<std::string, std::string>> groups;
    int64_t num_vfs;
    int64_t mtu;
    std::string loser;
  };
  std::vector<Row> rows = {
      {"different priority, overlapping: only the higher priority remains, with its numVfs/mtu",
       NodePolicy("p1").priority(20).pf("ibp14s0#0-7").numVfs(8).mtu(9000).resource("a"),
       NodePolicy("p2").priority(10).pf("ibp14s0#0-3").numVfs(4).mtu(1500).resource("b"),
       {{"b", "0-3"}},
       4,
       1500,
       "p1"},
      {"same priority, overlapping: the later name's group remains, numVfs and mtu are maxed",
       NodePolicy("p1").priority(10).pf("ibp14s0#0-7").numVfs(8).mtu(9000).resource("a"),
       NodePolicy("p2").priority(10).pf("ibp14s0#0-3").numVfs(4).mtu(1500).resource("b"),
       {{"b", "0-3"}},
       8,
       9000,
       "p1"},
      {"disjoint ranges, different resourceName: both remain, maxed",
       NodePolicy("p1").priority(20).pf("ibp14s0#4-7").numVfs(8).mtu(9000).resource("a"),
       NodePolicy("p2").priority(10).pf("ibp14s0#0-3").numVfs(4).mtu(1500).resource("b"),
       {{"b", "0-3"}, {"a", "4-7"}},
       8,
       9000,
       ""},
      {"same resourceName: the older group is replaced even with disjoint ranges",
       NodePolicy("p1").priority(20).pf("ibp14s0#4-7").numVfs(8).resource("a"),
       NodePolicy("p2").priority(10).pf("ibp14s0#0-3").numVfs(4).resource("a"),
       {{"a", "0-3"}},
       4,
       0,
       "p1"},
      {"no ranges: both default to all VFs and the higher priority wins",
       NodePolicy("p1").priority(20).pf("ibp14s0").numVfs(8).resource("a"),
       NodePolicy("p2").priority(10).pf("ibp14s0").numVfs(2).resource("b"),
       {{"b", "0-1"}},
       2,
       0,
       "p1"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Scenario s;
    s.status = a100Status(8);
    s.node_policies = {row.first.get(), row.second.get()};
    auto out = s.run();
    REQUIRE(out.spec.interfaces.size() == 1);
    const auto& i = out.spec.interfaces[0];
    CHECK(groups(i) == row.groups);
    CHECK(i.num_vfs == row.num_vfs);
    CHECK(i.mtu == row.mtu);
    if (row.loser.empty()) {
      CHECK(out.conflicts.empty());
    } else {
      REQUIRE(out.conflicts.size() == 1);
      CHECK(out.conflicts[0].loser.name == row.loser);
    }
  }
}

TEST_CASE("linkType, eSwitchMode and externallyManaged come from the winning policy",
          "[policy][render][unit]") {
  Scenario s;
  s.status = a100Status(8);
  auto low = NodePolicy("low").priority(50).pf("ibp14s0#4-7").resource("a").linkType("ib").get();
  auto high = NodePolicy("high").priority(10).pf("ibp14s0#0-3").resource("b").linkType("eth").get();
  high.spec.externally_managed = true;
  s.node_policies = {low, high};
  auto out = s.run();
  const auto& i = iface(out, "0000:0e:00.0");
  CHECK(i.link_type == "eth");
  CHECK(i.externally_managed);
  CHECK(i.vf_groups.size() == 2);
}

TEST_CASE("nicSelector fields select PFs; an empty selector selects nothing",
          "[policy][render][unit]") {
  struct Row {
    std::string name;
    NodePolicy policy;
    std::vector<std::string> pfs;
  };
  std::vector<Row> rows = {
      {"vendor",
       NodePolicy("p").vendor("15b3"),
       {"ibp14s0", "ibp17s0", "ibp82s0", "ibp83s0", "ibp139s0", "ibp142s0", "ibp199s0",
        "ibp202s0"}},
      {"vendor written in upper case with 0x",
       NodePolicy("p").vendor("0x15B3").pf("ibp17s0"),
       {"ibp17s0"}},
      {"vendor and a device id that is not there",
       NodePolicy("p").vendor("15b3").deviceId("1017"),
       {}},
      {"rootDevices", NodePolicy("p").rootDevice("0000:c7:00.0"), {"ibp199s0"}},
      {"pfNames with and without a range",
       NodePolicy("p").pf("ibp14s0#0-1").pf("ibp202s0").numVfs(8),
       {"ibp14s0", "ibp202s0"}},
      {"pfNames AND vendor", NodePolicy("p").pf("ibp14s0").vendor("8086"), {}},
      {"empty selector", NodePolicy("p"), {}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Scenario s;
    s.node_policies = {row.policy.get()};
    auto out = s.run();
    std::vector<std::string> got;
    for (const auto& i : out.spec.interfaces) got.push_back(i.name);
    auto want = row.pfs;
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    CHECK(got == want);
  }
}

TEST_CASE("pfNames also match alternative interface names", "[policy][render][unit]") {
  Scenario s;
  s.node = node("e810");
  s.status = e810Status();
  s.node_policies = {NodePolicy("p").pf("enp59s0f1#0-1").numVfs(4).get()};
  auto out = s.run();
  REQUIRE(out.spec.interfaces.size() == 1);
  CHECK(out.spec.interfaces[0].name == "ens1f1");
  CHECK(out.spec.interfaces[0].vf_groups[0].vf_range == "0-1");
}

TEST_CASE("node selectors of node policies are exact label matches", "[policy][render][unit]") {
  Scenario s;
  s.node_policies = {
      NodePolicy("match").pf("ibp14s0").nodeSelector({{"dra-sriov-cx6", "true"}}).get(),
      NodePolicy("miss").pf("ibp17s0").nodeSelector({{"dra-sriov-cx6", "false"}}).get(),
      NodePolicy("all").pf("ibp82s0").get()};
  auto out = s.run();
  CHECK(out.spec.interfaces.size() == 2);
  CHECK(out.matches.count({policy::kNodePolicyKind, "match"}) == 1);
  CHECK(out.matches.count({policy::kNodePolicyKind, "miss"}) == 0);
  CHECK(out.matches.count({policy::kNodePolicyKind, "all"}) == 1);
}

TEST_CASE("a missing priority counts as 99, the lowest", "[policy][render][unit]") {
  Scenario s;
  s.status = a100Status(8);
  auto unset = NodePolicy("a-unset").pf("ibp14s0#0-3").resource("a").get();
  unset.spec.priority.reset();
  s.node_policies = {unset, NodePolicy("z-98").priority(98).pf("ibp14s0#0-3").resource("b").get()};
  auto out = s.run();
  CHECK(groups(iface(out, "0000:0e:00.0")) ==
        std::vector<std::pair<std::string, std::string>>{{"b", "0-3"}});
}

TEST_CASE("isRdma defaults on for InfiniBand netdevice VFs, off for vfio-pci",
          "[policy][render][unit]") {
  Scenario s;
  auto ib = NodePolicy("ib").pf("ibp14s0").linkType("ib").numVfs(1).resource("a").get();
  auto vfio = NodePolicy("vfio")
                  .pf("ibp17s0")
                  .linkType("ib")
                  .deviceType("vfio-pci")
                  .numVfs(1)
                  .resource("b")
                  .get();
  s.node_policies = {ib, vfio};
  auto out = s.run();
  CHECK(iface(out, "0000:0e:00.0").vf_groups[0].is_rdma);
  CHECK_FALSE(iface(out, "0000:11:00.0").vf_groups[0].is_rdma);
}

TEST_CASE("needVhostNet reaches the VF group, for the kubelet plugin's CDI spec",
          "[policy][render][unit]") {
  Scenario s;
  auto vhost = NodePolicy("vhost").pf("ibp14s0").numVfs(1).resource("a").get();
  vhost.spec.need_vhost_net = true;
  s.node_policies = {vhost, NodePolicy("plain").pf("ibp17s0").numVfs(1).resource("b").get()};
  auto out = s.run();
  CHECK(iface(out, "0000:0e:00.0").vf_groups[0].need_vhost_net);
  CHECK_FALSE(iface(out, "0000:11:00.0").vf_groups[0].need_vhost_net);
}

TEST_CASE("excludeTopology marks the policy's VFs, whoever advertises them",
          "[policy][render][unit]") {
  Scenario s;
  auto excluded = NodePolicy("no-numa").pf("ibp14s0").numVfs(1).resource("a").get();
  excluded.spec.exclude_topology = true;
  s.node_policies = {excluded, NodePolicy("numa").pf("ibp17s0").numVfs(1).resource("b").get()};
  s.resource_policies = {ResourcePolicy("all").config({}).get()};
  auto out = s.run();
  std::map<std::string, bool> excluded_by_pf;
  for (const auto& d : out.spec.devices) {
    excluded_by_pf[d.pci_address.substr(0, 10)] = d.exclude_topology;
  }
  CHECK(excluded_by_pf.at("0000:0e:00") == true);
  CHECK(excluded_by_pf.at("0000:11:00") == false);
}

TEST_CASE("isRdma false marks the policy's VFs no_rdma; true and resource policies alone do not",
          "[policy][render][unit]") {
  Scenario s;
  auto rdma = NodePolicy("rdma").pf("ibp14s0").numVfs(1).resource("a").get();
  rdma.spec.is_rdma = true;
  auto plain = NodePolicy("plain").pf("ibp17s0").numVfs(1).resource("b").get();
  plain.spec.is_rdma = false;
  plain.spec.link_type = "eth";  // not defaulted to true, as it would be for InfiniBand
  s.node_policies = {rdma, plain};
  s.resource_policies = {ResourcePolicy("all").config({}).get()};
  std::map<std::string, bool> no_rdma_by_pf;
  for (const auto& d : s.run().spec.devices) no_rdma_by_pf[d.pci_address.substr(0, 10)] = d.no_rdma;
  CHECK(no_rdma_by_pf.at("0000:0e:00") == false);
  CHECK(no_rdma_by_pf.at("0000:11:00") == true);
  // Outside every VF group: the DRA driver's rule, RDMA devices whenever the VF has them.
  s.node_policies = {};
  for (const auto& d : s.run().spec.devices) CHECK_FALSE(d.no_rdma);
}

TEST_CASE("render is deterministic whatever the input order", "[policy][render][unit]") {
  Scenario s = referenceScenario();
  s.status = a100Status(8);
  s.node_policies.push_back(
      NodePolicy("split-a").priority(5).pf("ibp14s0#0-3").resource("x").get());
  s.node_policies.push_back(
      NodePolicy("split-b").priority(5).pf("ibp14s0#4-7").resource("y").get());
  s.resource_policies.push_back(ResourcePolicy("all").config({}).get());
  auto encode = [](const policy::RenderResult& r) {
    json::Document d(rapidjson::kObjectType);
    r.spec.encode(api::Writer(d, d.GetAllocator()));
    return json::dump(d);
  };
  std::string expected = encode(s.run());
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    std::shuffle(s.node_policies.begin(), s.node_policies.end(), rng);
    std::shuffle(s.resource_policies.begin(), s.resource_policies.end(), rng);
    std::shuffle(s.status.interfaces.begin(), s.status.interfaces.end(), rng);
    for (auto& pf : s.status.interfaces) std::shuffle(pf.vfs.begin(), pf.vfs.end(), rng);
    REQUIRE(encode(s.run()) == expected);
  }
}
