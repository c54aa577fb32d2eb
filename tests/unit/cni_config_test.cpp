// CNI for a runtime, pure: configurations and lists, what they may run, deviceID, the environment
// and stdin each plugin gets, results and errors, by the CNI 1.0 specification.
#include <map>

#include <catch2/catch.hpp>

#include "base/json.h"
#include "cni/allow.h"
#include "cni/config.h"

using namespace sriovdra;

namespace {

cni::RuntimeArgs args() {
  return {"sandbox-1", "/var/run/netns/p1", "net1", "apps", "web-0", "uid-1", {"/opt/cni/bin"}};
}

std::string member(const std::string& json_text, std::initializer_list<std::string_view> path) {
  auto doc = json::parse(json_text);
  REQUIRE(doc.ok());
  const json::Value* v = json::at(*doc, path);
  return v == nullptr ? "<none>" : json::dump(*v);
}

}  // namespace

TEST_CASE("a single configuration and a list are both networks", "[cni][unit]") {
  auto single = cni::parseNetworkConfig(
      R"({"cniVersion":"1.0.0","name":"cx6-net","type":"sriov","vlan":100,"ipam":{}})");
  REQUIRE(single.ok());
  CHECK(single->types == std::vector<std::string>{"sriov"});
  CHECK(single->name == "cx6-net");
  auto list = cni::parseNetworkConfig(
      R"({"cniVersion":"1.0.0","name":"chain","plugins":[{"type":"sriov"},{"type":"vrf","vrfname":"blue"}]})");
  REQUIRE(list.ok());
  CHECK(list->types == std::vector<std::string>{"sriov", "vrf"});
  // Each plugin gets the list's version and name, and the previous result.
  std::string second = cni::pluginInput(*list, 1, R"({"cniVersion":"1.0.0","ips":[]})");
  CHECK(member(second, {"name"}) == "\"chain\"");
  CHECK(member(second, {"cniVersion"}) == "\"1.0.0\"");
  CHECK(member(second, {"vrfname"}) == "\"blue\"");
  CHECK(member(second, {"prevResult", "ips"}) == "[]");
  CHECK(member(cni::pluginInput(*list, 0, ""), {"prevResult"}) == "<none>");
}

TEST_CASE("a plugin type is a binary's name, nothing else", "[cni][unit]") {
  for (const char* bad :
       {R"({"type":"../../bin/sh"})", R"({"type":"/bin/sh"})", R"({"type":".hidden"})",
        R"({"type":""})", R"({"type":7})", R"({"name":"x"})", R"({"plugins":[]})",
        R"({"plugins":[{"type":"a b"}]})", R"([1])", "not json"}) {
    INFO(bad);
    auto c = cni::parseNetworkConfig(bad);
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().code() == Code::kInvalidArgument);
  }
  auto named = cni::parseNetworkConfig(R"({"type":"../x"})");
  CHECK_THAT(named.status().message(), Catch::Contains("\"../x\" is not a CNI plugin name"));
}

TEST_CASE("deviceID goes where the reference driver and the SR-IOV CNI read it", "[cni][unit]") {
  auto single =
      cni::withRuntimeConfig(R"({"type":"sriov","vlan":1})", {.device_id = "0000:11:00.1"});
  REQUIRE(single.ok());
  CHECK(member(*single, {"deviceID"}) == "\"0000:11:00.1\"");
  auto list =
      cni::withRuntimeConfig(R"({"name":"c","plugins":[{"type":"sriov"},{"type":"tuning"}]})",
                             {.device_id = "0000:11:00.1"});
  REQUIRE(list.ok());
  CHECK(member(*list, {"deviceID"}) == "\"0000:11:00.1\"");
  auto doc = json::parse(*list);
  CHECK(json::stringOr((*doc)["plugins"][0], "deviceID") == "0000:11:00.1");
  CHECK(json::stringOr((*doc)["plugins"][1], "deviceID").empty());
  // The "deviceID" capability (CNI's conventions): runtimeConfig of the plugins that declare it.
  auto capable = cni::withRuntimeConfig(
      R"({"name":"c","plugins":[{"type":"a"},{"type":"host-device","capabilities":{"deviceID":true}}]})",
      {.device_id = "0000:11:00.1"});
  REQUIRE(capable.ok());
  doc = json::parse(*capable);
  CHECK(json::at((*doc)["plugins"][0], {"runtimeConfig"}) == nullptr);
  CHECK(json::stringOr(*json::at((*doc)["plugins"][1], {"runtimeConfig"}), "deviceID") ==
        "0000:11:00.1");
  auto one = cni::withRuntimeConfig(R"({"type":"host-device","capabilities":{"deviceID":true}})",
                                    {.device_id = "0000:11:00.1"});
  REQUIRE(one.ok());
  CHECK(member(*one, {"runtimeConfig", "deviceID"}) == "\"0000:11:00.1\"");
}

TEST_CASE("a pod's mac, ips and GUID reach the plugins that declare those capabilities",
          "[cni][unit]") {
  const cni::RuntimeConfig values{.device_id = "0000:11:00.1",
                                  .mac = "02:00:00:00:00:01",
                                  .ips = {"10.1.0.5/24", "fd00::5/64"},
                                  .infiniband_guid = "c2:11:22:33:44:55:66:77"};
  auto got = cni::withRuntimeConfig(
      R"({"name":"c","plugins":[)"
      R"({"type":"sriov","capabilities":{"mac":true,"ips":true,"infinibandGUID":false}},)"
      R"({"type":"ib-sriov","capabilities":{"infinibandGUID":true}},{"type":"tuning"}]})",
      values);
  REQUIRE(got.ok());
  auto doc = json::parse(*got);
  REQUIRE(doc.ok());
  CHECK(json::dump(*json::at((*doc)["plugins"][0], {"runtimeConfig"})) ==
        R"({"mac":"02:00:00:00:00:01","ips":["10.1.0.5/24","fd00::5/64"]})");
  CHECK(json::dump(*json::at((*doc)["plugins"][1], {"runtimeConfig"})) ==
        R"({"infinibandGUID":"c2:11:22:33:44:55:66:77"})");
  CHECK(json::at((*doc)["plugins"][2], {"runtimeConfig"}) == nullptr);
  // Nothing given: a declared capability gets no empty value.
  auto none = cni::withRuntimeConfig(R"({"type":"sriov","capabilities":{"mac":true,"ips":true}})",
                                     {.device_id = "0000:11:00.1"});
  REQUIRE(none.ok());
  CHECK(member(*none, {"runtimeConfig"}) == "<none>");
}

TEST_CASE("the environment is the CNI protocol's, with the pod's arguments", "[cni][unit]") {
  auto env = cni::environment(cni::Command::kAdd, args());
  std::map<std::string, std::string> m(env.begin(), env.end());
  CHECK(m.at("CNI_COMMAND") == "ADD");
  CHECK(m.at("CNI_CONTAINERID") == "sandbox-1");
  CHECK(m.at("CNI_NETNS") == "/var/run/netns/p1");
  CHECK(m.at("CNI_IFNAME") == "net1");
  CHECK(m.at("CNI_PATH") == "/opt/cni/bin");
  CHECK(m.at("CNI_ARGS") ==
        "IgnoreUnknown=true;K8S_POD_NAMESPACE=apps;K8S_POD_NAME=web-0;"
        "K8S_POD_INFRA_CONTAINER_ID=sandbox-1;K8S_POD_UID=uid-1");
  CHECK(cni::environment(cni::Command::kDel, args())[0].second == "DEL");
}

TEST_CASE("network data is the pod side of the result", "[cni][unit]") {
  auto d = cni::networkDataOf(R"({"cniVersion":"1.0.0","interfaces":[
      {"name":"ens1f0v0","mac":"02:00:00:00:00:01"},
      {"name":"net1","mac":"7a:11:6e:37:98:44","sandbox":"/var/run/netns/p1"}],
      "ips":[{"interface":1,"address":"10.9.0.5/24"},{"address":"fd00::5/64"}]})",
                              "net1");
  REQUIRE(d.ok());
  CHECK(*d == cni::NetworkData{"net1", {"10.9.0.5/24", "fd00::5/64"}, "7a:11:6e:37:98:44"});
  auto bare = cni::networkDataOf(R"({"cniVersion":"1.0.0"})", "vfnet0");
  REQUIRE(bare.ok());
  CHECK(bare->interface_name == "vfnet0");
  CHECK_FALSE(cni::networkDataOf("[]", "x").ok());
}

TEST_CASE("a failing plugin is named with its own error", "[cni][unit]") {
  CHECK(cni::failureMessage("sriov", 1,
                            R"({"cniVersion":"1.0.0","code":7,"msg":"VF pci addr is required",)"
                            R"("details":"deviceID missing"})",
                            "") == "CNI plugin sriov: VF pci addr is required (deviceID missing)");
  CHECK(cni::failureMessage("static", 1, "", "invalid address\n") ==
        "CNI plugin static: invalid address");
  CHECK(cni::failureMessage("x", 3, "", "") == "CNI plugin x exited with code 3");
}

TEST_CASE("a NetworkAttachmentDefinition runs only what the administrator allows", "[cni][unit]") {
  cni::AllowList defaults;
  cni::AllowList logs;
  logs.host_paths = {"/var/log/sriov-cni/"};
  struct Row {
    std::string name;
    std::string config;
    const cni::AllowList& allowed;
    std::string error;  // "" = allowed; else the message contains this
  };
  const std::vector<Row> rows = {
      {"the SR-IOV CNI with host-local",
       R"({"type":"sriov","vlan":5,"ipam":{"type":"host-local",)"
       R"("ranges":[[{"subnet":"10.1.0.0/16"}]],"routes":[{"dst":"0.0.0.0/0"}]}})",
       defaults, ""},
      {"ib-sriov in a list with static IPAM",
       R"({"name":"n","plugins":[{"type":"ib-sriov","ipam":{"type":"static",)"
       R"("addresses":[{"address":"10.2.0.1/24"}]}}]})",
       defaults, ""},
      {"a host-device meta plugin moving a host interface",
       R"({"name":"n","plugins":[{"type":"sriov"},{"type":"host-device","device":"eth0"}]})",
       defaults,
       "plugins[1] (type host-device): CNI plugin \"host-device\" is not allowed on this node "
       "(allowed: ib-sriov, sriov); an administrator allows more with the agent's --cni-plugins"},
      {"host-device as the IPAM plugin", R"({"type":"sriov","ipam":{"type":"host-device"}})",
       defaults, "IPAM plugin \"host-device\" is not allowed on this node"},
      {"an IPAM type that is a path", R"({"type":"sriov","ipam":{"type":"../../bin/sh"}})",
       defaults, "IPAM plugin \"../../bin/sh\" is not allowed"},
      {"a second plugin naming another VF",
       R"({"name":"n","plugins":[{"type":"sriov"},{"type":"sriov","deviceID":"0000:11:00.2"}]})",
       defaults,
       "plugins[1] (type sriov): \"deviceID\" is set by the agent (the claim's VF, its GUID)"},
      {"a runtimeConfig naming another VF",
       R"({"type":"sriov","runtimeConfig":{"deviceID":"0000:11:00.2"}})", defaults,
       "\"runtimeConfig\" is set by the agent (the claim's VF, its GUID)"},
      {"a log file under the CDI directory",
       R"({"type":"sriov","logFile":"/var/run/cdi/evil.json"})", defaults,
       "the CNI configuration (type sriov): \"logFile\" names the host path "
       "\"/var/run/cdi/evil.json\"; the plugins run as root on the node"},
      {"a relative log file", R"({"type":"sriov","logFile":"evil.log"})", defaults,
       "is not a clean absolute path"},
      {"a host path nested in IPAM",
       R"({"type":"sriov","ipam":{"type":"host-local",)"
       R"("dataDir":"/var/lib/sriov-dra"}})",
       defaults, "\"dataDir\" names the host path \"/var/lib/sriov-dra\""},
      {"any absolute path, whatever the key", R"({"type":"sriov","x":["/etc/shadow"]})", defaults,
       "\"x\" names the host path \"/etc/shadow\""},
      {"a log file below an allowed directory",
       R"({"type":"sriov","logFile":"/var/log/sriov-cni/net1.log"})", logs, ""},
      {"an allowed directory left with ..",
       R"({"type":"sriov","logFile":"/var/log/sriov-cni/../../run/cdi/x"})", logs,
       "which is not a clean absolute path"},
      // The plugins read keys in any case and take the last: the check reads them so too.
      {"a second ipam object in another case",
       R"({"type":"sriov","ipam":{"type":"host-local"},"IPAM":{"type":"portmap"}})", defaults,
       "the key \"ipam\" is named twice"},
      {"a duplicated ipam key", R"({"type":"sriov","ipam":{"type":"static"},"ipam":{"type":"x"}})",
       defaults, "the key \"ipam\" is named twice"},
      {"a nested duplicate", R"({"type":"sriov","ipam":{"type":"static","Type":"portmap"}})",
       defaults, "the key \"type\" is named twice"},
      {"runtimeConfig in another case", R"({"type":"ib-sriov","RuntimeConfig":{"x":1}})", defaults,
       "\"runtimeConfig\" is set by the agent"},
      {"an InfiniBand GUID through args", R"({"type":"ib-sriov","args":{"cni":{"guid":"x"}}})",
       defaults, "\"args\" is set by the agent"},
      {"an IPAM type in another case", R"({"type":"sriov","IPAM":{"TYPE":"portmap"}})", defaults,
       "IPAM plugin \"portmap\" is not allowed"},
      {"a relative log file in another case", R"({"type":"sriov","LOGFILE":"evil.log"})", defaults,
       "is not a clean absolute path"},
      {"a sibling of an allowed directory",
       R"({"type":"sriov","logFile":"/var/log/sriov-cni-evil/x"})", logs,
       "below the directories the agent's --cni-host-paths allows (/var/log/sriov-cni/)"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto parsed = cni::parseNetworkConfig(row.config);
    REQUIRE(parsed.ok());
    Status st = cni::checkAllowed(*parsed, row.allowed);
    if (row.error.empty()) {
      CHECK(st.isOk());
      CHECK(st.message().empty());
      continue;
    }
    CHECK(st.code() == Code::kForbidden);
    CHECK_THAT(st.message(), Catch::Contains(row.error));
  }
  CHECK(cni::isCleanAbsolutePath("/var/log"));
  CHECK(cni::isCleanAbsolutePath("/var/log/"));
  for (const char* bad : {"", "var/log", "/var//log", "/var/./log", "/var/.."}) {
    INFO(bad);
    CHECK_FALSE(cni::isCleanAbsolutePath(bad));
  }
}

TEST_CASE("a CNI result is checked before it is recorded and shown", "[cni][unit]") {
  std::string many_ips;
  for (int i = 0; i < 17; ++i) {
    many_ips += std::string(many_ips.empty() ? "" : ",") + R"({"address":"10.0.0.)" +
                std::to_string(i) + R"(/24"})";
  }
  struct Row {
    std::string name;
    std::string result;
    std::string error;  // "" = fine
  };
  const std::vector<Row> rows = {
      {"a full result",
       R"({"cniVersion":"1.0.0","interfaces":[{"name":"net1","mac":"aa:bb:cc:dd:ee:ff",)"
       R"("sandbox":"/var/run/netns/p"}],"ips":[{"address":"10.1.0.5/24","interface":0},)"
       R"({"address":"2001:db8::5/64"}]})",
       ""},
      {"no IPs at all", R"({"cniVersion":"1.0.0"})", ""},
      {"not JSON (exit 0 all the same)", "ok", "the CNI result is not JSON"},
      {"no cniVersion", R"({"ips":[]})", "has no cniVersion"},
      {"an address without a prefix", R"({"cniVersion":"1.0.0","ips":[{"address":"10.0.0.1"}]})",
       "ips[0].address is not an IP address in CIDR notation"},
      {"a prefix too long", R"({"cniVersion":"1.0.0","ips":[{"address":"10.0.0.1/33"}]})",
       "ips[0].address is not"},
      {"not an address", R"({"cniVersion":"1.0.0","ips":[{"address":"host/24"}]})",
       "ips[0].address is not"},
      {"more IPs than a claim status holds", R"({"cniVersion":"1.0.0","ips":[)" + many_ips + "]}",
       "has 17 IPs; a claim's status holds at most 16"},
      {"a MAC too long",
       R"({"cniVersion":"1.0.0","interfaces":[{"mac":")" + std::string(129, 'a') + R"("}]})",
       "interfaces[0] has a name over 256 or a mac over 128"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    Status st = cni::checkResult(row.result);
    if (row.error.empty()) {
      CHECK(st.isOk());
      continue;
    }
    CHECK(st.code() == Code::kInvalidArgument);
    CHECK_THAT(st.message(), Catch::Contains(row.error));
  }
}
