// Our `sriov` CNI plugin's commands (node/cni/sriov_plugin.h) on the simulated kernel's E810
// (the PF's side: VF settings through netlink) with real netdevs: each VF's netdev a veth
// interface of the fixture's name, moved into a pod namespace for real, all inside a network
// namespace of the test's own. What the kernel test does not cover: caches upstream's plugin
// wrote, stale and live allocations, the lock, and DEL after the VF, the pod or the cache is gone.
// And `ib-sriov` on the reference server's ConnectX-6 VFs: GUIDs, link state and rdmaIsolation
// (the RDMA device moved by the simulated kernel, which no VM here can give: no InfiniBand).
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"
#include "base/json.h"
#include "base/process.h"
#include "host/fixtures.h"
#include "host/netdev.h"
#include "host/netns.h"
#include "host/rdma.h"
#include "host/simulated_kernel.h"
#include "node/cni/ib_sriov_plugin.h"
#include "node/cni/sriov_plugin.h"
#include "node/cni/vf_files.h"
#include "sriovcni/ib_netconf.h"
#include "support/skip.h"
#include "support/temp_dir.h"

using namespace sriovdra;

namespace {

namespace fs = std::filesystem;

const std::string kPf = "ens1f0";
const std::string kVf1 = "0000:3b:01.1";  // VF 1 of ens1f0 (offset 8, stride 1 in the fixture)

int run(const std::vector<std::string>& argv) {
  auto out = runProcess({.argv = argv}, std::chrono::seconds(10));
  return out.ok() ? out->exit_code : -1;
}

// A VF netdev's stand-in: one end of a veth pair (ifb takes no MAC), its peer beside it.
int addStandIn(const std::string& name) {
  static int peers = 0;
  return run({"ip", "link", "add", name, "type", "veth", "peer", "name",
              "peer" + std::to_string(peers++)});
}

// The fixture with 4 VFs on ens1f0, their netdevs as veth interfaces, and pod namespaces bound
// under the temporary directory; everything inside a network namespace of its own, entered by
// the thread that calls inside().
class Bench {
 public:
  // 4 VFs on the PF `pf` (its netdev) at `pf_address` of the fixture.
  explicit Bench(const std::string& fixture = "e810-ethernet",
                 const std::string& pf_address = "0000:3b:00.0", std::string pf = kPf)
      : pf_(std::move(pf)) {
    REQUIRE(host::writeFixture(fixture, dir_.path()).isOk());
    kernel_ = std::make_unique<host::SimulatedKernel>(dir_.path());
    REQUIRE(kernel_->write("sys/bus/pci/devices/" + pf_address + "/sriov_numvfs", "4").isOk());
  }
  ~Bench() {
    for (const auto& p : pods_) {
      ::umount2(p.c_str(), MNT_DETACH);
      ::unlink(p.c_str());
    }
  }

  // Runs `fn` on a thread in the bench's own network namespace (made on first use).
  void inside(const std::function<void()>& fn) {
    std::thread([&] {
      if (!netns_) {
        REQUIRE(::unshare(CLONE_NEWNET) == 0);
        netns_.emplace(host::NetNamespace::current().value());
        for (int i = 0; i < 4; ++i) {
          REQUIRE(addStandIn(vfNetdev(i)) == 0);
        }
      } else {
        REQUIRE(::setns(netns_->fd(), CLONE_NEWNET) == 0);
      }
      fn();
    }).join();
  }

  std::string vfAddress(int i) const {
    return host::baseName(
        kernel_->readLink("sys/class/net/" + pf_ + "/device/virtfn" + std::to_string(i)).value());
  }
  std::string vfNetdev(int i) const {
    return kernel_->list("sys/bus/pci/devices/" + vfAddress(i) + "/net").value().front();
  }
  // A new pod namespace, bound at a path (as a runtime makes one).
  std::string pod(const std::string& name) {
    std::string path = dir_.path() + "/netns-" + name;
    std::ofstream(path).flush();
    std::thread([&] {
      REQUIRE(::unshare(CLONE_NEWNET) == 0);
      REQUIRE(::mount("/proc/thread-self/ns/net", path.c_str(), nullptr, MS_BIND, nullptr) == 0);
    }).join();
    pods_.push_back(path);
    return path;
  }
  void removePod(const std::string& path) {
    ::umount2(path.c_str(), MNT_DETACH);
    ::unlink(path.c_str());
  }

  cni_plugin::SriovPlugin plugin() {
    return cni_plugin::SriovPlugin(
        {.sysfs = kernel_.get(),
         .netlink = kernel_.get(),
         .state_dir = stateDir(),
         .lock_timeout = std::chrono::milliseconds(200),
         .log = [this](std::string_view l) { log_ += std::string(l) + "\n"; }});
  }
  // The ib-sriov plugin on the bench's kernel (sysfs, netlink, RDMA), its state under stateDir().
  cni_plugin::IbSriovPlugin ibPlugin() {
    return cni_plugin::IbSriovPlugin({.sysfs = kernel_.get(),
                                      .netlink = kernel_.get(),
                                      .rdma = kernel_.get(),
                                      .state_dir = stateDir() + "/ib",
                                      .lock_timeout = std::chrono::milliseconds(200)});
  }
  std::string stateDir() const { return dir_.path() + "/cni-state"; }
  host::SimulatedKernel& kernel() { return *kernel_; }
  const std::string& log() const { return log_; }

  host::VfInfo vf(int i) {
    auto vfs = kernel_->vfs(pf_);
    REQUIRE(vfs.ok());
    for (const auto& v : *vfs) {
      if (v.vf == i) return v;
    }
    FAIL("no VF " << i);
    return {};
  }
  static bool inPod(const std::string& netns, const std::string& if_name) {
    bool found = false;
    (void)host::NetNamespace::open(netns).value().run([&] {
      found = host::Netdevs().link(if_name).ok();
      return Status::ok();
    });
    return found;
  }

 private:
  testing::TempDir dir_;
  std::string pf_;
  std::unique_ptr<host::SimulatedKernel> kernel_;
  std::optional<host::NetNamespace> netns_;
  std::vector<std::string> pods_;
  std::string log_;
};

cni::CmdArgs args(const std::string& netns, const std::string& config, std::string cid = "pod-a",
                  std::string if_name = "net1") {
  cni::CmdArgs a;
  a.container_id = std::move(cid);
  a.netns = netns;
  a.if_name = std::move(if_name);
  a.path = "/usr/lib/cni";
  a.stdin_data = config;
  a.cni_version = "1.0.0";
  return a;
}

std::string configFor(const std::string& vf, const std::string& extra = "") {
  return R"({"cniVersion":"1.0.0","name":"vf-net","type":"sriov","deviceID":")" + vf + "\"" +
         extra + "}";
}

bool root() { return testing::rootOr("the sriov CNI plugin's checks"); }

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
    REQUIRE(run({"ip", "link", "del", netdev}) == 0);
    REQUIRE(run({"ip", "link", "add", netdev, "type", "ifb"}) == 0);
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
                  return run({"ip", "link", "add", "net1", "type", "veth", "peer", "name",
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

TEST_CASE("ib-sriov sets a VF's GUID and link state through its PF, and puts them back",
          "[host][cni]") {
  if (!root()) return;
  // A ConnectX-6 InfiniBand PF of the reference server: its VFs' GUIDs are 0 until set.
  Bench b("a100-reference", "0000:0e:00.0", "ibp14s0");
  std::string pod = b.pod("ib");
  const std::string vf = b.vfAddress(1);
  auto config = [&](const std::string& extra) {
    return R"({"cniVersion":"1.0.0","name":"ib-net","type":"ib-sriov","deviceID":")" + vf + "\"" +
           extra + "}";
  };
  b.inside([&] {
    cni_plugin::IbSriovPlugin plugin = b.ibPlugin();
    // Without a GUID the VF's own must be valid: the agent assigns them, none here yet.
    auto no_guid = plugin.add(args(pod, config(R"(,"link_state":"enable")")));
    CHECK_THAT(no_guid.status().message(),
               Catch::Contains("VF " + b.vfNetdev(1) + " GUID is not valid"));
    CHECK(b.vf(1).link_state == 0);  // put back
    auto added = plugin.add(args(
        pod,
        config(
            R"(,"link_state":"enable","runtimeConfig":{"infinibandGUID":"02:00:00:00:00:00:00:05"})")));
    INFO((added.ok() ? *added : added.status().message()));
    REQUIRE(added.ok());
    CHECK(b.vf(1).port_guid == 0x0200000000000005u);
    CHECK(b.vf(1).node_guid == 0x0200000000000005u);
    CHECK(b.vf(1).link_state == 1);
    // The rebind made the VF's driver read it: its IPoIB address ends with it.
    CHECK_THAT(b.kernel()
                   .read("sys/bus/pci/devices/" + vf + "/net/" + b.vfNetdev(1) + "/address")
                   .valueOr(""),
               Catch::EndsWith("02:00:00:00:00:00:00:05"));
    CHECK(Bench::inPod(pod, "net1"));
    CHECK(plugin.del(args(pod, config(""))).isOk());
    CHECK(b.vf(1).link_state == 0);
    CHECK(b.vf(1).port_guid == 0xffffffffffffffffu);  // none before: all-F, as upstream
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK(host::Netdevs().link(b.vfNetdev(1)).ok());
    CHECK(plugin.del(args(pod, config(""))).isOk());  // again: nothing to do
  });
}

TEST_CASE("ib-sriov undoes a failed ADD, and a failed DEL keeps its cache until a retry finishes",
          "[host][cni]") {
  if (!root()) return;
  Bench b("a100-reference", "0000:0e:00.0", "ibp14s0");
  std::string pod = b.pod("ib");
  const std::string vf = b.vfAddress(1);
  const std::string ipam_dir = b.stateDir() + "/host-local";
  const std::string config =
      R"({"cniVersion":"1.0.0","name":"ib-net","type":"ib-sriov","deviceID":")" + vf +
      R"(","link_state":"enable","runtimeConfig":{"infinibandGUID":"02:00:00:00:00:00:00:07"},)"
      R"("ipam":{"type":"host-local","dataDir":")" +
      ipam_dir + R"(","ranges":[[{"subnet":"10.56.0.0/24"}]]}})";
  const std::string cache = b.stateDir() + "/ib/pod-a-net1";
  auto withPath = [&](const std::string& netns, std::string path) {
    auto a = args(netns, config);
    a.path = std::move(path);
    return a;
  };
  b.inside([&] {
    cni_plugin::IbSriovPlugin plugin = b.ibPlugin();
    // IPAM cannot run: everything ADD did before is put back, the cache it wrote first is gone.
    auto failed = plugin.add(withPath(pod, "/nonexistent-cni-bin"));
    REQUIRE_FALSE(failed.ok());
    CHECK_THAT(failed.status().message(),
               Catch::StartsWith("failed to set up IPAM plugin type \"host-local\"") &&
                   Catch::Contains("failed to find plugin \"host-local\" in path "
                                   "[/nonexistent-cni-bin]"));
    CHECK(b.vf(1).link_state == 0);
    CHECK(b.vf(1).port_guid == 0xffffffffffffffffu);
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK(host::Netdevs().link(b.vfNetdev(1)).ok());
    CHECK_FALSE(fs::exists(cache));

    auto added = plugin.add(withPath(pod, "/usr/lib/cni"));
    INFO((added.ok() ? *added : added.status().message()));
    REQUIRE(added.ok());
    CHECK_THAT(*added, Catch::Contains("10.56.0."));
    CHECK(b.vf(1).link_state == 1);

    // IPAM's DEL fails: so does ours, and the cache stays for the runtime's retry.
    auto del = plugin.del(withPath(pod, "/nonexistent-cni-bin"));
    CHECK_THAT(del.message(), Catch::Contains("failed to find plugin \"host-local\""));
    CHECK(fs::exists(cache));
    CHECK(b.vf(1).link_state == 1);

    // The retry, with the pod's namespace gone as the runtime says it (CNI_NETNS empty), still
    // releases the address and resets the VF.
    CHECK(plugin.del(withPath("", "/usr/lib/cni")).isOk());
    CHECK_FALSE(fs::exists(cache));
    CHECK(b.vf(1).link_state == 0);
    CHECK(b.vf(1).port_guid == 0xffffffffffffffffu);
    int leases = 0;
    for (const auto& e : fs::directory_iterator(ipam_dir + "/ib-net")) {
      if (e.path().filename().string().starts_with("10.56.0.")) ++leases;
    }
    CHECK(leases == 0);
  });
}

TEST_CASE("ib-sriov with rdmaIsolation moves the VF's RDMA device into the pod and back",
          "[host][cni]") {
  if (!root()) return;
  Bench b("a100-reference", "0000:0e:00.0", "ibp14s0");
  std::string pod = b.pod("rdma");
  const std::string vf = b.vfAddress(1);
  const std::string ipam_dir = b.stateDir() + "/host-local";
  // The VF's own GUID, as the agent assigns it (set through the PF, read by its driver when it
  // binds again): ADD and DEL then rebind nothing, so the RDMA device they move stays the same.
  REQUIRE(b.kernel().setVfGuids("ibp14s0", 1, 0x0200000000000009, 0x0200000000000009).isOk());
  REQUIRE(b.kernel().write("sys/bus/pci/drivers/mlx5_core/unbind", vf).isOk());
  REQUIRE(b.kernel().write("sys/bus/pci/drivers/mlx5_core/bind", vf).isOk());
  const auto devices = host::rdmaDevicesOf(b.kernel(), vf);
  REQUIRE(devices.size() == 1);
  const std::string record = "simulated/rdma/netns/" + devices[0];
  const std::string config =
      R"({"cniVersion":"1.0.0","name":"ib-net","type":"ib-sriov","deviceID":")" + vf +
      R"(","rdmaIsolation":true,"ipam":{"type":"host-local","dataDir":")" + ipam_dir +
      R"(","ranges":[[{"subnet":"10.56.0.0/24"}]]}})";
  const std::string cache = b.stateDir() + "/ib/pod-a-net1";
  auto withPath = [&](std::string path) {
    auto a = args(pod, config);
    a.path = std::move(path);
    return a;
  };
  // Where the simulated kernel keeps a moved RDMA device (simulated_kernel.h): the nsfs device
  // and inode of its namespace; none while it is in the initial one.
  auto podIdentity = [&] {
    struct stat st {};
    REQUIRE(::stat(pod.c_str(), &st) == 0);
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  };
  b.inside([&] {
    cni_plugin::IbSriovPlugin plugin = b.ibPlugin();
    // Linux starts in shared mode: refused in upstream's words, before the VF changes.
    auto shared = plugin.add(withPath("/usr/lib/cni"));
    CHECK_THAT(shared.status().message(),
               Catch::Equals("RDMA subsystem namespace awareness mode is set to shared, expecting "
                             "it to be set to exclusive, invalid system configurations"));
    CHECK_FALSE(fs::exists(cache));

    REQUIRE(b.kernel().setRdmaNetnsMode("exclusive").isOk());
    auto moved = [&] { return b.kernel().list("simulated/rdma/netns").valueOr({}); };
    // IPAM could not run: the device came back with the netdev, the cache went.
    auto failed = plugin.add(withPath("/nonexistent-cni-bin"));
    REQUIRE_FALSE(failed.ok());
    CHECK(moved().empty());
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK_FALSE(fs::exists(cache));

    auto added = plugin.add(withPath("/usr/lib/cni"));
    INFO((added.ok() ? *added : added.status().message()));
    REQUIRE(added.ok());
    CHECK(host::rdmaDevicesOf(b.kernel(), vf) == devices);  // no rebind made another
    CHECK(moved() == std::vector<std::string>{devices[0]});
    CHECK(b.kernel().read(record).valueOr("") == podIdentity());
    CHECK(Bench::inPod(pod, "net1"));
    auto cached = readFile(cache);
    REQUIRE(cached.ok());
    CHECK_THAT(*cached, Catch::Contains("\"rdmaIsolation\":true") &&
                            Catch::Contains("\"containerRdmaDevName\":\"" + devices[0] + "\"") &&
                            Catch::Contains("\"deviceID\":\"" + vf + "\""));
    // Seen from the host's namespace the device is gone: moving it from here finds nothing.
    auto host_ns = host::NetNamespace::current();
    REQUIRE(host_ns.ok());
    CHECK(b.kernel().moveDevice(devices[0], *host_ns).sysErrno() == ENODEV);

    CHECK(plugin.del(withPath("/usr/lib/cni")).isOk());
    CHECK_FALSE(b.kernel().exists(record));
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK_FALSE(fs::exists(cache));
    CHECK(plugin.del(withPath("/usr/lib/cni")).isOk());  // again: nothing to do
  });
}

TEST_CASE("ib-sriov's DEL after an ADD killed past the RDMA move brings the device back",
          "[host][cni]") {
  if (!root()) return;
  Bench b("a100-reference", "0000:0e:00.0", "ibp14s0");
  std::string pod = b.pod("rdma");
  const std::string vf = b.vfAddress(1);
  const std::string config =
      R"({"cniVersion":"1.0.0","name":"ib-net","type":"ib-sriov","deviceID":")" + vf +
      R"(","rdmaIsolation":true})";
  b.inside([&] {
    REQUIRE(b.kernel().setRdmaNetnsMode("exclusive").isOk());
    const auto devices = host::rdmaDevicesOf(b.kernel(), vf);
    REQUIRE(devices.size() == 1);
    // What a killed ADD leaves: its cache with the move it was about to make, and the device
    // in the pod (moved there as the plugin does), the netdev still on the host.
    sriovcni::IbNetConf conf;
    conf.plugin.cni_version = "1.0.0";
    conf.plugin.name = "ib-net";
    conf.plugin.type = "ib-sriov";
    conf.device_id = vf;
    conf.rdma_isolation = true;
    conf.master = "ibp14s0";
    conf.vf_id = 1;
    conf.host_if_name = b.vfNetdev(1);
    conf.rdma_net_state = {.device_id = vf,
                           .sandbox_rdma_dev_name = devices[0],
                           .container_rdma_dev_name = devices[0]};
    REQUIRE(cni_plugin::VfFiles(b.stateDir() + "/ib")
                .saveCache("pod-a", "net1", sriovcni::encodeIbCache(conf))
                .isOk());
    auto pod_ns = host::NetNamespace::open(pod);
    REQUIRE(pod_ns.ok());
    REQUIRE(b.kernel().moveDevice(devices[0], *pod_ns).isOk());

    cni_plugin::IbSriovPlugin plugin = b.ibPlugin();
    CHECK(plugin.del(args(pod, config)).isOk());
    CHECK_FALSE(b.kernel().exists("simulated/rdma/netns/" + devices[0]));
    CHECK(host::Netdevs().link(b.vfNetdev(1)).ok());
  });
}
