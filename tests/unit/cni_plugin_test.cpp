// The plugin's side of CNI, pure: the reference skeleton's checks and answers, results of every
// version, Go's JSON decoding rules, and the sriov plugin's configuration and cache in upstream's
// format.
#include <map>

#include <catch2/catch.hpp>

#include "base/json.h"
#include "cni/go_json.h"
#include "cni/result.h"
#include "cni/skel.h"
#include "sriovcni/netconf.h"

using namespace sriovdra;

namespace {

cni::Getenv envOf(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::string() : it->second;
  };
}

std::map<std::string, std::string> addEnv() {
  return {{"CNI_COMMAND", "ADD"},
          {"CNI_CONTAINERID", "c1"},
          {"CNI_NETNS", "/var/run/netns/p"},
          {"CNI_IFNAME", "net1"},
          {"CNI_PATH", "/opt/cni/bin"}};
}

cni::PluginError errorOf(std::variant<cni::CmdArgs, cni::PluginError> v) {
  REQUIRE(std::holds_alternative<cni::PluginError>(v));
  return std::get<cni::PluginError>(v);
}

}  // namespace

TEST_CASE("the skeleton refuses what the reference skeleton refuses, with its codes",
          "[cni][unit]") {
  const std::string config = R"({"cniVersion":"1.0.0","name":"net","type":"sriov"})";
  struct Case {
    std::string what;
    std::map<std::string, std::string> env;
    std::string stdin_data;
    cni::PluginError want;
  };
  auto without = [](const std::string& var) {
    auto e = addEnv();
    e.erase(var);
    return e;
  };
  auto with = [](const std::string& var, std::string value) {
    auto e = addEnv();
    e[var] = std::move(value);
    return e;
  };
  std::vector<Case> cases = {
      {"no command", {}, config, {4, "required env variables [CNI_COMMAND] missing", ""}},
      {"ADD without netns and path",
       without("CNI_NETNS"),
       config,
       {4, "required env variables [CNI_NETNS] missing", ""}},
      {"bad container id",
       with("CNI_CONTAINERID", "-x"),
       config,
       {4, "invalid characters in containerID", "-x"}},
      {"long interface name",
       with("CNI_IFNAME", "abcdefghijklmnop"),
       config,
       {4, "interface name is too long", "interface name should be less than 16 characters"}},
      {"interface name with a slash",
       with("CNI_IFNAME", "a/b"),
       config,
       {4, "interface name contains / or : or whitespace characters", ""}},
      {"interface name ..", with("CNI_IFNAME", ".."), config, {4, "interface name is . or ..", ""}},
      {"not JSON", addEnv(), "{", {6, "", ""}},
      {"no name", addEnv(), R"({"cniVersion":"1.0.0"})", {7, "missing network name", ""}},
      {"bad name",
       addEnv(),
       R"({"name":"a b"})",
       {7, "invalid characters found in network name", "a b"}},
      {"unknown command", with("CNI_COMMAND", "FOO"), config, {4, "unknown CNI_COMMAND: FOO", ""}},
      {"unsupported version",
       addEnv(),
       R"({"cniVersion":"2.0.0","name":"n"})",
       {1, "incompatible CNI versions",
        R"(config is "2.0.0", plugin supports ["0.1.0" "0.2.0" "0.3.0" "0.3.1" "0.4.0" "1.0.0" "1.1.0"])"}},
      {"a second cniVersion in another case: the last one counts, as in Go",
       addEnv(),
       R"({"cniVersion":"1.0.0","name":"n","CNIVersion":"9"})",
       {1, "incompatible CNI versions",
        R"(config is "9", plugin supports ["0.1.0" "0.2.0" "0.3.0" "0.3.1" "0.4.0" "1.0.0" "1.1.0"])"}},
      {"CHECK before 0.4.0",
       with("CNI_COMMAND", "CHECK"),
       R"({"cniVersion":"0.3.1","name":"n"})",
       {1, "config version does not allow CHECK", ""}},
      {"STATUS before 1.1.0",
       {{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", "/x"}},
       config,
       {1, "config version does not allow STATUS", ""}},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    auto e = errorOf(cni::prepareCommand(envOf(c.env), c.stdin_data));
    CHECK(e.code == c.want.code);
    if (!c.want.msg.empty()) CHECK(e.msg == c.want.msg);
    CHECK(e.details == c.want.details);
  }
}

TEST_CASE("the skeleton passes a valid command on, DEL without a netns, VERSION without stdin",
          "[cni][unit]") {
  auto del = addEnv();
  del["CNI_COMMAND"] = "DEL";
  del.erase("CNI_NETNS");
  auto prepared = cni::prepareCommand(envOf(del), R"({"name":"n"})");
  REQUIRE(std::holds_alternative<cni::CmdArgs>(prepared));
  const auto& args = std::get<cni::CmdArgs>(prepared);
  CHECK(args.command == cni::PluginCommand::kDel);
  CHECK(args.cni_version == "0.1.0");  // none named
  CHECK(args.netns.empty());
  auto version = cni::prepareCommand(envOf({{"CNI_COMMAND", "VERSION"}}), "");
  REQUIRE(std::holds_alternative<cni::CmdArgs>(version));
  CHECK(
      cni::versionJson() ==
      R"({"cniVersion":"1.1.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]})"
      "\n");
  auto override_env = addEnv();
  override_env["CNI_NETNS_OVERRIDE"] = "true";
  auto o = cni::prepareCommand(envOf(override_env), R"({"cniVersion":"1.0.0","name":"n"})");
  CHECK(std::get<cni::CmdArgs>(o).netnsOverridden());
}

TEST_CASE("errors print as Go prints them: four spaces, no newline, HTML characters escaped",
          "[cni][unit]") {
  CHECK(cni::errorJson({999, "a <b> & c", ""}) ==
        "{\n    \"code\": 999,\n    \"msg\": \"a \\u003cb\\u003e \\u0026 c\"\n}");
  CHECK(cni::errorJson({1, "m", "d"}) ==
        "{\n    \"code\": 1,\n    \"msg\": \"m\",\n    \"details\": \"d\"\n}");
}

TEST_CASE("a result is read from any version and written in the one the config asks for",
          "[cni][unit]") {
  auto r = cni::CniResult::parse(
      R"({"cniVersion":"0.4.0","interfaces":[{"name":"net1","mac":"02:00:00:00:00:01","sandbox":"/p"}],)"
      R"("ips":[{"version":"4","interface":0,"address":"10.1.0.5/24","gateway":"10.1.0.1"},)"
      R"({"version":"6","address":"fd00::5/64"}],"routes":[{"dst":"10.60.0.0/16"}],)"
      R"("dns":{"nameservers":["10.1.0.2"]}})");
  REQUIRE(r.ok());
  CHECK(r->ips.size() == 2);
  r->interfaces[0].mtu = 1500;
  CHECK(
      r->encode("1.0.0").value() ==
      "{\n    \"cniVersion\": \"1.0.0\",\n    \"interfaces\": [\n        {\n"
      "            \"name\": \"net1\",\n            \"mac\": \"02:00:00:00:00:01\",\n"
      "            \"mtu\": 1500,\n            \"sandbox\": \"/p\"\n        }\n    ],\n"
      "    \"ips\": [\n        {\n            \"interface\": 0,\n"
      "            \"address\": \"10.1.0.5/24\",\n            \"gateway\": \"10.1.0.1\"\n"
      "        },\n        {\n            \"address\": \"fd00::5/64\"\n        }\n    ],\n"
      "    \"routes\": [\n        {\n            \"dst\": \"10.60.0.0/16\"\n        }\n    ],\n"
      "    \"dns\": {\n        \"nameservers\": [\n            \"10.1.0.2\"\n        ]\n    }\n}");
  auto v04 = json::parse(r->encode("0.4.0").value());
  REQUIRE(v04.ok());
  CHECK(
      json::dump(*v04) ==
      R"({"cniVersion":"0.4.0","interfaces":[{"name":"net1","mac":"02:00:00:00:00:01","sandbox":"/p"}],)"
      R"("ips":[{"version":"4","interface":0,"address":"10.1.0.5/24","gateway":"10.1.0.1"},)"
      R"({"version":"6","address":"fd00::5/64"}],"routes":[{"dst":"10.60.0.0/16"}],)"
      R"("dns":{"nameservers":["10.1.0.2"]}})");
  auto v02 = json::parse(r->encode("0.2.0").value());
  REQUIRE(v02.ok());
  CHECK(json::dump(*v02) ==
        R"({"cniVersion":"0.2.0","ip4":{"ip":"10.1.0.5/24","gateway":"10.1.0.1",)"
        R"("routes":[{"dst":"10.60.0.0/16"}]},"ip6":{"ip":"fd00::5/64"},)"
        R"("dns":{"nameservers":["10.1.0.2"]}})");
  // And back: a 0.2.0 result as the 1.x model.
  auto again = cni::CniResult::parse(r->encode("0.2.0").value());
  REQUIRE(again.ok());
  CHECK(again->ips.size() == 2);
  CHECK(again->routes.size() == 1);
  CHECK_FALSE(
      cni::CniResult::parse(R"({"cniVersion":"1.0.0","ips":[{"address":"10.1.0.5"}]})").ok());
  CHECK_FALSE(r->encode("0.9.0").ok());
}

TEST_CASE("fields are read as Go's encoding/json fills a struct", "[cni][unit]") {
  auto doc = json::parse(R"({"VLAN":1,"vlan":2,"Trust":"on","mtu":null,"n":1.5,"big":4294967296})");
  REQUIRE(doc.ok());
  cni::GoFields f(*doc, "NetConf");
  CHECK(f.integer("vlan")->value() == 2);  // the last key naming it, any case
  CHECK(f.string("trust")->value() == "on");
  CHECK_FALSE(f.integer("mtu")->has_value());  // null: absent
  CHECK(f.integer("n").status().message() ==
        "json: cannot unmarshal number 1.5 into Go struct field NetConf.n of type int");
  CHECK(f.integer("big", 32, true).status().message() ==
        "json: cannot unmarshal number 4294967296 into Go struct field NetConf.big of type uint32");
  CHECK(f.string("vlan").status().message() ==
        "json: cannot unmarshal number 2 into Go struct field NetConf.vlan of type string");
  CHECK(cni::goQuote("a \"b\"\n\x01") == "\"a \\\"b\\\"\\n\\x01\"");
}

TEST_CASE("the sriov configuration is checked with upstream's messages", "[cni][unit]") {
  struct Case {
    std::string config;
    std::string error;  // "" = accepted
  };
  std::vector<Case> cases = {
      {R"({"vlan":100})", ""},
      {R"({"vlan":4095})", "LoadConf(): vlan id 4095 invalid: value must be in the range 0-4094"},
      {R"({"vlanQoS":1})",
       "LoadConf(): vlan id must be configured to set vlan QoS to a non-nil value"},
      {R"({"vlanProto":"802.1q"})",
       "LoadConf(): vlan id must be configured to set vlan proto to a non-nil value"},
      {R"({"vlan":1,"vlanQoS":8})",
       "LoadConf(): vlan QoS PCP 8 invalid: value must be in the range 0-7"},
      {R"({"vlan":0,"vlanQoS":1})",
       "LoadConf(): non-zero vlan id must be configured to set vlan QoS to a non-zero value"},
      {R"({"vlan":5,"vlanProto":"802.1x"})",
       "LoadConf(): vlan Proto 802.1x invalid: value must be '802.1Q' or '802.1ad'"},
      {R"({"vlan":0,"vlanProto":"802.1AD"})",
       "LoadConf(): non-zero vlan id must be configured to set vlan proto 802.1ad"},
      {R"({"link_state":"Enable"})", "LoadConf(): invalid link_state value: Enable"},
  };
  for (const auto& c : cases) {
    INFO(c.config);
    auto conf = sriovcni::decodeNetConf(c.config);
    REQUIRE(conf.ok());
    Status st = sriovcni::checkNetConf(*conf);
    CHECK(st.message() == c.error);
  }
  auto conf = sriovcni::decodeNetConf(R"({"vlan":7,"vlanProto":"802.1AD"})");
  REQUIRE(sriovcni::checkNetConf(*conf).isOk());
  CHECK(conf->vlan_qos == 0);
  CHECK(conf->vlan_proto == "802.1ad");
  CHECK(sriovcni::decodeNetConf(R"({"vlan":"7"})").status().message() ==
        "LoadConf(): failed to load netconf: json: cannot unmarshal string into Go struct field "
        "SriovNetConf.vlan of type int");
  CHECK_FALSE(sriovcni::decodeNetConf(R"({"MTU":"x"})").ok());
  CHECK_FALSE(sriovcni::decodeNetConf(R"({"capabilities":{"mac":"yes"}})").ok());
}

TEST_CASE("CNI_ARGS are read as LoadArgs reads them", "[cni][unit]") {
  CHECK(sriovcni::macFromArgs("").value().empty());
  CHECK(sriovcni::macFromArgs("IgnoreUnknown=1;K8S_POD_NAME=a;MAC=02:00:00:00:00:09").value() ==
        "02:00:00:00:00:09");
  CHECK(sriovcni::macFromArgs("K8S_POD_NAME=a").status().message() ==
        "ARGS: unknown args [\"K8S_POD_NAME=a\"]");
  CHECK(sriovcni::macFromArgs("MAC").status().message() == "ARGS: invalid pair \"MAC\"");
  CHECK(sriovcni::macFromArgs("IgnoreUnknown=maybe").status().message() ==
        "ARGS: error parsing value of pair \"IgnoreUnknown=maybe\": boolean unmarshal error: "
        "invalid input maybe");
  CHECK(sriovcni::macFromArgs("mac=02:00:00:00:00:09").status().message() ==
        "ARGS: unknown args [\"mac=02:00:00:00:00:09\"]");  // Go field names are exact
}

TEST_CASE("a cache written by upstream's sriov plugin is read, and ours is written the same way",
          "[cni][unit]") {
  // As upstream's SaveNetConf writes it (sorted keys, compact), for an ADD with VLAN 1234.
  const std::string upstream =
      R"({"MAC":"","MTU":1500,"Master":"enp175s0f1","OrigVfState":{"AdminMAC":"00:00:00:00:00:00",)"
      R"("EffectiveMAC":"26:5c:5e:2a:4c:9c","HostIFName":"enp175s6","LinkState":0,"MTU":1500,)"
      R"("MaxTxRate":0,"MinTxRate":0,"SpoofChk":true,"Trust":false,"Vlan":0,"VlanProto":33024,)"
      R"("VlanQoS":0},"VFID":0,"cniVersion":"0.3.1","deviceID":"0000:af:06.0",)"
      R"("ipam":{"type":"host-local"},"max_tx_rate":null,"min_tx_rate":null,"name":"sriov-network",)"
      R"("runtimeConfig":{},"spoofchk":"off","type":"sriov","vlan":1234,"vlanProto":"802.1q",)"
      R"("vlanQoS":0})";
  auto c = sriovcni::decodeCache(upstream);
  REQUIRE(c.ok());
  CHECK(c->master == "enp175s0f1");
  CHECK(c->device_id == "0000:af:06.0");
  CHECK(c->vlan == 1234);
  CHECK(c->orig.host_if_name == "enp175s6");
  CHECK(c->orig.effective_mac == "26:5c:5e:2a:4c:9c");
  CHECK(c->orig.spoofchk);
  CHECK(c->orig.vlan_proto == 33024);
  CHECK(c->plugin.ipam_type == "host-local");
  CHECK_FALSE(c->dpdk_mode);
  // Ours is upstream's with DPDKMode (which upstream's decoder ignores) in its sorted place.
  std::string ours = upstream;
  ours.insert(1, R"("DPDKMode":false,)");
  CHECK(sriovcni::encodeCache(*c) == ours);
  CHECK(sriovcni::decodeCache(ours).value() == *c);
  CHECK_FALSE(sriovcni::decodeCache("{").ok());
  CHECK_FALSE(sriovcni::decodeCache(R"({"OrigVfState":{"LinkState":-1}})").ok());
}
