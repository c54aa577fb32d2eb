#include "host/fixtures.h"

#include <cstdio>
#include <filesystem>
#include <map>

#include "base/strings.h"
#include "host/pci.h"
#include "host/reboot.h"
#include "host/tree.h"

namespace sriovdra::host {
namespace {

struct Nic {
  std::string bdf, name, vendor, device, vf_device, driver;
  int total_vfs;
  bool infiniband;
  int mtu;
  int speed;
  int sriov_offset = 1;
  std::vector<std::string> alt_names;  // what netlink reports (simulated/netlink/altnames)
  int sriov_stride = 1;
  bool up = true;  // administratively up (a booted server's configured ports are)
};

struct Gpu {
  std::string bdf, vendor = "10de", device = "20b2", driver = "nvidia";
};

struct Switch {
  std::string upstream_port;  // BDF
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
};

struct Root {
  std::string name;  // pci0000:00
  int numa;
  std::string root_port;
  std::vector<Switch> switches;  // one per root port when several
  std::vector<std::string> extra_root_ports;
  std::vector<Nic> direct_nics;  // NICs right below the root port
};

class Builder {
 public:
  explicit Builder(const std::string& root) : t_(root) {}

  Status build(const std::vector<Root>& roots) {
    for (const char* d :
         {"pcieport", "mlx5_core", "nvidia", "ice", "iavf", "igb", "igbvf", "vfio-pci"}) {
      std::string dir = std::string("sys/bus/pci/drivers/") + d;
      SDRA_RETURN_IF_ERROR(t_.mkdirs(dir));
      SDRA_RETURN_IF_ERROR(t_.file(dir + "/bind", ""));
      SDRA_RETURN_IF_ERROR(t_.file(dir + "/unbind", ""));
      SDRA_RETURN_IF_ERROR(t_.file(dir + "/new_id", ""));
    }
    SDRA_RETURN_IF_ERROR(t_.file("sys/bus/pci/drivers_probe", ""));
    SDRA_RETURN_IF_ERROR(t_.mkdirs("sys/class/net"));
    SDRA_RETURN_IF_ERROR(t_.mkdirs("sys/class/infiniband"));
    SDRA_RETURN_IF_ERROR(t_.mkdirs("sys/kernel/iommu_groups"));
    SDRA_RETURN_IF_ERROR(t_.mkdirs("dev/vfio"));
    SDRA_RETURN_IF_ERROR(t_.file(kBootIdPath, kFirstBootId));
    for (const auto& r : roots) {
      std::string rc = "sys/devices/" + r.name;
      SDRA_RETURN_IF_ERROR(t_.mkdirs(rc));
      std::vector<std::string> ports = {r.root_port};
      ports.insert(ports.end(), r.extra_root_ports.begin(), r.extra_root_ports.end());
      for (size_t i = 0; i < ports.size(); ++i) {
        std::string rp = rc + "/" + ports[i];
        SDRA_RETURN_IF_ERROR(
            function(rp, ports[i], "0x8086", "0x347a", "0x060400", r.numa, "pcieport"));
        if (i == 0) {
          for (const auto& nic : r.direct_nics) SDRA_RETURN_IF_ERROR(addNic(rp, nic, r.numa));
        }
        if (i < r.switches.size()) SDRA_RETURN_IF_ERROR(addSwitch(rp, r.switches[i], r.numa));
      }
    }
    return Status::ok();
  }

 private:
  Status function(const std::string& dir, const std::string& bdf, const std::string& vendor,
                  const std::string& device, const std::string& cls, int numa,
                  const std::string& driver) {
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/vendor", vendor));
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/device", device));
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/class", cls));
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/numa_node", std::to_string(numa)));
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/driver_override", "(null)"));
    SDRA_RETURN_IF_ERROR(t_.link("sys/bus/pci/devices/" + bdf, dir));
    std::string group = std::to_string(next_group_++);
    SDRA_RETURN_IF_ERROR(t_.link("sys/kernel/iommu_groups/" + group + "/devices/" + bdf, dir));
    SDRA_RETURN_IF_ERROR(t_.link(dir + "/iommu_group", "sys/kernel/iommu_groups/" + group));
    if (!driver.empty()) {
      SDRA_RETURN_IF_ERROR(t_.link(dir + "/driver", "sys/bus/pci/drivers/" + driver));
      SDRA_RETURN_IF_ERROR(t_.link("sys/bus/pci/drivers/" + driver + "/" + bdf, dir));
    }
    return Status::ok();
  }

  Status addSwitch(const std::string& rp, const Switch& sw, int numa) {
    std::string usp = rp + "/" + sw.upstream_port;
    SDRA_RETURN_IF_ERROR(
        function(usp, sw.upstream_port, "0x1000", "0xc010", "0x060400", numa, "pcieport"));
    auto up = *PciAddress::parse(sw.upstream_port);
    int port = 0;
    auto downstream = [&]() {
      PciAddress d{up.domain, up.bus + 1, static_cast<uint32_t>(port * 4), 0};
      ++port;
      return d.toString();
    };
    for (const auto& g : sw.gpus) {
      std::string dsp = downstream();
      std::string dir = usp;
      dir.append("/").append(dsp);
      SDRA_RETURN_IF_ERROR(function(dir, dsp, "0x1000", "0xc010", "0x060400", numa, "pcieport"));
      SDRA_RETURN_IF_ERROR(function(dir + "/" + g.bdf, g.bdf, "0x" + g.vendor, "0x" + g.device,
                                    "0x030200", numa, g.driver));
    }
    for (const auto& n : sw.nics) {
      std::string dsp = downstream();
      std::string dir = usp;
      dir.append("/").append(dsp);
      SDRA_RETURN_IF_ERROR(function(dir, dsp, "0x1000", "0xc010", "0x060400", numa, "pcieport"));
      SDRA_RETURN_IF_ERROR(addNic(dir, n, numa));
    }
    return Status::ok();
  }

  Status addNic(const std::string& parent, const Nic& n, int numa) {
    std::string dir = parent + "/" + n.bdf;
    SDRA_RETURN_IF_ERROR(function(dir, n.bdf, "0x" + n.vendor, "0x" + n.device,
                                  n.infiniband ? "0x020700" : "0x020000", numa, n.driver));
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/sriov_totalvfs", std::to_string(n.total_vfs)));
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/sriov_numvfs", "0"));
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/sriov_vf_device", n.vf_device));
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/sriov_offset", std::to_string(n.sriov_offset)));
    SDRA_RETURN_IF_ERROR(t_.file(dir + "/sriov_stride", std::to_string(n.sriov_stride)));
    std::string net = dir + "/net/" + n.name;
    SDRA_RETURN_IF_ERROR(t_.file(net + "/type", n.infiniband ? "32" : "1"));
    SDRA_RETURN_IF_ERROR(t_.file(net + "/mtu", std::to_string(n.mtu)));
    SDRA_RETURN_IF_ERROR(t_.file(net + "/speed", std::to_string(n.speed)));
    SDRA_RETURN_IF_ERROR(t_.file(net + "/operstate", n.up ? "up" : "down"));
    SDRA_RETURN_IF_ERROR(t_.file(net + "/flags", n.up ? "0x1003" : "0x1002"));
    char mac[32];
    auto a = *PciAddress::parse(n.bdf);
    std::snprintf(mac, sizeof mac, "b8:ce:f6:%02x:%02x:%02x", a.bus, a.device, a.function);
    SDRA_RETURN_IF_ERROR(t_.file(net + "/address", mac));
    SDRA_RETURN_IF_ERROR(t_.link("sys/class/net/" + n.name, net));
    SDRA_RETURN_IF_ERROR(t_.link(net + "/device", dir));
    if (!n.alt_names.empty()) {
      SDRA_RETURN_IF_ERROR(
          t_.file("simulated/netlink/altnames/" + n.name, join(n.alt_names, "\n")));
    }
    if (n.driver == "mlx5_core") SDRA_RETURN_IF_ERROR(addRdmaDevice(t_, dir, next_rdma_++));
    return Status::ok();
  }

  Tree t_;
  int next_group_ = 10;
  int next_rdma_ = 0;
};

Nic cx6(const std::string& bdf, const std::string& name) {
  return {bdf, name, "15b3", "101b", "101c", "mlx5_core", 8, true, 4092, 200000};
}

// The same ConnectX-6 port with its link type set to Ethernet (RoCE): systemd names it by its
// path and physical port, enp14s0np0 for the InfiniBand port ibp14s0.
Nic cx6Ethernet(const std::string& bdf, const std::string& ib_name) {
  std::string name = "enp" + ib_name.substr(3) + "np0";
  return {bdf, name, "15b3", "101b", "101c", "mlx5_core", 8, false, 9000, 200000};
}

// The reference A100 server: four roots, each with a switch holding two GPUs and two CX6 ports.
std::vector<Root> a100Server(bool infiniband) {
  auto gpus = [](std::initializer_list<const char*> bdfs) {
    std::vector<Gpu> out;
    for (const char* b : bdfs) out.push_back({b});
    return out;
  };
  auto nic = [&](const std::string& bdf, const std::string& ib_name) {
    return infiniband ? cx6(bdf, ib_name) : cx6Ethernet(bdf, ib_name);
  };
  auto root = [&](const char* name, int numa, const char* root_port, const char* switch_port,
                  std::initializer_list<const char*> gpu_bdfs, const Nic& a, const Nic& b) {
    return Root{name, numa, root_port, {{switch_port, gpus(gpu_bdfs), {a, b}}}, {}, {}};
  };
  return {
      root("pci0000:00", 0, "0000:00:01.0", "0000:05:00.0", {"0000:07:00.0", "0000:0a:00.0"},
           nic("0000:0e:00.0", "ibp14s0"), nic("0000:11:00.0", "ibp17s0")),
      root("pci0000:3a", 0, "0000:3a:00.0", "0000:3b:00.0", {"0000:4c:00.0", "0000:4f:00.0"},
           nic("0000:52:00.0", "ibp82s0"), nic("0000:53:00.0", "ibp83s0")),
      root("pci0000:80", 1, "0000:80:01.0", "0000:81:00.0", {"0000:85:00.0", "0000:88:00.0"},
           nic("0000:8b:00.0", "ibp139s0"), nic("0000:8e:00.0", "ibp142s0")),
      root("pci0000:b9", 1, "0000:b9:00.0", "0000:ba:00.0", {"0000:c0:00.0", "0000:c3:00.0"},
           nic("0000:c7:00.0", "ibp199s0"), nic("0000:ca:00.0", "ibp202s0")),
  };
}

// Long on purpose: a table of the fixture servers, one literal per server.
std::vector<Root> topology(const std::string& name) {
  if (name == "a100-reference") return a100Server(true);
  if (name == "a100-roce") return a100Server(false);
  if (name == "e810-ethernet") {
    // 256 VFs each; PF1's VFs start after PF0's (routing ids 0x3b08.. and 0x3c08..).
    Nic f0{"0000:3b:00.0", "ens1f0", "8086", "1593", "1889", "ice", 256, false, 1500, 25000, 8};
    Nic f1{"0000:3b:00.1", "ens1f1", "8086", "1593", "1889", "ice", 256, false, 1500, 25000, 263};
    f0.alt_names = {"enp59s0f0np0"};  // the path name systemd gives it beside the slot name
    f1.alt_names = {"enp59s0f1np1"};
    return {{"pci0000:3a", 0, "0000:3a:00.0", {}, {}, {f0, f1}}};
  }
  if (name == "igb-qemu") {
    // What the real-kernel test's guest shows (tests/kernel): QEMU's emulated Intel 82576 behind
    // a root port of q35's root complex, 7 VFs at offset 128, stride 2.
    Nic igb{"0000:01:00.0", "eth0", "8086", "10c9", "10ca", "igb", 7, false, 1500, 1000, 128};
    igb.sriov_stride = 2;
    igb.up = false;  // the guest's init brings up lo alone
    // q35's root complex has no NUMA affinity (numa_node -1); pxb-pcie roots have one.
    return {{"pci0000:00", -1, "0000:00:01.0", {}, {}, {igb}}};
  }
  if (name == "many-pfs") {
    // Eight dual-port E810 NICs, one per root complex: 16 PFs with 256 VFs each.
    std::vector<Root> roots;
    for (int i = 0; i < 8; ++i) {
      uint32_t bus = 0x10 + 3 * static_cast<uint32_t>(i) + (i >= 4 ? 0x60 : 0);
      char root_name[16], rp[16], f0[16], f1[16];
      std::snprintf(root_name, sizeof root_name, "pci0000:%02x", bus - 1);
      std::snprintf(rp, sizeof rp, "0000:%02x:00.0", bus - 1);
      std::snprintf(f0, sizeof f0, "0000:%02x:00.0", bus);
      std::snprintf(f1, sizeof f1, "0000:%02x:00.1", bus);
      Nic p0{f0,     "ens" + std::to_string(i + 1) + "f0",
             "8086", "1593",
             "1889", "ice",
             256,    false,
             1500,   100000,
             8};
      Nic p1{f1,     "ens" + std::to_string(i + 1) + "f1",
             "8086", "1593",
             "1889", "ice",
             256,    false,
             1500,   100000,
             263};
      roots.push_back({root_name, i < 4 ? 0 : 1, rp, {}, {}, {p0, p1}});
    }
    return roots;
  }
  if (name == "shared-root") {
    return {{"pci0000:00",
             0,
             "0000:00:01.0",
             {{"0000:01:00.0", {{"0000:03:00.0"}}, {cx6("0000:04:00.0", "ibp4s0")}},
              {"0000:81:00.0", {{"0000:83:00.0"}}, {cx6("0000:84:00.0", "ibp132s0")}}},
             {"0000:00:02.0"},
             {}}};
  }
  return {};
}

}  // namespace

std::vector<std::string> fixtureTopologies() {
  return {"a100-reference", "a100-roce", "e810-ethernet", "shared-root", "many-pfs", "igb-qemu"};
}

Status writeFixture(const std::string& name, const std::string& root) {
  auto roots = topology(name);
  if (roots.empty()) {
    return Status(Code::kInvalidArgument,
                  "unknown topology \"" + name + "\"; known: " + join(fixtureTopologies(), ", "));
  }
  std::error_code ec;
  if (std::filesystem::exists(root + "/sys", ec)) {
    return Status(Code::kInvalidArgument,
                  root + " already holds a sys/ tree; use an empty directory");
  }
  return Builder(root).build(roots);
}

}  // namespace sriovdra::host
