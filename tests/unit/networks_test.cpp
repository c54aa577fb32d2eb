// SriovNetwork and SriovIBNetwork -> NetworkAttachmentDefinition, checked against the SR-IOV
// network operator's own expectations: its golden files (api/v1/testdata/TestRendering,
// TestIBRendering) and the configs its controller tests expect (controllers/
// sriovnetwork_controller_test.go), and its webhook rules (pkg/webhook/validate_networks.go).
#include "policy/networks.h"

#include <catch2/catch.hpp>

#include "base/json.h"

using namespace sriovdra;

namespace {

api::Network network(std::string name, std::string ns, api::NetworkKind kind,
                     const std::function<void(api::NetworkSpec&)>& fn = {}) {
  api::Network n;
  n.kind = kind;
  n.metadata.name = std::move(name);
  n.metadata.namespace_ = std::move(ns);
  n.spec.resource_name = "testresource";
  if (fn) fn(n.spec);
  return n;
}
api::Network sriov(const std::function<void(api::NetworkSpec&)>& fn = {}) {
  return network("test", "ns", api::NetworkKind::kSriov, fn);
}

std::string configOf(const api::Network& n) {
  auto nad = policy::renderNetAttachDef(n, "openshift.io");
  REQUIRE(nad.ok());
  return nad->config;
}

// Upstream's expected configs are compact texts that it indents with encoding/json.Indent.
std::string indented(std::string_view compact) {
  REQUIRE(json::parse(compact).ok());
  return json::indentLikeGo(compact, "    ");
}

constexpr const char* kHostLocal =
    R"({"type":"host-local","subnet":"10.56.217.0/24","rangeStart":"10.56.217.171",)"
    R"("rangeEnd":"10.56.217.181","routes":[{"dst":"0.0.0.0/0"}],"gateway":"10.56.217.1"})";

}  // namespace

TEST_CASE("the golden NADs of the SR-IOV network operator are rendered byte for byte",
          "[policy][networks][unit]") {
  SECTION("TestRendering/simple.golden") {
    auto n = sriov([](auto& s) { s.network_namespace = "testnamespace"; });
    auto nad = policy::renderNetAttachDef(n, "");
    REQUIRE(nad.ok());
    CHECK(nad->name == "test");
    CHECK(nad->namespace_ == "testnamespace");
    CHECK(nad->annotations ==
          std::map<std::string, std::string>{{"sriovnetwork.openshift.io/owner-ref",
                                              "SriovNetwork.sriovnetwork.openshift.io/ns/test"}});
    CHECK(nad->config ==
          "{\n"
          "    \"cniVersion\": \"1.0.0\",\n"
          "    \"name\": \"test\",\n"
          "    \"type\": \"sriov\",\n"
          "    \"vlan\": 0,\n"
          "    \"vlanQoS\": 0,\n"
          "    \"ipam\": {}\n"
          "}");
  }
  SECTION("TestRendering/chained.golden") {
    auto n = sriov([](auto& s) {
      s.network_namespace = "testnamespace";
      s.meta_plugins = R"({"type":"vrf","vrfname":"blue"})";
    });
    CHECK(configOf(n) == indented(R"({ "cniVersion":"1.0.0", "name":"test","plugins": [ )"
                                  R"({"type":"sriov","vlan":0,"vlanQoS":0,"ipam":{} }, )"
                                  R"({"type":"vrf","vrfname":"blue"} ] })"));
  }
  SECTION("TestIBRendering/simpleib.golden") {
    auto n = network("test", "ns", api::NetworkKind::kInfiniBand, [](auto& s) {
      s.network_namespace = "testnamespace";
      s.capabilities = R"({"infinibandGUID":true})";
    });
    auto nad = policy::renderNetAttachDef(n, "");
    REQUIRE(nad.ok());
    CHECK(nad->annotations.at("sriovnetwork.openshift.io/owner-ref") ==
          "SriovIBNetwork.sriovnetwork.openshift.io/ns/test");
    CHECK(nad->config == indented(R"({ "cniVersion":"1.0.0", "name":"test","type":"ib-sriov",)"
                                  R"("capabilities":{"infinibandGUID":true},"ipam":{} })"));
  }
}

TEST_CASE("the configs the upstream controller tests expect", "[policy][networks][unit]") {
  struct Row {
    std::string name;
    std::function<void(api::NetworkSpec&)> spec;
    std::string expected;  // compact, as generateExpectedNetConfig builds it
  };
  std::string ipam = kHostLocal;
  std::vector<Row> rows = {
      {"with vlan flag",
       [&](auto& s) {
         s.ipam = ipam;
         s.vlan = 100;
       },
       R"({ "cniVersion":"1.0.0", "name":"test","type":"sriov","vlan":100,"vlanQoS":0,"ipam":)" +
           ipam + " }"},
      {"with networkNamespace flag",
       [&](auto& s) {
         s.ipam = ipam;
         s.network_namespace = "default";
       },
       R"({ "cniVersion":"1.0.0", "name":"test","type":"sriov","vlan":0,"vlanQoS":0,"ipam":)" +
           ipam + " }"},
      {"with SpoofChk flag on",
       [&](auto& s) {
         s.ipam = ipam;
         s.spoof_chk = "on";
       },
       R"({ "cniVersion":"1.0.0", "name":"test","type":"sriov","vlan":0,"spoofchk":"on",)"
       R"("vlanQoS":0,"ipam":)" +
           ipam + " }"},
      {"with Trust flag on",
       [&](auto& s) {
         s.ipam = ipam;
         s.trust = "on";
       },
       R"({ "cniVersion":"1.0.0", "name":"test","type":"sriov","vlan":0,"trust":"on",)"
       R"("vlanQoS":0,"ipam":)" +
           ipam + " }"},
      {"with vlan flag and ipam updated",
       [](auto& s) {
         s.ipam = R"({"type":"dhcp"})";
         s.vlan = 200;
       },
       R"({ "cniVersion":"1.0.0", "name":"test","type":"sriov","vlan":200,"vlanQoS":0,)"
       R"("ipam":{"type":"dhcp"} })"},
      {"with link state", [](auto& s) { s.link_state = "enable"; },
       R"({ "cniVersion":"1.0.0", "name":"test","type":"sriov","vlan":0,"vlanQoS":0,)"
       R"("link_state":"enable","ipam":{} })"},
  };
  for (const auto& row : rows) {
    SECTION(row.name) { CHECK(configOf(sriov(row.spec)) == indented(row.expected)); }
  }
}

TEST_CASE("every SriovNetwork field lands in the template's order", "[policy][networks][unit]") {
  auto n = sriov([](auto& s) {
    s.vlan = 7;
    s.vlan_qos = 3;
    s.vlan_proto = "802.1ad";
    s.spoof_chk = "off";
    s.trust = "on";
    s.link_state = "auto";
    s.min_tx_rate = 10;
    s.max_tx_rate = 1000;
    s.capabilities = R"({"mac": true, "ips": true})";
    s.log_level = "debug";
    s.log_file = "/var/log/sriov.log";
    s.ipam = R"({"type": "static", "addresses": [{"address": "10.1.0.5/24"}]})";
  });
  CHECK(configOf(n) ==
        indented(R"({"cniVersion":"1.0.0","name":"test","type":"sriov","vlan":7,)"
                 R"("spoofchk":"off","trust":"on","vlanQoS":3,"vlanProto":"802.1ad",)"
                 R"("min_tx_rate":10,"max_tx_rate":1000,"capabilities":{"mac": true, "ips": true},)"
                 R"("link_state":"auto","logLevel":"debug","logFile":"/var/log/sriov.log",)"
                 R"("ipam":{"type":"static","addresses":[{"address":"10.1.0.5/24"}]}})"));
}

TEST_CASE("whitespace is removed from ipam even inside its strings, as upstream does",
          "[policy][networks][unit]") {
  auto n = sriov([](auto& s) {
    s.ipam =
        "{\"type\": \"host-local\",\n \"x\": \"a b\\u00a0c\xc2\xa0"
        "d\"}";
  });
  CHECK(configOf(n) == indented(R"({"cniVersion":"1.0.0","name":"test","type":"sriov","vlan":0,)"
                                R"("vlanQoS":0,"ipam":{"type":"host-local","x":"ab\u00a0cd"}})"));
}

TEST_CASE("an InfiniBand network renders only the fields of its kind", "[policy][networks][unit]") {
  auto doc = json::parse(R"({"metadata":{"name":"ib","namespace":"ns"},"spec":{
      "resourceName":"ib_vfs","linkState":"disable","vlan":5,"trust":"on","logLevel":"debug",
      "metaPlugins":"{\"type\":\"tuning\"}"}})");
  REQUIRE(doc.ok());
  auto ib = api::SriovIBNetwork::decode(*doc);
  REQUIRE(ib.ok());
  CHECK(configOf(*ib) == indented(R"({"cniVersion":"1.0.0","name":"ib","plugins":[)"
                                  R"({"type":"ib-sriov","link_state":"disable","ipam":{}},)"
                                  R"({"type":"tuning"}]})"));
}

TEST_CASE("the resourceName annotation carries the resource prefix", "[policy][networks][unit]") {
  auto nad = policy::renderNetAttachDef(sriov(), "openshift.io");
  REQUIRE(nad.ok());
  CHECK(nad->annotations.at("k8s.v1.cni.cncf.io/resourceName") == "openshift.io/testresource");
  CHECK(nad->namespace_ == "ns");
}

TEST_CASE("network admission rules keep upstream's words", "[policy][networks][unit]") {
  struct Row {
    std::string name;
    std::string ns;
    std::function<void(api::NetworkSpec&)> spec;
    std::string expected;  // "" = valid
  };
  std::vector<Row> rows = {
      {"valid", "sriov-dra", [](auto& s) { s.ipam = kHostLocal; }, ""},
      {"networkNamespace from the operator namespace", "sriov-dra",
       [](auto& s) { s.network_namespace = "apps"; }, ""},
      {"networkNamespace elsewhere", "apps", [](auto& s) { s.network_namespace = "other"; },
       ".Spec.NetworkNamespace field can't be specified if the resource is not in the sriov-dra "
       "namespace"},
      {"networkNamespace that would end a request line", "sriov-dra",
       [](auto& s) { s.network_namespace = "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api"; },
       R"(networkNamespace "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /api" is not a namespace name)"},
      {"networkNamespace encoded", "sriov-dra", [](auto& s) { s.network_namespace = "a%2Fb"; },
       "networkNamespace \"a%2Fb\" is not a namespace name"},
      {"capabilities not booleans", "sriov-dra", [](auto& s) { s.capabilities = R"({"mac":1})"; },
       "capabilities must be a JSON object with boolean values"},
      {"capabilities not JSON", "sriov-dra", [](auto& s) { s.capabilities = "mac"; },
       "capabilities must be a JSON object with boolean values"},
      {"ipam not JSON", "sriov-dra", [](auto& s) { s.ipam = "{type: dhcp}"; },
       "ipam must be a valid JSON object"},
      {"ipam an array", "sriov-dra", [](auto& s) { s.ipam = "[]"; },
       "ipam must be a valid JSON object"},
      {"ipam without type", "sriov-dra", [](auto& s) { s.ipam = R"({"subnet":"10.0.0.0/8"})"; },
       "ipam must contain a \"type\" field"},
      {"ipam type not a string", "sriov-dra", [](auto& s) { s.ipam = R"({"type":1})"; },
       "ipam \"type\" must be a string"},
      {"ipam type empty", "sriov-dra", [](auto& s) { s.ipam = R"({"type":""})"; },
       "ipam \"type\" must not be empty"},
      {"metaPlugins not JSON", "sriov-dra", [](auto& s) { s.meta_plugins = "tuning"; },
       "metaPlugins must be one or more JSON plugin objects"},
      {"metaPlugins an array", "sriov-dra", [](auto& s) { s.meta_plugins = R"([{"type":"x"}])"; },
       "metaPlugins must be one or more JSON plugin objects"},
      {"metaPlugins without type", "sriov-dra",
       [](auto& s) { s.meta_plugins = R"({"type":"tuning"},{"mtu":9000})"; },
       "metaPlugins[1] must contain a \"type\" field"},
      {"metaPlugins blank type", "sriov-dra", [](auto& s) { s.meta_plugins = R"({"type":" "})"; },
       "metaPlugins[0] \"type\" must not be empty"},
      {"logFile with a quote", "sriov-dra", [](auto& s) { s.log_file = R"(x","type":"evil)"; },
       "logFile must not contain quotes or backslashes"},
  };
  for (const auto& row : rows) {
    SECTION(row.name) {
      auto f = policy::validateNetwork(network("net", row.ns, api::NetworkKind::kSriov, row.spec),
                                       "sriov-dra");
      if (row.expected.empty()) {
        CHECK(f.errors.empty());
      } else {
        REQUIRE(f.errors.size() == 1);
        CHECK_THAT(f.errors[0], Catch::Contains(row.expected));
        auto rendered = policy::renderNetAttachDef(
            network("net", row.ns, api::NetworkKind::kSriov, row.spec), "");
        if (row.name != "networkNamespace elsewhere") CHECK_FALSE(rendered.ok());
      }
    }
  }
}

TEST_CASE("owner-ref annotations name the network they came from", "[policy][networks][unit]") {
  auto ref = policy::parseOwnerRef("SriovIBNetwork.sriovnetwork.openshift.io/sriov-dra/ib-net");
  REQUIRE(ref);
  CHECK(ref->kind == api::NetworkKind::kInfiniBand);
  CHECK(ref->namespace_ == "sriov-dra");
  CHECK(ref->name == "ib-net");
  CHECK(policy::parseOwnerRef(policy::ownerRef(sriov()))->name == "test");
  for (const char* bad :
       {"", "SriovNetwork", "OVSNetwork.sriovnetwork.openshift.io/a/b",
        "SriovNetwork.example.com/a/b", "SriovNetwork.sriovnetwork.openshift.io//b",
        "SriovNetwork.sriovnetwork.openshift.io/a/"}) {
    CHECK_FALSE(policy::parseOwnerRef(bad));
  }
}

TEST_CASE("a NAD's owner is a namesake in another namespace or not", "[policy][networks][unit]") {
  auto n = sriov();  // SriovNetwork "test" in its own namespace
  const std::string sno = "sriov-network-operator";
  CHECK(policy::namesakeNamespace("SriovNetwork.sriovnetwork.openshift.io/" + sno + "/test", n) ==
        sno);
  CHECK_FALSE(
      policy::namesakeNamespace("SriovNetwork.sriovnetwork.openshift.io/" + sno + "/other", n));
  CHECK_FALSE(
      policy::namesakeNamespace("SriovIBNetwork.sriovnetwork.openshift.io/" + sno + "/test", n));
  CHECK_FALSE(policy::namesakeNamespace(policy::ownerRef(n), n));  // itself
  CHECK_FALSE(policy::namesakeNamespace("garbage", n));
}
