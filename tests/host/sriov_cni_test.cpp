// Our `sriov` CNI plugin's commands (node/cni/sriov_plugin.h) on the simulated kernel's E810
// (the PF's side: VF settings through netlink) with real netdevs (cni_bench.h). What the kernel
// test does not cover: caches upstream's plugin wrote, stale and live allocations, the lock, and
// DEL after the VF, the pod or the cache is gone.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "base/files.h"
#include "base/json.h"
#include "node/cni/vf_files.h"
#include "support/cni_bench.h"

using namespace sriovdra;
using sriovdra::testing::addStandIn;
using sriovdra::testing::args;
using sriovdra::testing::Bench;
using sriovdra::testing::exitCodeOf;
using sriovdra::testing::root;

namespace {

namespace fs = std::filesystem;

const std::string kPf = "ens1f0";
const std::string kVf1 = "0000:3b:01.1";  // VF 1 of ens1f0 (offset 8, stride 1 in the fixture)

std::string configFor(const std::string& vf, const std::string& extra = "") {
  return R"({"cniVersion":"1.0.0","name":"vf-net","type":"sriov","deviceID":")" + vf + "\"" +
         extra + "}";
}

}  // namespace

TEST_CASE("a pod attached by upstream's sriov plugin is deleted by ours", "[host][cni]") {
  if (!root()) return;
  Bench b;
  std::string pod = b.pod("upstream");
  b.inside([&] {
    // The state upstream's ADD leaves: VF 1 with VLAN 1234 and spoofchk off, its netdev renamed
    // net1 in the pod, and its cache and allocation files.
    host::VfSetting vlan{.kind = host::VfSetting::Kind::kVlan, .vf = 1, .vlan = 1234};
    REQUIRE(b.kernel().setVf(kPf, vlan).isOk());
    REQUIRE(b.kernel().setVf(kPf, {.kind = host::VfSetting::Kind::kSpoofchk, .vf = 1}).isOk());
    std::string netdev = b.vfNetdev(1);
    host::Netdevs nd;
    auto link = nd.link(netdev).value();
    auto pod_ns = host::NetNamespace::open(pod).value();
    REQUIRE(nd.moveTo(link.index, pod_ns).isOk());
    REQUIRE(pod_ns.run([&] { return nd.rename(nd.link(netdev)->index, "net1"); }).isOk());
    const std::string cache =
        R"({"MAC":"","MTU":1500,"Master":"ens1f0","OrigVfState":{"AdminMAC":"00:00:00:00:00:00",)"
        R"("EffectiveMAC":")" +
        link.mac + R"(","HostIFName":")" + netdev +
        R"(","LinkState":0,"MTU":1500,"MaxTxRate":0,"MinTxRate":0,"SpoofChk":true,"Trust":false,)"
        R"("Vlan":0,"VlanProto":33024,"VlanQoS":0},"VFID":1,"cniVersion":"0.3.1","deviceID":")" +
        kVf1 +
        R"(","ipam":{},"max_tx_rate":null,"min_tx_rate":null,"name":"sriov-network",)"
        R"("runtimeConfig":{},"spoofchk":"off","type":"sriov","vlan":1234,)"
        R"("vlanProto":"802.1q","vlanQoS":0})";
    cni_plugin::VfFiles files(b.stateDir());
    REQUIRE(files.saveCache("upstream-pod", "net1", cache).isOk());
    REQUIRE(files.saveAllocation(kVf1, pod).isOk());

    auto plugin = b.plugin();
    Status del = plugin.del(args(pod, configFor(kVf1), "upstream-pod"));
    INFO(del.message() << "\n" << b.log());
    REQUIRE(del.isOk());
    CHECK(b.vf(1).vlan == 0);
    CHECK(b.vf(1).spoofchk);
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    auto back = nd.link(netdev);
    REQUIRE(back.ok());
    CHECK(back->mac == link.mac);
    CHECK_FALSE(fs::exists(files.cachePath("upstream-pod", "net1")));
    CHECK_FALSE(fs::exists(b.stateDir() + "/pci/" + kVf1));
  });
}

TEST_CASE("ADD refuses a VF another pod holds, and takes back one whose pod is gone",
          "[host][cni]") {
  if (!root()) return;
  Bench b;
  std::string first = b.pod("first"), second = b.pod("second");
  b.inside([&] {
    auto plugin = b.plugin();
    auto added = plugin.add(args(first, configFor(kVf1), "first"));
    INFO((added.ok() ? *added : added.status().message()) << "\n" << b.log());
    REQUIRE(added.ok());
    auto again = plugin.add(args(second, configFor(kVf1), "second"));
    CHECK(again.status().message() ==
          "SRIOV-CNI failed to load netconf: pci address " + kVf1 + " is already allocated");
    // The first pod's namespace goes without a DEL (its netdev returns to the host as Linux
    // returns a physical device; here the veth goes away with it, so make another).
    b.removePod(first);
    REQUIRE(addStandIn(b.vfNetdev(1)) == 0);
    auto taken = plugin.add(args(second, configFor(kVf1), "second"));
    INFO((taken.ok() ? *taken : taken.status().message()));
    CHECK(taken.ok());
    CHECK(Bench::inPod(second, "net1"));
    CHECK(plugin.del(args(second, configFor(kVf1), "second")).isOk());
  });
}

TEST_CASE("ADD gives up on a VF another command holds within its lock timeout", "[host][cni]") {
  if (!root()) return;
  Bench b;
  std::string pod = b.pod("locked");
  b.inside([&] {
    cni_plugin::VfFiles files(b.stateDir());
    auto held = files.lock(kVf1, std::chrono::milliseconds(100));
    REQUIRE(held.ok());
    // flock locks belong to the open file: another open of it in this process conflicts too.
    auto plugin = b.plugin();
    auto added = plugin.add(args(pod, configFor(kVf1)));
    CHECK(
        added.status().message() ==
        "SRIOV-CNI failed to load netconf: time out while waiting to acquire exclusive lock on [" +
            b.stateDir() + "/pci/vf_lock/" + kVf1 + ".lock]");
    CHECK_FALSE(Bench::inPod(pod, "net1"));
  });
}

TEST_CASE("DEL succeeds when the cache, the pod or the VF is gone, and says why", "[host][cni]") {
  if (!root()) return;
  Bench b;
  std::string pod = b.pod("gone");
  b.inside([&] {
    auto plugin = b.plugin();
    CHECK(plugin.del(args(pod, configFor(kVf1), "never-added")).isOk());
    CHECK_THAT(b.log(), Catch::Contains("never-added/net1: no usable cache"));

    const std::string vlan = configFor(kVf1, R"(,"vlan":10)");
    REQUIRE(plugin.add(args(pod, vlan, "pod-gone")).ok());
    b.removePod(pod);
    CHECK(plugin.del(args(pod, vlan, "pod-gone")).isOk());
    CHECK(b.vf(1).vlan == 0);  // reset through the PF although the pod is gone

    std::string pod2 = b.pod("vf-gone");
    REQUIRE(addStandIn(b.vfNetdev(1)) == 0);
    REQUIRE(plugin.add(args(pod2, vlan, "vf-gone")).ok());
    REQUIRE(b.kernel().write("sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs", "0").isOk());
    CHECK(plugin.del(args(pod2, vlan, "vf-gone")).isOk());
    CHECK_THAT(b.log(), Catch::Contains("VF " + kVf1 + " is gone"));
    CHECK_FALSE(fs::exists(b.stateDir() + "/vf-gone-net1"));
  });
}

TEST_CASE("DEL of a VF whose netdev refuses MAC changes succeeds when its MAC is unchanged",
          "[host][cni]") {
  if (!root()) return;
  Bench b;
  std::string pod = b.pod("no-mac");
  b.inside([&] {
    // VF 1's netdev as an ifb interface: the kernel refuses to change its MAC (EOPNOTSUPP), as
    // some VF drivers do; ADD without a MAC never changes it, so DEL has nothing to restore.
    const std::string netdev = b.vfNetdev(1);
    REQUIRE(exitCodeOf({"ip", "link", "del", netdev}) == 0);
    REQUIRE(exitCodeOf({"ip", "link", "add", netdev, "type", "ifb"}) == 0);
    auto plugin = b.plugin();
    const std::string vlan = configFor(kVf1, R"(,"vlan":10)");
    REQUIRE(plugin.add(args(pod, vlan, "no-mac")).ok());
    CHECK(Bench::inPod(pod, "net1"));
    Status del = plugin.del(args(pod, vlan, "no-mac"));
    INFO(del.toString());
    CHECK(del.isOk());
    CHECK(host::Netdevs().link(netdev).ok());
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK(b.vf(1).vlan == 0);
    CHECK_FALSE(fs::exists(b.stateDir() + "/no-mac-net1"));
  });
}

TEST_CASE("a configuration naming a VF that is not there, or with bad values, fails ADD cleanly",
          "[host][cni]") {
  if (!root()) return;
  Bench b;
  std::string pod = b.pod("bad");
  b.inside([&] {
    auto plugin = b.plugin();
    auto missing = plugin.add(args(pod, configFor("0000:3b:07.7")));
    CHECK_THAT(
        missing.status().message(),
        Catch::StartsWith("SRIOV-CNI failed to load netconf: LoadConf(): failed to get VF "
                          "information: \"lstat /sys/bus/pci/devices/0000:3b:07.7/physfn/net"));
    // A deviceID reaches paths the plugin writes as root: anything but a PCI address is refused.
    auto traversal = plugin.add(args(pod, configFor("../../../../etc/cron.d/x")));
    CHECK(traversal.status().message() ==
          "SRIOV-CNI failed to load netconf: LoadConf(): deviceID \"../../../../etc/cron.d/x\" is "
          "not a PCI address (DDDD:BB:DD.F)");
    CHECK_FALSE(fs::exists(b.stateDir() + "/pci"));
    auto bad_mac = plugin.add(args(pod, configFor(kVf1, R"(,"mac":"02:11:22:33:44")")));
    CHECK(bad_mac.status().message() ==
          "SRIOV-CNI failed to configure VF \"failed to set MAC address to 02:11:22:33:44: failed "
          "to parse MAC address 02:11:22:33:44: address 02:11:22:33:44: invalid MAC address\"");
    CHECK(b.vf(1) == host::VfInfo{.vf = 1, .spoofchk = true});
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK(host::Netdevs().link(b.vfNetdev(1)).ok());
  });
}

TEST_CASE("ADD into a pod that has an interface of the name fails and leaves that interface alone",
          "[host][cni]") {
  if (!root()) return;
  Bench b;
  std::string pod = b.pod("taken");
  b.inside([&] {
    // The pod's own net1 (one end of a veth pair, the other in the pod too).
    auto pod_ns = host::NetNamespace::open(pod).value();
    REQUIRE(pod_ns
                .run([&] {
                  return exitCodeOf({"ip", "link", "add", "net1", "type", "veth", "peer", "name",
                                     "other"}) == 0
                             ? Status::ok()
                             : Status(Code::kInternal, "ip link add in the pod failed");
                })
                .isOk());
    auto plugin = b.plugin();
    auto added = plugin.add(args(pod, configFor(kVf1, R"(,"vlan":7,"trust":"on")")));
    CHECK_THAT(added.status().message(),
               Catch::Contains("the pod already has an interface named net1"));
    CHECK(Bench::inPod(pod, "net1"));                           // the pod's own, still there
    CHECK(host::Netdevs().link(b.vfNetdev(1)).ok());            // the VF's, still on the host
    CHECK(b.vf(1) == host::VfInfo{.vf = 1, .spoofchk = true});  // its settings undone
    CHECK_FALSE(fs::exists(b.stateDir() + "/pod-a-net1"));
  });
}

TEST_CASE("a DEL retried after the VF went to another pod leaves it to that pod", "[host][cni]") {
  if (!root()) return;
  Bench b;
  std::string first = b.pod("first-owner"), second = b.pod("second-owner");
  b.inside([&] {
    auto plugin = b.plugin();
    REQUIRE(plugin.add(args(first, configFor(kVf1, R"(,"vlan":10)"), "first")).ok());
    // The first pod's namespace goes before its DEL did its work; the VF goes to another pod.
    b.removePod(first);
    REQUIRE(addStandIn(b.vfNetdev(1)) == 0);
    REQUIRE(plugin.add(args(second, configFor(kVf1, R"(,"vlan":20)"), "second")).ok());
    // The first pod's DEL, retried.
    CHECK(plugin.del(args(first, configFor(kVf1, R"(,"vlan":10)"), "first")).isOk());
    CHECK_THAT(b.log(), Catch::Contains("is held by another pod now"));
    CHECK(b.vf(1).vlan == 20);
    CHECK(Bench::inPod(second, "net1"));
    CHECK(fs::exists(b.stateDir() + "/pci/" + kVf1));
    // The second pod's ADD kept the VF's state from before the first pod (the first pod's cache
    // said it), so its DEL puts that back, not the first pod's VLAN.
    CHECK_THAT(b.log(), Catch::Contains("was left configured by first-net1"));
    CHECK(plugin.del(args(second, configFor(kVf1, R"(,"vlan":20)"), "second")).isOk());
    CHECK(b.vf(1).vlan == 0);
  });
}
