// The Netlink seam, twice: KernelNetlink against this machine's kernel (a veth pair the test
// creates, with an altName), and the simulated kernel's devlink and VF GUIDs, which refuse what
// drivers refuse, in the order they require.
#include "host/netlink.h"

#include <cerrno>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "base/files.h"
#include "host/apply.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "support/pod_network.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using sriovdra::testing::TempDir;

namespace {

// A veth pair in this network namespace, removed again with the test.
struct VethPair {
  std::string a = "sdra" + std::to_string(::getpid()) + "a";
  std::string b = "sdra" + std::to_string(::getpid()) + "b";
  VethPair() {
    auto made = testing::ip({"link", "add", a, "type", "veth", "peer", "name", b});
    INFO(made.err);
    REQUIRE(made.exit_code == 0);
  }
  ~VethPair() { (void)testing::ip({"link", "del", a}); }
};

}  // namespace

TEST_CASE("this kernel's interfaces are listed in one rtnetlink dump", "[host][netlink]") {
  if (!testing::rootOr("the real-kernel netlink checks")) return;
  VethPair veth;
  std::string alt = "sriov-dra-test-alt-" + std::to_string(::getpid());
  auto added = testing::ip({"link", "property", "add", "dev", veth.a, "altname", alt});
  INFO(added.err);
  REQUIRE(added.exit_code == 0);
  REQUIRE(testing::ip({"link", "set", veth.a, "mtu", "4000", "up"}).exit_code == 0);
  host::KernelNetlink kernel;
  auto links = kernel.links();
  REQUIRE(links.ok());
  auto find = [&](const std::string& name) -> const host::LinkInfo* {
    for (const auto& l : *links) {
      if (l.name == name) return &l;
    }
    return nullptr;
  };
  const host::LinkInfo* a = find(veth.a);
  const host::LinkInfo* b = find(veth.b);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a->alt_names == std::vector<std::string>{alt});
  CHECK(b->alt_names.empty());
  CHECK(a->mtu == 4000);
  CHECK((a->flags & 0x1) != 0);  // IFF_UP
  CHECK((b->flags & 0x1) == 0);
  CHECK(a->type == 1);  // ARPHRD_ETHER
  // The address as sysfs shows it.
  auto sysfs_mac = readFile("/sys/class/net/" + veth.a + "/address");
  REQUIRE(sysfs_mac.ok());
  CHECK(a->mac + "\n" == *sysfs_mac);
  CHECK(a->parent_device.empty());  // a veth sits on no device
  CHECK(find("lo") != nullptr);

  // VF GUIDs: the kernel parses the request (a malformed nest would be EINVAL) and answers that
  // a veth's driver has no VF GUIDs; its VF information holds no VFs.
  auto guids = kernel.vfGuids(veth.a);
  REQUIRE(guids.ok());
  CHECK(guids->empty());
  CHECK(kernel.setVfGuids(veth.a, 0, 0x0211223344556677, 0x0211223344556677).sysErrno() ==
        EOPNOTSUPP);
  CHECK(kernel.vfGuids("sriov-dra-none").status().sysErrno() == ENODEV);
  // VF counters: the request with statistics is answered too (a veth has no VFs).
  auto stats = kernel.vfStats(veth.a);
  REQUIRE(stats.ok());
  CHECK(stats->empty());
  CHECK(kernel.vfStats("sriov-dra-none").status().sysErrno() == ENODEV);
}

TEST_CASE("this kernel's devlink answers for a device that is not there", "[host][netlink]") {
  host::KernelNetlink kernel;
  auto mode = kernel.eswitchMode("0000:ff:1f.7");
  REQUIRE_FALSE(mode.ok());
  INFO(mode.status().message());
  // A kernel without devlink says so; one with it has no such device (or, unprivileged, refuses).
  int e = mode.status().sysErrno();
  CHECK((e == ENOENT || e == ENODEV || e == EPERM));
  if (e == ENOENT) {
    CHECK_THAT(mode.status().message(), Catch::Contains("this kernel has no devlink"));
  }
  CHECK(kernel.setEswitchMode("0000:ff:1f.7", "switchdev").sysErrno() == e);
}

TEST_CASE("the simulated devlink changes an eSwitch mode only as drivers allow",
          "[host][netlink]") {
  TempDir dir;
  REQUIRE(host::writeFixture("e810-ethernet", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  const std::string pf = "0000:3b:00.0";
  CHECK(*k.eswitchMode(pf) == "legacy");
  auto links = k.links();
  REQUIRE(links.ok());
  REQUIRE(links->size() == 2);
  CHECK((*links)[0].name == "ens1f0");
  CHECK((*links)[0].alt_names == std::vector<std::string>{"enp59s0f0np0"});
  CHECK((*links)[0].parent_device == pf);
  CHECK((*links)[0].parent_bus == "pci");

  REQUIRE(k.write("sys/bus/pci/devices/" + pf + "/sriov_numvfs", "2").isOk());
  CHECK(k.setEswitchMode(pf, "switchdev").sysErrno() == EBUSY);  // VFs first to 0
  CHECK(k.setEswitchMode(pf, "offload").sysErrno() == EINVAL);
  CHECK(k.eswitchMode("0000:3b:01.0").status().sysErrno() == EOPNOTSUPP);  // its first VF
  CHECK(k.eswitchMode("0000:99:00.0").status().sysErrno() == ENODEV);

  // The agent's order: VFs to 0, the mode, VFs back.
  using K = host::Action::Kind;
  for (const auto& a : {host::Action{K::kSetNumVfs, pf, pf, "0", ""},
                        host::Action{K::kSetEswitchMode, pf, pf, "switchdev", ""},
                        host::Action{K::kSetNumVfs, pf, pf, "2", ""}}) {
    INFO(a.describe());
    REQUIRE(host::applyAction(k, k, a).isOk());
  }
  CHECK(*k.eswitchMode(pf) == "switchdev");
  auto t = host::discover(k, k);
  REQUIRE(t.ok());
  CHECK(t->pfs[0].eswitch_mode == "switchdev");
  CHECK(t->pfs[0].alt_names == std::vector<std::string>{"enp59s0f0np0"});
  CHECK(t->pfs[0].num_vfs == 2);
  CHECK(t->pfs[1].eswitch_mode == "legacy");
  CHECK(t->warnings.empty());
  auto journal = k.read("simulated-kernel.log");
  REQUIRE(journal.ok());
  CHECK_THAT(*journal, Catch::Contains("devlink pci/" + pf +
                                       " eswitch mode switchdev -> "
                                       "changing the eSwitch mode of pci/" +
                                       pf + " while it has VFs") &&
                           Catch::Contains("devlink pci/" + pf + " eswitch mode switchdev -> ok"));
}

TEST_CASE("InfiniBand ports have no eSwitch and discovery reports them legacy", "[host][netlink]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  CHECK(k.eswitchMode("0000:0e:00.0").status().sysErrno() == EOPNOTSUPP);
  CHECK(k.setEswitchMode("0000:0e:00.0", "switchdev").sysErrno() == EOPNOTSUPP);
  auto t = host::discover(k, k);
  REQUIRE(t.ok());
  CHECK(t->warnings.empty());
  for (const auto& pf : t->pfs) CHECK(pf.eswitch_mode == "legacy");
}

// Found on a real kernel (tests/kernel): igb registers no devlink instance, and devlink answers
// ENODEV for its PF, not EOPNOTSUPP; discovery still reports legacy, without a warning.
TEST_CASE("a PF whose driver has no devlink answers ENODEV and is legacy", "[host][netlink]") {
  TempDir dir;
  REQUIRE(host::writeFixture("igb-qemu", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  CHECK(k.eswitchMode("0000:01:00.0").status().sysErrno() == ENODEV);
  CHECK(k.setEswitchMode("0000:01:00.0", "switchdev").sysErrno() == ENODEV);
  auto t = host::discover(k, k);
  REQUIRE(t.ok());
  REQUIRE(t->pfs.size() == 1);
  CHECK(t->pfs[0].eswitch_mode == "legacy");
  CHECK(t->pfs[0].driver == "igb");
  CHECK(t->warnings.empty());
}

TEST_CASE("the simulated mlx5 keeps InfiniBand VF GUIDs as the kernel does", "[host][netlink]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  auto before = host::discover(k, k);
  REQUIRE(before.ok());
  const api::InterfaceExt* ib = nullptr;
  for (const auto& pf : before->pfs) {
    if (pf.link_type == "IB" && ib == nullptr) ib = &pf;
  }
  REQUIRE(ib != nullptr);
  std::string pf = ib->name, bdf = ib->pci_address;
  CHECK(k.vfGuids(pf)->empty());  // no VFs yet
  CHECK(k.setVfGuids(pf, 0, 1, 1).sysErrno() == EINVAL);
  REQUIRE(k.write("sys/bus/pci/devices/" + bdf + "/sriov_numvfs", "2").isOk());
  auto zero = k.vfGuids(pf);
  REQUIRE(zero.ok());
  CHECK(*zero == std::vector<host::VfGuids>{{0, 0, 0}, {1, 0, 0}});
  const uint64_t guid = 0x02aabbccddeeff01;
  REQUIRE(k.setVfGuids(pf, 1, guid, guid).isOk());
  CHECK(k.setVfGuids(pf, 2, guid, guid).sysErrno() == EINVAL);
  CHECK(k.vfGuids(pf)->at(1) == host::VfGuids{1, guid, guid});
  // Discovery reports the port GUID; the VF's netdev shows it once its driver binds again.
  auto t = host::discover(k, k);
  REQUIRE(t.ok());
  const api::VirtualFunction* vf1 = nullptr;
  for (const auto& p : t->pfs) {
    for (const auto& vf : p.vfs) {
      if (p.pci_address == bdf && vf.vf_id == 1) vf1 = &vf;
    }
  }
  REQUIRE(vf1 != nullptr);
  CHECK(vf1->guid == "02:aa:bb:cc:dd:ee:ff:01");
  CHECK_THAT(vf1->mac, Catch::EndsWith("00:00:00:00:00:00:00:00"));
  std::string vf_bdf = vf1->pci_address;
  REQUIRE(host::bindDriver(k, vf_bdf, "", "mlx5_core").isOk());
  auto netdevs = k.list("sys/bus/pci/devices/" + vf_bdf + "/net");
  REQUIRE(netdevs.ok());
  REQUIRE(netdevs->size() == 1);
  CHECK(k.read("sys/bus/pci/devices/" + vf_bdf + "/net/" + netdevs->front() + "/address").value() ==
        "00:00:10:49:fe:80:00:00:00:00:00:00:02:aa:bb:cc:dd:ee:ff:01");
  // Ethernet PFs have none; removing the VFs forgets them.
  for (const auto& p : t->pfs) {
    if (p.link_type == "ETH" && !p.name.empty()) {
      CHECK(k.vfGuids(p.name)->empty());
      CHECK(k.setVfGuids(p.name, 0, guid, guid).sysErrno() == EOPNOTSUPP);
    }
  }
  REQUIRE(k.write("sys/bus/pci/devices/" + bdf + "/sriov_numvfs", "0").isOk());
  REQUIRE(k.write("sys/bus/pci/devices/" + bdf + "/sriov_numvfs", "2").isOk());
  CHECK(k.vfGuids(pf)->at(1) == host::VfGuids{1, 0, 0});
  CHECK_THAT(k.read("simulated-kernel.log").value(),
             Catch::Contains("rtnetlink " + pf +
                             " vf 1 node_guid 02:aa:bb:cc:dd:ee:ff:01 port_guid "
                             "02:aa:bb:cc:dd:ee:ff:01 -> ok"));
}

TEST_CASE("the simulated PF drivers count each VF's traffic until the VFs go", "[host][netlink]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  const std::string pf = "sys/bus/pci/devices/0000:0e:00.0";
  REQUIRE(k.write(pf + "/sriov_numvfs", "2").isOk());
  auto stats = k.vfStats("ibp14s0");
  REQUIRE(stats.ok());
  CHECK(*stats == std::vector<host::VfStats>{{.vf = 0}, {.vf = 1}});  // as drivers start VFs

  REQUIRE(k.addVfTraffic("ibp14s0", {.vf = 1, .rx_packets = 2, .rx_bytes = 3000}).isOk());
  REQUIRE(k.addVfTraffic("ibp14s0", {.vf = 1, .rx_packets = 1, .tx_bytes = 64}).isOk());
  stats = k.vfStats("ibp14s0");
  REQUIRE(stats.ok());
  CHECK(stats->at(1) == host::VfStats{.vf = 1, .rx_packets = 3, .rx_bytes = 3000, .tx_bytes = 64});
  CHECK(stats->at(0) == host::VfStats{.vf = 0});

  CHECK(k.addVfTraffic("ibp14s0", {.vf = 2}).sysErrno() == EINVAL);
  CHECK(k.addVfTraffic("ibp14s0v0", {.vf = 0}).sysErrno() == EINVAL);  // a VF has no VFs
  CHECK(k.vfStats("ibp14s0v0")->empty());
  CHECK(k.vfStats("nope").status().sysErrno() == ENODEV);

  // VFs made again start from zero.
  REQUIRE(k.write(pf + "/sriov_numvfs", "0").isOk());
  REQUIRE(k.write(pf + "/sriov_numvfs", "2").isOk());
  CHECK(k.vfStats("ibp14s0")->at(1) == host::VfStats{.vf = 1});
}
