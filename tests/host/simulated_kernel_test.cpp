// The simulated kernel behaves like Linux on the writes the agent makes.
#include "host/simulated_kernel.h"

#include <cerrno>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>
#include <sched.h>

#include "base/files.h"
#include "host/apply.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/netns.h"
#include "host/rdma.h"
#include "support/skip.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using sriovdra::testing::TempDir;

namespace {

const std::string kPf = "sys/bus/pci/devices/0000:0e:00.0";

std::string read(const host::Sysfs& fs, const std::string& p) {
  return fs.read(p).valueOr("<missing>");
}

}  // namespace

TEST_CASE("writing sriov_numvfs creates and removes VFs like the kernel", "[host]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());

  REQUIRE(k.write(kPf + "/sriov_numvfs", "4").isOk());
  CHECK(read(k, kPf + "/sriov_numvfs") == "4");
  for (int i = 0; i < 4; ++i) {
    std::string vf = "0000:0e:00." + std::to_string(i + 1);
    INFO(vf);
    CHECK(host::baseName(*k.readLink(kPf + "/virtfn" + std::to_string(i))) == vf);
    CHECK(k.resolve("sys/bus/pci/devices/" + vf + "/physfn").valueOr("") ==
          k.resolve(kPf).valueOr("?"));
    CHECK(read(k, "sys/bus/pci/devices/" + vf + "/device") == "0x101c");
    CHECK(host::baseName(*k.readLink("sys/bus/pci/devices/" + vf + "/driver")) == "mlx5_core");
    CHECK(k.exists("sys/class/net/ibp14s0v" + std::to_string(i)));
    CHECK(k.list("sys/bus/pci/devices/" + vf + "/infiniband").valueOr({}).size() == 1);
  }

  SECTION("a new non-zero count while VFs exist is EBUSY") {
    Status st = k.write(kPf + "/sriov_numvfs", "2");
    CHECK(st.sysErrno() == EBUSY);
    CHECK(read(k, kPf + "/sriov_numvfs") == "4");
  }
  SECTION("0 removes every VF, its links, netdevs and RDMA devices") {
    REQUIRE(k.write(kPf + "/sriov_numvfs", "0").isOk());
    CHECK_FALSE(k.exists(kPf + "/virtfn0"));
    CHECK_FALSE(k.exists("sys/bus/pci/devices/0000:0e:00.1"));
    CHECK_FALSE(k.exists("sys/class/net/ibp14s0v0"));
    CHECK_FALSE(k.exists("sys/bus/pci/drivers/mlx5_core/0000:0e:00.1"));
    REQUIRE(k.write(kPf + "/sriov_numvfs", "2").isOk());
    CHECK(read(k, kPf + "/sriov_numvfs") == "2");
  }
}

TEST_CASE("the simulated kernel rejects what Linux rejects", "[host]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  CHECK(k.write(kPf + "/sriov_numvfs", "9").sysErrno() == ERANGE);
  CHECK(k.write(kPf + "/sriov_numvfs", "many").sysErrno() == EINVAL);
  CHECK(k.write(kPf + "/vendor", "0x8086").sysErrno() == EACCES);
  CHECK(k.write("sys/class/net/ibp14s0/mtu", "9000").sysErrno() == EINVAL);  // IPoIB max 4092
  CHECK(k.write("sys/class/net/ibp14s0/mtu", "2044").isOk());
  CHECK(read(k, "sys/class/net/ibp14s0/mtu") == "2044");
  CHECK(k.write("sys/bus/pci/drivers/mlx5_core/unbind", "0000:0e:00.0").isOk());
  CHECK(k.write(kPf + "/sriov_numvfs", "1").sysErrno() == ENOENT);  // no PF driver
}

TEST_CASE("driver binding moves the driver link", "[host]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  REQUIRE(k.write(kPf + "/sriov_numvfs", "1").isOk());
  const std::string vf = "sys/bus/pci/devices/0000:0e:00.1";
  std::string group = host::baseName(*k.readLink(vf + "/iommu_group"));

  CHECK(k.write("sys/bus/pci/drivers/vfio-pci/bind", "0000:0e:00.1").sysErrno() == EBUSY);
  REQUIRE(k.write("sys/bus/pci/drivers/mlx5_core/unbind", "0000:0e:00.1").isOk());
  CHECK_FALSE(k.exists(vf + "/driver"));
  CHECK_FALSE(k.exists("sys/class/net/ibp14s0v0"));
  REQUIRE(k.write(vf + "/driver_override", "vfio-pci").isOk());
  REQUIRE(k.write("sys/bus/pci/drivers_probe", "0000:0e:00.1").isOk());
  CHECK(host::baseName(*k.readLink(vf + "/driver")) == "vfio-pci");
  CHECK(k.exists("dev/vfio/" + group));
  CHECK(k.exists("sys/bus/pci/drivers/vfio-pci/0000:0e:00.1"));

  REQUIRE(k.write("sys/bus/pci/drivers/vfio-pci/unbind", "0000:0e:00.1").isOk());
  REQUIRE(k.write(vf + "/driver_override", "\n").isOk());
  REQUIRE(k.write("sys/bus/pci/drivers_probe", "0000:0e:00.1").isOk());
  CHECK(host::baseName(*k.readLink(vf + "/driver")) == "mlx5_core");
  CHECK_FALSE(k.exists("dev/vfio/" + group));
  CHECK(k.exists("sys/class/net/ibp14s0v0"));
}

TEST_CASE("E810 VFs are placed by sriov_offset and bound to iavf", "[host]") {
  TempDir dir;
  REQUIRE(host::writeFixture("e810-ethernet", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  REQUIRE(k.write("sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs", "64").isOk());
  REQUIRE(k.write("sys/bus/pci/devices/0000:3b:00.1/sriov_numvfs", "2").isOk());
  CHECK(host::baseName(*k.readLink("sys/bus/pci/devices/0000:3b:00.0/virtfn0")) == "0000:3b:01.0");
  CHECK(host::baseName(*k.readLink("sys/bus/pci/devices/0000:3b:00.0/virtfn63")) == "0000:3b:08.7");
  CHECK(host::baseName(*k.readLink("sys/bus/pci/devices/0000:3b:00.1/virtfn0")) == "0000:3c:01.0");
  CHECK(host::baseName(*k.readLink("sys/bus/pci/devices/0000:3b:01.0/driver")) == "iavf");
  CHECK(read(k, "sys/class/net/ens1f0v0/type") == "1");
}

TEST_CASE("what a container needs of a VF follows its driver", "[host]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  REQUIRE(k.write(kPf + "/sriov_numvfs", "1").isOk());

  auto a = host::readVfAccess(k, "0000:0e:00.1");
  REQUIRE(a.ok());
  CHECK(a->driver == "mlx5_core");
  CHECK(a->netdev == "ibp14s0v0");
  REQUIRE_FALSE(a->rdma_device.empty());
  std::string n = a->rdma_device.substr(5);  // mlx5_<n>
  CHECK(a->uverbs == "uverbs" + n);
  CHECK(a->umad == "umad" + n);
  CHECK(a->issm == "issm" + n);
  CHECK(read(k, "sys/class/infiniband_verbs/uverbs" + n + "/ibdev") == a->rdma_device);
  CHECK_FALSE(a->noiommu);

  host::Action to_vfio{host::Action::Kind::kBindDriver, "0000:0e:00.0", "0000:0e:00.1", "vfio-pci",
                       "mlx5_core"};
  REQUIRE(host::applyAction(k, k, to_vfio).isOk());
  a = host::readVfAccess(k, "0000:0e:00.1");
  REQUIRE(a.ok());
  CHECK(a->driver == "vfio-pci");
  CHECK(a->rdma_device.empty());
  CHECK(a->uverbs.empty());
  CHECK_FALSE(k.exists("sys/class/infiniband_verbs/uverbs" + n));
  CHECK(k.exists("dev/vfio/" + a->iommu_group));

  CHECK(host::readVfAccess(k, "0000:0e:07.7").status().code() == Code::kNotFound);
}

TEST_CASE("Mellanox firmware: next-boot values, mstconfig's refusals, and a reboot",
          "[host][firmware]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  const host::MlxSettings eight{true, 8, "IB", ""};  // one port, InfiniBand, sriov_totalvfs 8
  CHECK(k.query("0000:0e:00.0").valueOr({}) == host::MlxFirmware{eight, eight});

  REQUIRE(k.write(kPf + "/sriov_numvfs", "4").isOk());
  CHECK_THAT(k.query("0000:0e:00.1").status().message(), Catch::Contains("not supported"));  // VF
  CHECK_THAT(k.query("0000:99:00.0").status().message(), Catch::Contains("Failed to open"));
  for (const host::MlxChanges& bad :
       std::vector<host::MlxChanges>{{{"NUM_OF_VFS", "129"}},
                                     {{"NUM_OF_VFS", "-1"}},
                                     {{"SRIOV_EN", "yes"}},
                                     {{"LINK_TYPE_P1", "VPI"}},
                                     {{"LINK_TYPE_P2", "ETH"}},
                                     {{"NUM_OF_PF", "2"}},
                                     {{"NUM_OF_VFS", "16"}, {"LINK_TYPE_P2", "IB"}}}) {
    Status st = k.set("0000:0e:00.0", bad);
    CHECK(st.code() == Code::kInternal);
  }
  CHECK(k.query("0000:0e:00.0").valueOr({}).next == eight);  // a refused set writes nothing

  REQUIRE(k.set("0000:0e:00.0", {{"NUM_OF_VFS", "16"}, {"LINK_TYPE_P1", "ETH"}}).isOk());
  auto fw = k.query("0000:0e:00.0");
  REQUIRE(fw.ok());
  CHECK(fw->current == eight);
  CHECK(fw->next == host::MlxSettings{true, 16, "ETH", ""});
  // Nothing changes before the reboot.
  CHECK(read(k, kPf + "/sriov_totalvfs") == "8");
  CHECK(read(k, kPf + "/sriov_numvfs") == "4");

  CHECK(read(k, std::string(host::kBootIdPath)) == host::kFirstBootId);
  REQUIRE(k.reboot().isOk());
  CHECK(read(k, std::string(host::kBootIdPath)) == "00000000-0000-4000-8000-000000000002");
  CHECK(read(k, kPf + "/sriov_numvfs") == "0");  // VFs do not survive a reboot
  CHECK_FALSE(k.exists(kPf + "/virtfn0"));
  CHECK(read(k, kPf + "/sriov_totalvfs") == "16");
  CHECK(read(k, "sys/class/net/ibp14s0/type") == "1");  // the port is Ethernet now
  CHECK(k.query("0000:0e:00.0").valueOr({}).current == fw->next);
  CHECK(k.write(kPf + "/sriov_numvfs", "16").isOk());
  auto journal = read(k, "simulated-kernel.log");
  CHECK_THAT(journal, Catch::Contains("mstconfig -d 0000:0e:00.0 set LINK_TYPE_P1=ETH "
                                      "NUM_OF_VFS=16 -> ok") &&
                          Catch::Contains("reboot -> ok"));

  // SRIOV_EN False: no VFs at all after the next boot.
  REQUIRE(k.set("0000:0e:00.0", {{"SRIOV_EN", "False"}}).isOk());
  REQUIRE(k.reboot().isOk());
  CHECK(read(k, kPf + "/sriov_totalvfs") == "0");
}

TEST_CASE(
    "VF settings through the PF: kept, refused as each driver refuses them, forgotten with "
    "the VFs",
    "[host]") {
  using Kind = host::VfSetting::Kind;
  struct Case {
    std::string fixture, pf, pf_dir;
    host::VfSetting setting;
    int errno_value;  // 0: accepted
  };
  const std::string e810 = "sys/bus/pci/devices/0000:3b:00.0";
  const std::string igb = "sys/bus/pci/devices/0000:01:00.0";
  std::vector<Case> cases = {
      {"e810-ethernet",
       "ens1f0",
       e810,
       {.kind = Kind::kMac, .vf = 1, .mac = "02:11:22:33:44:55"},
       0},
      {"e810-ethernet",
       "ens1f0",
       e810,
       {.kind = Kind::kMac, .vf = 1, .mac = "03:00:00:00:00:01"},
       EINVAL},  // multicast
      {"e810-ethernet",
       "ens1f0",
       e810,
       {.kind = Kind::kVlan, .vf = 1, .vlan = 100, .qos = 2, .vlan_proto = host::kVlanProto8021AD},
       0},
      {"e810-ethernet", "ens1f0", e810, {.kind = Kind::kVlan, .vf = 1, .vlan = 4096}, EINVAL},
      {"e810-ethernet",
       "ens1f0",
       e810,
       {.kind = Kind::kVlan, .vf = 1, .vlan_proto = 0x9100},
       EPROTONOSUPPORT},
      {"e810-ethernet",
       "ens1f0",
       e810,
       {.kind = Kind::kRate, .vf = 1, .min_tx_rate = 10, .max_tx_rate = 100},
       0},
      {"e810-ethernet", "ens1f0", e810, {.kind = Kind::kLinkState, .vf = 3, .link_state = 2}, 0},
      {"e810-ethernet", "ens1f0", e810, {.kind = Kind::kTrust, .vf = 9, .on = true}, EINVAL},
      {"igb-qemu", "eth0", igb, {.kind = Kind::kLinkState, .vf = 1, .link_state = 1}, EOPNOTSUPP},
      {"igb-qemu",
       "eth0",
       igb,
       {.kind = Kind::kVlan, .vf = 1, .vlan = 5, .vlan_proto = host::kVlanProto8021AD},
       EPROTONOSUPPORT},
      {"igb-qemu", "eth0", igb, {.kind = Kind::kRate, .vf = 1, .min_tx_rate = 10}, EINVAL},
      {"igb-qemu",
       "eth0",
       igb,
       {.kind = Kind::kRate, .vf = 1, .max_tx_rate = 100},
       EINVAL},  // the fixture's PF is down: no link
      {"a100-reference", "ibp14s0", kPf, {.kind = Kind::kVlan, .vf = 0, .vlan = 5}, EOPNOTSUPP},
      {"a100-reference", "ibp14s0", kPf, {.kind = Kind::kLinkState, .vf = 0, .link_state = 1}, 0},
  };
  for (const auto& c : cases) {
    INFO(c.fixture << " " << c.setting.text());
    TempDir dir;
    REQUIRE(host::writeFixture(c.fixture, dir.path()).isOk());
    host::SimulatedKernel k(dir.path());
    REQUIRE(k.write(c.pf_dir + "/sriov_numvfs", "4").isOk());
    auto before = k.vfs(c.pf);
    REQUIRE(before.ok());
    Status st = k.setVf(c.pf, c.setting);
    CHECK(st.sysErrno() == c.errno_value);
    auto after = k.vfs(c.pf);
    REQUIRE(after.ok());
    if (c.errno_value != 0) {
      CHECK(*after == *before);
      continue;
    }
    const auto& vf = after->at(static_cast<size_t>(c.setting.vf));
    switch (c.setting.kind) {
      case Kind::kMac:
        CHECK(vf.mac == c.setting.mac);
        break;
      case Kind::kVlan:
        CHECK((vf.vlan == c.setting.vlan && vf.qos == c.setting.qos &&
               vf.vlan_proto == c.setting.vlan_proto));
        break;
      case Kind::kRate:
        CHECK((vf.min_tx_rate == c.setting.min_tx_rate && vf.max_tx_rate == c.setting.max_tx_rate));
        break;
      case Kind::kLinkState:
        CHECK(vf.link_state == c.setting.link_state);
        break;
      default:
        break;
    }
    // VFs made again start as the driver starts them.
    REQUIRE(k.write(c.pf_dir + "/sriov_numvfs", "0").isOk());
    REQUIRE(k.write(c.pf_dir + "/sriov_numvfs", "4").isOk());
    CHECK(k.vfs(c.pf).value() == *before);
  }
  // igb takes a maximum rate once its PF is up with a link (the fixture's speed: 1000 Mbps).
  TempDir dir;
  REQUIRE(host::writeFixture("igb-qemu", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  REQUIRE(k.write(igb + "/sriov_numvfs", "2").isOk());
  REQUIRE(k.setUp("eth0", true).isOk());
  CHECK(k.setVf("eth0", {.kind = Kind::kRate, .vf = 1, .max_tx_rate = 100}).isOk());
  CHECK(k.setVf("eth0", {.kind = Kind::kRate, .vf = 1, .max_tx_rate = 2000}).sysErrno() == EINVAL);
  CHECK(k.vfs("eth0")->at(1).max_tx_rate == 100);
  CHECK(k.vfs("eth0")->at(0).spoofchk);  // igb starts VFs with spoof checking on
  CHECK(k.setUp("eth9", true).sysErrno() == ENODEV);
}

TEST_CASE("RDMA devices move between namespaces only as Linux lets them", "[host][rdma]") {
  if (!testing::rootOr("network namespaces for the simulated RDMA subsystem")) return;
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  REQUIRE(k.write(kPf + "/sriov_numvfs", "2").isOk());
  const std::string vf = "0000:0e:00.1";
  const auto devices = host::rdmaDevicesOf(k, vf);
  REQUIRE(devices.size() == 1);
  const std::string dev = devices[0];
  const std::string record = "simulated/rdma/netns/" + dev;
  // Each check on a thread of its own, in a namespace of its own (the test's "host") with a
  // "pod" namespace beside it.
  std::thread([&] {
    REQUIRE(::unshare(CLONE_NEWNET) == 0);
    auto host_ns = host::NetNamespace::current();
    auto pod = host::NetNamespace::createTemporary();
    REQUIRE((host_ns.ok() && pod.ok()));
    // Linux starts shared: no device moves.
    CHECK(k.netnsMode().value() == "shared");
    CHECK(k.moveDevice(dev, *pod).sysErrno() == EOPNOTSUPP);
    CHECK(k.setRdmaNetnsMode("private").sysErrno() == EINVAL);
    REQUIRE(k.setRdmaNetnsMode("exclusive").isOk());
    CHECK(k.netnsMode().value() == "exclusive");
    CHECK(k.moveDevice("mlx5_99", *pod).sysErrno() == ENODEV);
    REQUIRE(k.moveDevice(dev, *pod).isOk());
    CHECK(k.exists(record));
    // From here the pod's device is not seen; from the pod it is, and goes back.
    CHECK(k.moveDevice(dev, *pod).sysErrno() == ENODEV);
    CHECK(pod->run([&] { return k.moveDevice(dev, *host_ns); }).isOk());
    CHECK_FALSE(k.exists(record));
    // Unbinding the VF's driver destroys the device, and with it where it was.
    REQUIRE(k.moveDevice(dev, *pod).isOk());
    REQUIRE(k.write("sys/bus/pci/drivers/mlx5_core/unbind", vf).isOk());
    CHECK_FALSE(k.exists(record));
    CHECK(host::rdmaDevicesOf(k, vf).empty());
    CHECK(pod->run([&] { return k.moveDevice(dev, *host_ns); }).sysErrno() == ENODEV);
  }).join();
}

TEST_CASE("at boot ib_core takes its netns_mode from /etc/modprobe.d", "[host][rdma]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  CHECK(k.netnsMode().value() == "shared");  // Linux's default
  std::filesystem::create_directories(dir.path() + "/etc/modprobe.d");
  REQUIRE(writeFileAtomic(dir.path() + "/etc/modprobe.d/a.conf",
                          "# a comment\noptions ib_core netns_mode=0\n")
              .isOk());
  CHECK(k.netnsMode().value() == "shared");  // read at boot, not before
  REQUIRE(k.reboot().isOk());
  CHECK(k.netnsMode().value() == "exclusive");
  // Files in name order, the last option wins, as modprobe reads them; others' lines are
  // passed over.
  REQUIRE(writeFileAtomic(dir.path() + "/etc/modprobe.d/b.conf",
                          "options mlx5_core prof_sel=2\noptions ib_core netns_mode=1\n")
              .isOk());
  REQUIRE(writeFileAtomic(dir.path() + "/etc/modprobe.d/c.txt", "options ib_core netns_mode=0\n")
              .isOk());
  REQUIRE(k.reboot().isOk());
  CHECK(k.netnsMode().value() == "shared");
  // The kernel command line over every file.
  REQUIRE(writeFileAtomic(dir.path() + "/proc/cmdline", "root=/dev/sda1 ib_core.netns_mode=0\n")
              .isOk());
  REQUIRE(k.reboot().isOk());
  CHECK(k.netnsMode().value() == "exclusive");
}
