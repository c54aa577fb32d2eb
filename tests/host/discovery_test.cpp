// Discovery on fixture trees, through the simulated kernel, and on this machine's real /sys.
#include "host/discovery.h"

#include <filesystem>

#include <catch2/catch.hpp>

#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "support/policy_fixtures.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using sriovdra::testing::TempDir;

TEST_CASE("the a100-reference tree matches the reference cluster", "[host]") {
  TempDir dir;
  REQUIRE(host::writeFixture("a100-reference", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  REQUIRE(k.write("sys/bus/pci/devices/0000:c7:00.0/sriov_numvfs", "1").isOk());
  auto t = host::discover(k, k);
  REQUIRE(t.ok());
  CHECK(t->warnings.empty());
  REQUIRE(t->pfs.size() == 8);
  for (size_t i = 0; i < 8; ++i) {
    const auto& want = testing::fixture::referencePfs()[i];
    const auto& pf = t->pfs[i];
    INFO(want.name);
    CHECK(pf.name == want.name);
    CHECK(pf.pci_address == want.pci);
    CHECK(pf.pcie_root == want.root);
    CHECK(pf.numa_node == want.numa);
    CHECK(pf.vendor == "15b3");
    CHECK(pf.device_id == "101b");
    CHECK(pf.vf_device_id == "101c");
    CHECK(pf.total_vfs == 8);
    CHECK(pf.link_type == "IB");
    CHECK(pf.driver == "mlx5_core");
    CHECK_FALSE(pf.pcie_switch.empty());
    CHECK_FALSE(pf.rdma_device.empty());
  }
  const auto& ibp199 = t->pfs[6];
  REQUIRE(ibp199.vfs.size() == 1);
  CHECK(ibp199.vfs[0].pci_address == "0000:c7:00.1");
  CHECK(ibp199.vfs[0].vf_id == 0);
  CHECK(ibp199.vfs[0].device_id == "101c");
  CHECK(ibp199.vfs[0].driver == "mlx5_core");
  CHECK_FALSE(ibp199.vfs[0].rdma_device.empty());
  CHECK_FALSE(ibp199.vfs[0].iommu_group.empty());

  REQUIRE(t->gpus.size() == 8);
  CHECK(t->gpus[0].pci_address == "0000:07:00.0");
  CHECK(t->gpus[0].pcie_root == "pci0000:00");
  CHECK(t->gpus[0].device_id == "20b2");
  CHECK(t->gpus[0].pcie_switch == t->pfs[0].pcie_switch);
  CHECK(t->gpus[6].pci_address == "0000:c0:00.0");
  CHECK(t->gpus[6].pcie_root == "pci0000:b9");
  CHECK(t->gpus[6].numa_node == 1);

  REQUIRE(t->roots.size() == 4);
  CHECK(t->roots[3].name == "pci0000:b9");
  REQUIRE(t->roots[3].switches.size() == 1);
  CHECK(t->roots[3].switches[0].devices.size() == 4);

  auto alignment = host::computeAlignment(*t, {{"0000-c7-00-1", "0000:c7:00.1", {}}});
  CHECK(alignment.root_implies_switch);
  CHECK(alignment.gpus[6].same_root_vfs == std::vector<std::string>{"0000-c7-00-1"});
  CHECK(alignment.gpus[6].same_switch_vfs == std::vector<std::string>{"0000-c7-00-1"});
  CHECK(alignment.gpus[0].same_root_vfs.empty());
}

TEST_CASE("on the shared-root tree a shared pcieRoot does not mean a shared switch", "[host]") {
  TempDir dir;
  REQUIRE(host::writeFixture("shared-root", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  REQUIRE(k.write("sys/bus/pci/devices/0000:04:00.0/sriov_numvfs", "1").isOk());
  REQUIRE(k.write("sys/bus/pci/devices/0000:84:00.0/sriov_numvfs", "1").isOk());
  auto t = host::discover(k, k);
  REQUIRE(t.ok());
  REQUIRE(t->roots.size() == 1);
  CHECK(t->roots[0].switches.size() == 2);
  auto alignment = host::computeAlignment(
      *t, {{"0000-04-00-1", "0000:04:00.1", {}}, {"0000-84-00-1", "0000:84:00.1", {}}});
  CHECK_FALSE(alignment.root_implies_switch);
  REQUIRE(alignment.gpus.size() == 2);
  CHECK(alignment.gpus[0].same_root_vfs.size() == 2);
  CHECK(alignment.gpus[0].same_switch_vfs == std::vector<std::string>{"0000-04-00-1"});
}

namespace {

// The simulated kernel's sysfs, noting the paths of every file read.
class ReadsNoted : public host::Sysfs {
 public:
  explicit ReadsNoted(const host::Sysfs& inner) : inner_(inner) {}
  Result<std::string> read(std::string_view p) const override {
    reads.emplace_back(p);
    return inner_.read(p);
  }
  Result<std::string> readLink(std::string_view p) const override { return inner_.readLink(p); }
  Result<std::string> resolve(std::string_view p) const override { return inner_.resolve(p); }
  Result<std::vector<std::string>> list(std::string_view p) const override {
    return inner_.list(p);
  }
  bool exists(std::string_view p) const override { return inner_.exists(p); }
  Status write(std::string_view, std::string_view) override {
    return Status::fromErrno(EROFS, "writing");
  }
  const std::string& root() const override { return inner_.root(); }
  mutable std::vector<std::string> reads;

 private:
  const host::Sysfs& inner_;
};

// The simulated kernel's netlink without its rtnetlink dump, as when the dump fails.
class NoDump : public host::Netlink {
 public:
  explicit NoDump(host::Netlink& inner) : inner_(inner) {}
  Result<std::vector<host::LinkInfo>> links() const override {
    return Status::fromErrno(ENOBUFS, "RTM_GETLINK dump");
  }
  Result<std::string> eswitchMode(std::string_view pci) const override {
    return inner_.eswitchMode(pci);
  }
  Status setEswitchMode(std::string_view pci, std::string_view mode) override {
    return inner_.setEswitchMode(pci, mode);
  }
  Result<std::vector<host::VfInfo>> vfs(std::string_view pf) const override {
    return inner_.vfs(pf);
  }
  Result<std::vector<host::VfStats>> vfStats(std::string_view pf) const override {
    return inner_.vfStats(pf);
  }
  Status setVf(std::string_view pf, const host::VfSetting& setting) override {
    return inner_.setVf(pf, setting);
  }
  Status setUp(std::string_view netdev, bool up) override { return inner_.setUp(netdev, up); }
  Status setVfGuids(std::string_view pf, int32_t vf, uint64_t node, uint64_t port) override {
    return inner_.setVfGuids(pf, vf, node, port);
  }

 private:
  host::Netlink& inner_;
};

}  // namespace

TEST_CASE("each VF's netdev comes from the rtnetlink dump as sysfs shows it", "[host]") {
  TempDir dir;
  REQUIRE(host::writeFixture("e810-ethernet", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  // PF1's VFs start after all of PF0's possible VFs: the listing has PF0, PF1, PF0's VFs, PF1's.
  REQUIRE(k.write("sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs", "8").isOk());
  REQUIRE(k.write("sys/bus/pci/devices/0000:3b:00.1/sriov_numvfs", "8").isOk());
  NoDump no_dump(k);
  auto from_sysfs = host::discover(k, no_dump);
  ReadsNoted noted(k);
  auto from_dump = host::discover(noted, k);
  REQUIRE(from_sysfs.ok());
  REQUIRE(from_dump.ok());
  CHECK(from_dump->warnings.empty());
  REQUIRE(from_sysfs->warnings.size() == 1);
  CHECK_THAT(from_sysfs->warnings[0], Catch::Contains("read from sysfs"));
  REQUIRE(from_dump->pfs.size() == 2);
  REQUIRE(from_sysfs->pfs.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const auto& dumped = from_dump->pfs[i];
    INFO(dumped.pci_address);
    CHECK(dumped.name == from_sysfs->pfs[i].name);
    CHECK(dumped.mac == from_sysfs->pfs[i].mac);
    REQUIRE(dumped.vfs.size() == 8);
    CHECK(dumped.vfs == from_sysfs->pfs[i].vfs);
    for (const auto& vf : dumped.vfs) {
      CHECK_FALSE(vf.name.empty());
      CHECK(vf.mac.size() == 17);
      // A VF its PF listed is never read again as a device of its own.
      for (const auto& path : noted.reads) CHECK(path.find(vf.pci_address) == std::string::npos);
    }
  }
}

TEST_CASE("a VF whose netdev is in another network namespace is assigned \"netns\"", "[host]") {
  TempDir dir;
  REQUIRE(host::writeFixture("e810-ethernet", dir.path()).isOk());
  host::SimulatedKernel k(dir.path());
  REQUIRE(k.write("sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs", "3").isOk());
  auto fresh = host::discover(k, k);
  REQUIRE(fresh.ok());
  const auto& created = fresh->pfs.at(0).vfs;
  REQUIRE(created.size() == 3);
  REQUIRE(k.write("sys/bus/pci/drivers/iavf/unbind", created[2].pci_address).isOk());
  REQUIRE(k.write("sys/bus/pci/drivers/vfio-pci/bind", created[2].pci_address).isOk());
  auto before = host::discover(k, k);
  REQUIRE(before.ok());
  std::string moved = before->pfs.at(0).vfs.at(0).name;
  std::string moved_vf = before->pfs.at(0).vfs.at(0).pci_address;
  REQUIRE_FALSE(moved.empty());
  REQUIRE(k.moveToNetns(moved, "pod-a").isOk());
  CHECK_FALSE(k.moveToNetns(moved, "pod-a").isOk());  // ENODEV: gone from here
  NoDump no_dump(k);
  for (const host::Netlink* nl : std::initializer_list<const host::Netlink*>{&k, &no_dump}) {
    auto t = host::discover(k, *nl);
    REQUIRE(t.ok());
    const auto& vfs = t->pfs.at(0).vfs;
    REQUIRE(vfs.size() == 3);
    CHECK(vfs[0].name.empty());
    CHECK(vfs[0].driver == "iavf");
    CHECK(vfs[0].assigned == "netns");
    CHECK(vfs[1].assigned.empty());  // its netdev is here
    CHECK(vfs[2].assigned.empty());  // vfio-pci: no netdev to look for
  }
  REQUIRE(k.returnFromNetns("pod-a", moved).isOk());
  auto after = host::discover(k, k);
  REQUIRE(after.ok());
  CHECK(after->pfs.at(0).vfs == before->pfs.at(0).vfs);

  // Unbinding its driver while the netdev is away destroys it there, as Linux does.
  REQUIRE(k.moveToNetns(moved, "pod-b").isOk());
  REQUIRE(k.write("sys/bus/pci/drivers/iavf/unbind", moved_vf).isOk());
  CHECK_FALSE(k.returnFromNetns("pod-b", moved).isOk());
}

TEST_CASE("on this machine's /sys every PCI device's root is the one Kubernetes computes",
          "[host]") {
  host::RealSysfs real("/");
  auto t = host::discover(real, host::KernelNetlink());
  REQUIRE(t.ok());
  auto devices = real.list("sys/bus/pci/devices");
  REQUIRE(devices.ok());
  REQUIRE_FALSE(devices->empty());
  // Kubernetes' resource.kubernetes.io/pcieRoot: the first component after /sys/devices/ of the
  // device's resolved sysfs path, computed here without our code.
  auto kubernetesRoot = [](const std::string& bdf) {
    auto resolved = std::filesystem::canonical("/sys/bus/pci/devices/" + bdf).string();
    std::string rest = resolved.substr(std::string("/sys/devices/").size());
    return rest.substr(0, rest.find('/'));
  };
  for (const auto& bdf : *devices) {
    INFO(bdf);
    auto where = host::placement(real, bdf);
    REQUIRE(where.ok());
    CHECK(where->root == kubernetesRoot(bdf));
  }
  for (const auto& pf : t->pfs) CHECK(pf.pcie_root == kubernetesRoot(pf.pci_address));
  for (const auto& g : t->gpus) CHECK(g.pcie_root == kubernetesRoot(g.pci_address));
}

TEST_CASE("a missing sysfs root is an error that names it", "[host]") {
  host::RealSysfs nowhere("/nonexistent-sysfs-root");
  auto t = host::discover(nowhere, host::KernelNetlink());
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(t.status().message(),
             Catch::Contains("/nonexistent-sysfs-root") && Catch::Contains("--sysfs-root"));
}
