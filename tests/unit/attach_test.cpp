// Pod attach, pure: which VFs of a pod are attached under which names, the attach record on
// disk, and the claim status it leads to.
#include "dra/attach.h"

#include <filesystem>

#include <catch2/catch.hpp>

#include "base/files.h"
#include "base/json.h"
#include "node/state/attach_records.h"
#include "support/temp_dir.h"

using namespace sriovdra;

namespace {

dra::PreparedDevice device(const std::string& name, const std::string& pci,
                           std::optional<std::string> nad, std::optional<std::string> if_name = {},
                           std::optional<std::string> nad_ns = {}) {
  dra::PreparedDevice d;
  d.pool = "n1";
  d.device = name;
  d.pci_address = pci;
  d.config.net_attach_def_name = std::move(nad);
  d.config.if_name = std::move(if_name);
  d.config.net_attach_def_namespace = std::move(nad_ns);
  return d;
}

dra::PreparedClaim claim(const std::string& uid, const std::string& name,
                         std::vector<dra::PreparedDevice> devices,
                         const std::string& pod = "pod-1") {
  dra::PreparedClaim c;
  c.uid = uid;
  c.namespace_ = "apps";
  c.name = name;
  c.pod_uid = pod;
  c.state = dra::PreparedClaim::State::kPrepared;
  c.devices = std::move(devices);
  return c;
}

}  // namespace

TEST_CASE("a pod's VFs are attached in claim order, vfnet<N> skipping names taken",
          "[dra][attach][unit]") {
  dra::Checkpoint cp;
  // Claim "b" sorts after "a"; "a" names vfnet0 itself, so the unnamed VFs get vfnet1, vfnet2.
  cp.claims["u-b"] = claim("u-b", "b", {device("0000-11-00-1", "0000:11:00.1", "net-b")});
  cp.claims["u-a"] = claim("u-a", "a",
                           {device("0000-0e-00-1", "0000:0e:00.1", "net-a", "vfnet0"),
                            device("0000-0e-00-2", "0000:0e:00.2", "net-a", {}, "infra"),
                            device("0000-0e-00-3", "0000:0e:00.3", std::nullopt)});  // no NAD
  cp.claims["u-other"] =
      claim("u-other", "c", {device("0000-12-00-1", "0000:12:00.1", "x")}, "pod-2");
  auto preparing = claim("u-p", "p", {device("0000-13-00-1", "0000:13:00.1", "x")});
  preparing.state = dra::PreparedClaim::State::kPreparing;
  cp.claims["u-p"] = preparing;

  auto got = dra::attachmentsFor(cp, "pod-1");
  REQUIRE(got.size() == 3);
  CHECK(got[0] == dra::Attachment{"u-a", "apps", "a", "n1", "0000-0e-00-1", "0000:0e:00.1",
                                  "vfnet0", "net-a"});
  CHECK(got[1].if_name == "vfnet1");
  CHECK(got[2].claim_name == "b");
  CHECK(got[2].if_name == "vfnet2");
  CHECK(dra::attachmentsFor(cp, "pod-9").empty());

  // --default-interface-prefix: a VF named vfnet0 by its VfConfig keeps it, the others follow the
  // prefix.
  auto net = dra::attachmentsFor(cp, "pod-1", "net");
  REQUIRE(net.size() == 3);
  CHECK(net[0].if_name == "vfnet0");
  CHECK(net[1].if_name == "net0");
  CHECK(net[2].if_name == "net1");
}

TEST_CASE("an extended-resource claim's VFs take the networks the pod's annotation names",
          "[dra][attach][unit]") {
  dra::Checkpoint cp;
  auto ext = claim("u-x", "pod-1-extended-resources-abcde",
                   {device("0000-11-00-1", "0000:11:00.1", std::nullopt),
                    device("0000-11-00-2", "0000:11:00.2", std::nullopt)});
  ext.extended_resource = true;
  ext.devices[0].resource_name = ext.devices[1].resource_name = "openshift.io/cx6_vfs";
  ext.devices[0].original_driver = "mlx5_core";
  ext.devices[1].original_driver = "vfio-pci";  // a device: no network has to take it
  cp.claims["u-x"] = ext;
  cp.claims["u-a"] = claim("u-a", "a", {device("0000-0e-00-1", "0000:0e:00.1", "net-a")});
  auto wanted = dra::attachmentsFor(cp, "pod-1");
  REQUIRE(wanted.size() == 3);
  // The VfConfig's VF keeps vfnet0: the waiting ones take no <prefix><N>.
  CHECK(wanted[0].if_name == "vfnet0");
  CHECK(wanted[1].extended_resource);
  CHECK(wanted[1].nad_name.empty());
  CHECK(dra::waitingForNetworks(wanted) ==
        std::vector<dra::ResourceVf>{{"u-x", "0000-11-00-1", "openshift.io/cx6_vfs", true},
                                     {"u-x", "0000-11-00-2", "openshift.io/cx6_vfs", false}});

  auto networks =
      dra::parseNetworkSelection(R"([{"name":"ib","mac":"02:00:00:00:00:09"}])", "apps");
  REQUIRE(networks.ok());
  auto assigned = dra::assignNetworks(dra::waitingForNetworks(wanted), *networks,
                                      {{"apps/ib", "openshift.io/cx6_vfs"}});
  REQUIRE(assigned.ok());
  auto attached = dra::withNetworks(wanted, *assigned);
  REQUIRE(attached.ok());
  REQUIRE(attached->size() == 2);  // the vfio-pci VF is named by no network: left out
  CHECK((*attached)[0] == wanted[0]);
  CHECK((*attached)[1].device == "0000-11-00-1");
  CHECK((*attached)[1].nad_name == "ib");
  CHECK((*attached)[1].if_name == "net1");
  REQUIRE((*attached)[1].network);
  CHECK((*attached)[1].network->mac == "02:00:00:00:00:09");

  // A network's interface name that a VfConfig's ifName takes too is refused naming both.
  auto clash = dra::parseNetworkSelection("ib@vfnet0", "apps");
  REQUIRE(clash.ok());
  auto clashing =
      dra::withNetworks(wanted, *dra::assignNetworks(dra::waitingForNetworks(wanted), *clash,
                                                     {{"apps/ib", "openshift.io/cx6_vfs"}}));
  REQUIRE_FALSE(clashing.ok());
  CHECK(clashing.status().message() ==
        "interface vfnet0 is named twice: by the VfConfig of ResourceClaim apps/a and by network "
        "apps/ib of the pod's k8s.v1.cni.cncf.io/networks");
}

TEST_CASE("an interface name prefix leaves room for the index", "[dra][attach][unit]") {
  CHECK(dra::interfacePrefixProblem("vfnet").empty());
  CHECK(dra::interfacePrefixProblem("twelve_chars").empty());  // 12 + 3 digits = 15
  CHECK_THAT(dra::interfacePrefixProblem("thirteen_char"), Catch::Contains("too long"));
  CHECK_THAT(dra::interfacePrefixProblem(""), Catch::Contains("empty"));
  for (const char* bad : {"a/b", "a:b", "a b", "a\tb"}) {
    CHECK_THAT(dra::interfacePrefixProblem(bad), Catch::Contains("cannot have"));
  }
}

TEST_CASE("an attach record survives a round trip and refuses what it is not",
          "[dra][attach][unit]") {
  dra::AttachRecord r{"sandbox-1",
                      "pod-1",
                      "apps",
                      "web-0",
                      "/var/run/netns/p1",
                      {{"u-a", "n1", "0000-0e-00-1", "0000:0e:00.1", "net1",
                        dra::AttachedInterface::State::kAttached, R"({"type":"sriov"})",
                        R"({"cniVersion":"1.0.0"})", "apps/vf-net"},
                       {"u-a", "n1", "0000-0e-00-2", "0000:0e:00.2", "net2",
                        dra::AttachedInterface::State::kAdding, R"({"type":"sriov"})", ""}}};
  auto back = dra::AttachRecord::decode(r.encode());
  REQUIRE(back.ok());
  CHECK(*back == r);
  CHECK(back->find("u-a", "0000-0e-00-2")->state == dra::AttachedInterface::State::kAdding);
  CHECK(back->find("u-a", "nope") == nullptr);
  // A record of an agent before the network was kept: read, without it.
  auto old = dra::AttachRecord::decode(
      R"({"version":1,"sandbox":"s","interfaces":[{"claimUID":"u","state":"Attached"}]})");
  REQUIRE(old.ok());
  CHECK(old->interfaces.at(0).network.empty());
  for (const char* bad :
       {"", "{}", R"({"version":2,"sandbox":"s"})", R"({"version":1,"sandbox":""})",
        R"({"version":1,"sandbox":"s","interfaces":[{"state":"Half"}]})"}) {
    INFO(bad);
    CHECK(dra::AttachRecord::decode(bad).status().code() == Code::kInvalidArgument);
  }
}

TEST_CASE("the claim status carries the CNI config, result and network data once attached",
          "[dra][attach][unit]") {
  auto c = claim("u-a", "a",
                 {device("0000-0e-00-1", "0000:0e:00.1", "net-a", "net1"),
                  device("0000-0e-00-2", "0000:0e:00.2", "net-a")});
  // Prepared only: the VfConfig, and the interface name when the config gives one.
  auto before = dra::deviceStatuses(c, "drv", {});
  REQUIRE(before.size() == 2);
  CHECK(before[0].network_data == api::NetworkDeviceData{"net1", {}, ""});
  CHECK_FALSE(before[1].network_data);
  CHECK(json::at(*json::parse(before[0].data_json), {"cniResult"}) == nullptr);
  // Attached: what CNI answered.
  std::vector<dra::AttachedInterface> attached = {
      {"u-a", "n1", "0000-0e-00-1", "0000:0e:00.1", "net1",
       dra::AttachedInterface::State::kAttached,
       R"({"type":"host-device","deviceID":"0000:0e:00.1"})",
       R"({"cniVersion":"1.0.0","interfaces":[{"name":"net1","mac":"02:00:00:00:00:01","sandbox":"/p"}],)"
       R"("ips":[{"address":"10.9.0.5/24","interface":0}]})"},
      {"u-a", "n1", "0000-0e-00-2", "0000:0e:00.2", "vfnet0",
       dra::AttachedInterface::State::kAdding, "{}", ""}};
  auto after = dra::deviceStatuses(c, "drv", attached);
  CHECK(after[0].network_data ==
        api::NetworkDeviceData{"net1", {"10.9.0.5/24"}, "02:00:00:00:00:01"});
  auto data = json::parse(after[0].data_json);
  REQUIRE(data.ok());
  CHECK(json::stringOr(*json::at(*data, {"cniConfig"}), "deviceID") == "0000:0e:00.1");
  CHECK(json::stringOr(*json::at(*data, {"vfConfig"}), "netAttachDefName") == "net-a");
  CHECK(json::at(*data, {"cniResult", "ips"}) != nullptr);
  CHECK_FALSE(after[1].network_data);  // still Adding: nothing to say yet
}

TEST_CASE("the pod's network-status lists the networks attached, as Multus writes it",
          "[dra][attach][unit]") {
  const std::string result =
      R"({"cniVersion":"1.0.0","interfaces":[{"name":"net1","mac":"02:00:00:00:00:01",)"
      R"("sandbox":"/p"}],"ips":[{"address":"10.9.0.5/24","interface":0},)"
      R"({"address":"fd00::5/64","interface":0}],"dns":{"nameservers":["10.9.0.1"]}})";
  dra::AttachRecord r{"s", "pod-1", "apps", "web-0", "/p", {}};
  CHECK(dra::networkStatus(r).empty());
  r.interfaces = {{"u-a", "n1", "0000-0e-00-1", "0000:0e:00.1", "net1",
                   dra::AttachedInterface::State::kAttached, "{}", result, "apps/vf-net"},
                  // Still being added, and one from an agent that kept no network: not listed.
                  {"u-a", "n1", "0000-0e-00-2", "0000:0e:00.2", "net2",
                   dra::AttachedInterface::State::kAdding, "{}", "", "apps/vf-net"},
                  {"u-b", "n1", "0000-0e-00-3", "0000:0e:00.3", "net3",
                   dra::AttachedInterface::State::kAttached, "{}", result, ""}};
  CHECK(dra::networkStatus(r) ==
        R"([{"name":"apps/vf-net","interface":"net1","ips":["10.9.0.5","fd00::5"],)"
        R"("mac":"02:00:00:00:00:01","dns":{"nameservers":["10.9.0.1"]},)"
        R"("device-info":{"type":"pci","version":"1.1.0",)"
        R"("pci":{"pci-address":"0000:0e:00.1"}}}])");
}

TEST_CASE("attach records on disk: saved, found by claim, removed empty, corrupt moved aside",
          "[dra][attach][unit]") {
  testing::TempDir dir;
  node::AttachRecords records(dir.path() + "/attach");
  CHECK_FALSE(*records.load("sandbox-1"));
  dra::AttachRecord r{"sandbox-1", "pod-1", "apps", "web-0", "/p", {}};
  r.interfaces.push_back({"u-a", "n1", "0000-0e-00-1", "0000:0e:00.1", "net1",
                          dra::AttachedInterface::State::kAttached, "{}", "{}"});
  REQUIRE(records.save(r).isOk());
  CHECK(**records.load("sandbox-1") == r);
  CHECK(records.ofClaim("u-a").size() == 1);
  CHECK(records.ofClaim("u-b").empty());
  // A sandbox ID is a file name, nothing else.
  CHECK(records.load("../etc/passwd").status().code() == Code::kInvalidArgument);
  // A record that is not one is moved aside, named, never read half.
  REQUIRE(writeFileAtomic(dir.path() + "/attach/sandbox-2.json", "{\"version\":1,").isOk());
  std::vector<std::string> problems;
  CHECK(records.all(&problems).size() == 1);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::Contains("sandbox-2.json is not an attach record"));
  CHECK(std::filesystem::exists(dir.path() + "/attach/sandbox-2.json.corrupt"));
  // No interfaces left: no file.
  r.interfaces.clear();
  REQUIRE(records.save(r).isOk());
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/attach/sandbox-1.json"));
  // A record too large to read back is not written, and the one on disk stays as it was.
  r.interfaces.push_back({"u-a", "n1", "0000-0e-00-1", "0000:0e:00.1", "net1",
                          dra::AttachedInterface::State::kAdding, "{}", ""});
  REQUIRE(records.save(r).isOk());
  for (int i = 0; i < 70; ++i) {
    r.interfaces.push_back({"u-a", "n1", "0000-0e-00-1", "0000:0e:00.1", "net1",
                            dra::AttachedInterface::State::kAttached,
                            R"({"x":")" + std::string(dra::kMaxCniConfigBytes - 8, 'a') + "\"}",
                            "{}"});
  }
  Status big = records.save(r);
  CHECK(big.code() == Code::kTooLarge);
  CHECK_THAT(big.message(), Catch::Contains("over the 4194304 an agent reads back"));
  REQUIRE(*records.load("sandbox-1"));
  CHECK((*records.load("sandbox-1"))->interfaces.size() == 1);
}

TEST_CASE("a Synchronize snapshot never overrides a pod event newer than itself",
          "[dra][attach][unit]") {
  struct Row {
    std::string name;
    std::vector<std::string> recorded, running;
    std::set<std::string> newer;
    dra::SyncPlan expected;
  };
  const std::vector<Row> rows = {
      {"gone sandboxes are detached, running ones attached",
       {"a", "b"},
       {"b", "c"},
       {},
       {{"a"}, {"b", "c"}}},
      {"a RunPodSandbox after the snapshot: not torn down though the snapshot lacks it",
       {"a", "new"},
       {"a"},
       {"new"},
       {{}, {"a"}}},
      {"a StopPodSandbox after the snapshot: not attached again though the snapshot has it",
       {"a"},
       {"a", "stopped"},
       {"stopped"},
       {{}, {"a"}}},
      {"an empty runtime detaches everything recorded", {"a", "b"}, {}, {}, {{"a", "b"}, {}}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    CHECK(dra::planSync(row.recorded, row.running, row.newer) == row.expected);
  }
}
