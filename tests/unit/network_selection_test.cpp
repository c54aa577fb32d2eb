// Multus's network selection annotation read as Multus reads it, and the VFs of a pod's
// extended-resource claims matched to its networks as Multus matches device-plugin devices.
#include "dra/network_selection.h"

#include <catch2/catch.hpp>

using namespace sriovdra;
using dra::NetworkSelection;

namespace {

NetworkSelection net(std::string ns, std::string name, int position, std::string interface = "") {
  NetworkSelection n;
  n.namespace_ = std::move(ns);
  n.name = std::move(name);
  n.position = position;
  n.interface = std::move(interface);
  return n;
}

}  // namespace

TEST_CASE("the networks annotation in Multus's text form", "[unit][network_selection]") {
  struct Row {
    std::string annotation;
    std::vector<NetworkSelection> want;
  };
  auto row = GENERATE(values<Row>({
      {"", {}},
      {"  ", {}},
      {"cx6-vf", {net("llm", "cx6-vf", 0)}},
      {"other/cx6-vf", {net("other", "cx6-vf", 0)}},
      {"cx6-vf@ib0", {net("llm", "cx6-vf", 0, "ib0")}},
      {"a, b/c@net7 ,d", {net("llm", "a", 0), net("b", "c", 1, "net7"), net("llm", "d", 2)}},
  }));
  auto got = dra::parseNetworkSelection(row.annotation, "llm");
  INFO(row.annotation);
  REQUIRE(got.ok());
  CHECK(*got == row.want);
}

TEST_CASE("the networks annotation as JSON, with what Multus passes to plugins",
          "[unit][network_selection]") {
  auto got = dra::parseNetworkSelection(
      R"([{"name":"cx6-vf","interface":"ib1","infiniband-guid":"c2:11:22:33:44:55:66:77"},
          {"name":"roce","namespace":"shared","mac":"02:00:00:00:00:01",
           "ips":["10.1.0.5/24","fd00::5/64"],"default-route":["10.1.0.1"],"cni-args":{"a":1}}])",
      "llm");
  REQUIRE(got.ok());
  REQUIRE(got->size() == 2);
  auto first = net("llm", "cx6-vf", 0, "ib1");
  first.infiniband_guid = "c2:11:22:33:44:55:66:77";
  CHECK((*got)[0] == first);
  auto second = net("shared", "roce", 1);
  second.mac = "02:00:00:00:00:01";
  second.ips = {"10.1.0.5/24", "fd00::5/64"};
  CHECK((*got)[1] == second);
}

TEST_CASE("a malformed networks annotation is refused saying where", "[unit][network_selection]") {
  struct Row {
    std::string annotation;
    std::string says;
  };
  auto row = GENERATE(values<Row>({
      {"a/b/c", "element 1: more than one '/'"},
      {"ok, a@b@c", "element 2: more than one '@'"},
      {"Upper", "element 1: \"Upper\" must consist of lower case"},
      {"a@eth 0", "element 1: \"eth 0\" must consist"},
      {"{\"name\":\"a\"}", "JSON that is not a list"},
      {"[{\"name\":\"a\"", "not valid JSON"},
      {"[\"a\"]", "element 1 is not an object"},
      {"[{\"namespace\":\"x\"}]", "element 1: network name \"\" is not a DNS-1123 subdomain"},
      {"[{\"name\":\"a\",\"namespace\":\"x/y\"}]", "namespace \"x/y\" is not a DNS-1123 label"},
      {"[{\"name\":\"a\",\"interface\":\"a-very-long-interface-name\"}]", "interface"},
      {"[{\"name\":\"a\",\"ips\":\"10.0.0.1\"}]", "\"ips\" is not a list"},
      {"[{\"name\":\"a\",\"mac\":7}]", "\"mac\" is not a string"},
      {"x\r\nHost: y", "must consist of lower case"},
      {"a,,b", "element 2: network name \"\" is not a DNS-1123 subdomain"},
      {"a,", "element 2: network name \"\""},
      {"[{\"name\":\"a\",\"interface\":\"eth0\"}]", "interface eth0 is the pod's own"},
      {"a@lo", "interface lo is the pod's own"},
      {"[{\"name\":\"a\",\"interface\":\"n\\u001b[31m\"}]", "has a character interface names"},
      {"[{\"name\":\"a\",\"mac\":\"02:00:00:00:00:01\\\",\\\"x\"}]", "is not a MAC address"},
      {"[{\"name\":\"a\",\"mac\":\"0200.0000.0001\"}]", "is not a MAC address"},
      {"[{\"name\":\"a\",\"infiniband-guid\":\"02:00:00:00:00:00:00\"}]", "is not a GUID"},
      {"[{\"name\":\"a\",\"ips\":[\"10.1.0.5\"]}]",
       "\"10.1.0.5\" is not an address with its prefix"},
      {"[{\"name\":\"a\",\"ips\":[\"10.1.0.5/24\\\"}\"]}]", "is not an address with its prefix"},
  }));
  auto got = dra::parseNetworkSelection(row.annotation, "llm");
  INFO(row.annotation);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == Code::kInvalidArgument);
  CHECK_THAT(got.status().message(), Catch::StartsWith("annotation k8s.v1.cni.cncf.io/networks") &&
                                         Catch::Contains(row.says));
}

TEST_CASE("an annotation is read only up to its bounds", "[unit][network_selection]") {
  std::string many;
  for (int i = 0; i < 33; ++i) many += (i == 0 ? "n" : ",n") + std::to_string(i);
  auto text = dra::parseNetworkSelection(many, "llm");
  REQUIRE_FALSE(text.ok());
  CHECK_THAT(text.status().message(),
             Catch::Contains("names 33 networks; the agent reads at most 32"));
  std::string list = "[";
  for (int i = 0; i < 33; ++i) list += std::string(i == 0 ? "" : ",") + R"({"name":"n"})";
  CHECK_FALSE(dra::parseNetworkSelection(list + "]", "llm").ok());
  std::string ips = R"([{"name":"n","ips":[)";
  for (int i = 0; i < 17; ++i)
    ips += std::string(i == 0 ? "" : ",") + "\"10.0.0." + std::to_string(i) + "/24\"";
  auto many_ips = dra::parseNetworkSelection(ips + "]}]", "llm");
  REQUIRE_FALSE(many_ips.ok());
  CHECK_THAT(many_ips.status().message(), Catch::Contains("17 ips, at most 16"));
  CHECK(dra::parseNetworkSelection(many.substr(0, many.rfind(',')), "llm")->size() == 32);
}

TEST_CASE("each network for a resource takes the next VF of it, named as Multus names it",
          "[unit][network_selection]") {
  // The e810 VF is on vfio-pci: a device, which no network has to take.
  const std::vector<dra::ResourceVf> vfs = {{"c1", "0000-11-00-1", "openshift.io/cx6_vfs"},
                                            {"c1", "0000-11-00-2", "openshift.io/cx6_vfs"},
                                            {"c2", "0000-3b-01-0", "example.com/e810_vfs", false}};
  const std::map<std::string, std::string> nads = {{"llm/ib-a", "openshift.io/cx6_vfs"},
                                                   {"llm/ib-b", "openshift.io/cx6_vfs"},
                                                   {"llm/eth", "example.com/e810_vfs"},
                                                   {"llm/other", "intel.com/cx6_vfs"},
                                                   {"llm/flannel", ""}};
  SECTION("in annotation order; a network for no resource keeps its position") {
    auto networks = {net("llm", "flannel", 0), net("llm", "ib-b", 1), net("llm", "eth", 2, "data0"),
                     net("llm", "ib-a", 3)};
    auto got = dra::assignNetworks(vfs, networks, nads);
    REQUIRE(got.ok());
    REQUIRE(got->size() == 3);
    CHECK((*got)[0].vf == vfs[0]);
    CHECK((*got)[0].network.name == "ib-b");
    CHECK((*got)[0].if_name == "net2");
    CHECK((*got)[1].vf == vfs[2]);
    CHECK((*got)[1].if_name == "data0");
    CHECK((*got)[2].vf == vfs[1]);
    CHECK((*got)[2].if_name == "net4");
  }
  SECTION("a device no network names stays unattached; a network interface cannot") {
    auto got = dra::assignNetworks(vfs, {net("llm", "ib-a", 0), net("llm", "ib-b", 1)}, nads);
    REQUIRE(got.ok());
    CHECK(got->size() == 2);
    auto missing = dra::assignNetworks(vfs, {net("llm", "eth", 0), net("llm", "ib-a", 1)}, nads);
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(missing.status().message(),
               Catch::Contains("VF 0000-11-00-2 of resource openshift.io/cx6_vfs stays a network "
                               "interface, but no network the annotation names is for that "
                               "resource"));
  }
  SECTION("another prefix's resource is another resource") {
    auto got = dra::assignNetworks(vfs, {net("llm", "other", 0)}, nads);
    REQUIRE_FALSE(got.ok());
    CHECK_THAT(got.status().message(),
               Catch::Contains("network llm/other is for resource intel.com/cx6_vfs, but the pod "
                               "holds no more VFs of it"));
  }
  SECTION("a NAD the agent did not read takes no VF") {
    auto got =
        dra::assignNetworks({vfs[2]}, {net("other", "ib-a", 0), net("llm", "flannel", 1)}, nads);
    REQUIRE(got.ok());
    CHECK(got->empty());
  }
  SECTION("more networks of a resource than the pod has VFs of it") {
    auto got =
        dra::assignNetworks(vfs, {net("llm", "eth", 0), net("llm", "eth", 1, "data1")}, nads);
    REQUIRE_FALSE(got.ok());
    CHECK_THAT(got.status().message(),
               Catch::Contains("network llm/eth is for resource example.com/e810_vfs, but the pod "
                               "holds no more VFs of it"));
  }
}
