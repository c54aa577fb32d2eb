#include "host/discovery.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <map>
#include <set>

#include "host/pci.h"

namespace sriovdra::host {
namespace {

std::string hexId(std::string v) {
  if (v.rfind("0x", 0) == 0) v = v.substr(2);
  return v;
}

int64_t toInt(const std::string& v, int64_t fallback) {
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  return ec == std::errc() && ptr == v.data() + v.size() ? n : fallback;
}

std::string firstEntry(const Sysfs& fs, const std::string& dir) {
  auto entries = fs.list(dir);
  return entries.ok() && !entries->empty() ? entries->front() : "";
}

std::string linkBase(const Sysfs& fs, const std::string& path) {
  auto target = fs.readLink(path);
  return target.ok() ? baseName(*target) : "";
}

// The netdevs of the rtnetlink dump by the PCI device they sit on (the first by name, as a
// listing of the device's net/ directory would give), as a sorted vector of PCI addresses in
// numbers: 4,096 VFs look theirs up, and a hash map of strings took a quarter of discovery's own
// time. Empty when the kernel named the parent of no netdev: then each device's net/ directory
// is listed instead.
struct Netdevs {
  std::vector<LinkInfo> links;
  std::vector<std::pair<uint64_t, LinkInfo*>> by_device;
  std::vector<std::pair<uint64_t, LinkInfo*>>::iterator next;  // after the last entry found

  Netdevs(const Netdevs&) = delete;  // by_device points into `links`
  Netdevs& operator=(const Netdevs&) = delete;
  explicit Netdevs(std::vector<LinkInfo> all) : links(std::move(all)) {
    by_device.reserve(links.size());
    for (auto& l : links) {
      if (l.parent_bus != "pci") continue;
      auto address = PciAddress::parse(l.parent_device);
      if (address) by_device.emplace_back(address->key(), &l);
    }
    std::sort(by_device.begin(), by_device.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second->name < b.second->name;
    });
    by_device.erase(std::unique(by_device.begin(), by_device.end(),
                                [](const auto& a, const auto& b) { return a.first == b.first; }),
                    by_device.end());
    next = by_device.begin();
  }
  // The netdev of a device: from the dump when it names parents, else from sysfs (nullptr and
  // `name` set from the device's net/ directory). Each device has its own entry, so the caller
  // may move what it keeps out of it.
  LinkInfo* of(const Sysfs& fs, const std::string& bdf, const std::string& dev_dir,
               std::string& name) {
    if (!by_device.empty()) {
      auto address = PciAddress::parse(bdf);
      if (!address) return nullptr;
      uint64_t key = address->key();
      // A PF's VFs are looked up in address order: the entry after the last one found first.
      auto it =
          next < by_device.end() && next->first == key
              ? next
              : std::lower_bound(by_device.begin(), by_device.end(), key,
                                 [](const auto& entry, uint64_t k) { return entry.first < k; });
      if (it == by_device.end() || it->first != key) return nullptr;
      next = it + 1;
      name = it->second->name;
      return it->second;
    }
    name = firstEntry(fs, dev_dir + "/net");
    return nullptr;
  }
  // Only PFs whose netdev the dump did not place are looked up by name: a scan, not a map.
  const LinkInfo* named(std::string_view name) const {
    auto it =
        std::find_if(links.begin(), links.end(), [&](const auto& l) { return l.name == name; });
    return it == links.end() ? nullptr : &*it;
  }
};

// Whether a VF bound to `driver` has a netdev of its own below its PCI device: not without a
// driver, nor on a driver that hands it to user space (vfio-pci and its variants, UIO, pci-stub)
// or one whose netdev sits elsewhere (virtio-pci's is below its virtio device).
bool makesNetdev(std::string_view driver) {
  return !driver.empty() && !isUserspaceDriver(driver) &&
         driver.find("vfio") == std::string_view::npos && driver != "pci-stub" &&
         driver != "virtio-pci";
}

// What the PF already tells is not read again: the kernel gives every VF its PF's vendor and
// the VF device id of the PF's SR-IOV capability (pci_iov_add_virtfn), so only the VF's own
// binding, netdev, RDMA device and IOMMU group are read (the RDMA device only when the PF has
// one; the netdev from the rtnetlink dump when the kernel names parents). `path` is the caller's
// buffer for the VF's file paths.
api::VirtualFunction readVf(const Sysfs& fs, const api::InterfaceExt& pf, const std::string& vf_dir,
                            int64_t index, Netdevs& netdevs, std::string& path) {
  api::VirtualFunction vf;
  vf.pci_address = baseName(vf_dir);
  vf.vf_id = index;
  vf.vendor = pf.vendor;
  path = vf_dir;
  auto file = [&, base = vf_dir.size()](std::string_view leaf) -> const std::string& {
    path.resize(base);
    return path.append(leaf);
  };
  vf.device_id =
      pf.vf_device_id.empty() ? hexId(fs.read(file("/device")).valueOr("")) : pf.vf_device_id;
  vf.driver = linkBase(fs, file("/driver"));
  if (LinkInfo* link = netdevs.of(fs, vf.pci_address, vf_dir, vf.name)) {
    vf.mac = std::move(link->mac);
    vf.mtu = link->mtu;
  } else if (!vf.name.empty()) {
    std::string net = vf_dir + "/net/" + vf.name;
    vf.mac = fs.read(net + "/address").valueOr("");
    vf.mtu = toInt(fs.read(net + "/mtu").valueOr("0"), 0);
  }
  // Its netdev is in a pod's namespace: its network driver made one, as it did the PF's.
  if (vf.name.empty() && !pf.name.empty() && makesNetdev(vf.driver)) {
    vf.assigned = api::kAssignedNetns;
  }
  // The PF's driver makes its VFs' RDMA devices: without one on the PF, a VF has none either.
  if (!pf.rdma_device.empty()) vf.rdma_device = firstEntry(fs, file("/infiniband"));
  vf.iommu_group = linkBase(fs, file("/iommu_group"));
  return vf;
}

// The virtfn<N> entries of a PF's directory listing, by VF index N.
std::vector<std::pair<int64_t, std::string_view>> virtfns(const std::vector<std::string>& entries) {
  std::vector<std::pair<int64_t, std::string_view>> out;
  for (const auto& e : entries) {
    if (e.rfind("virtfn", 0) != 0) continue;
    if (int64_t index = toInt(e.substr(6), -1); index >= 0) out.emplace_back(index, e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The directory of the VF behind the PF's `virtfn` link, into `dir` (the caller's buffer, kept
// from VF to VF); false when the link cannot be read. The kernel's link points at a sibling of
// the PF ("../0000:3b:02.0"), so the VF's directory follows from the link's text without
// resolving the whole path.
bool vfDir(const Sysfs& fs, const std::string& pf_dir, std::string_view virtfn, std::string& dir) {
  dir.assign(pf_dir).append("/").append(virtfn);
  auto target = fs.readLink(dir);
  if (!target.ok()) return false;
  std::string_view sibling(*target);
  if (sibling.rfind("../", 0) == 0 && sibling.find('/', 3) == std::string_view::npos &&
      sibling.size() > 3) {
    dir.assign(pf_dir, 0, pf_dir.rfind('/') + 1).append(sibling.substr(3));
    return true;
  }
  auto resolved = fs.resolve(dir);  // not the kernel's sibling link
  if (!resolved.ok()) return false;
  dir = std::move(*resolved);
  return true;
}

}  // namespace

Result<VfAccess> readVfAccess(const Sysfs& fs, const std::string& bdf) {
  std::string dir = "sys/bus/pci/devices/" + bdf;
  if (!isPciAddress(bdf) || !fs.exists(dir)) {
    return Status(Code::kNotFound, "no PCI device " + bdf + " on this node");
  }
  VfAccess a;
  a.driver = linkBase(fs, dir + "/driver");
  a.iommu_group = linkBase(fs, dir + "/iommu_group");
  if (!a.iommu_group.empty()) {
    a.noiommu =
        fs.read("sys/kernel/iommu_groups/" + a.iommu_group + "/name").valueOr("") == "vfio-noiommu";
  }
  a.netdev = firstEntry(fs, dir + "/net");
  a.rdma_device = firstEntry(fs, dir + "/infiniband");
  a.uverbs = firstEntry(fs, dir + "/infiniband_verbs");
  if (auto mad = fs.list(dir + "/infiniband_mad"); mad.ok()) {
    for (const auto& e : *mad) {
      if (e.rfind("umad", 0) == 0) a.umad = e;
      if (e.rfind("issm", 0) == 0) a.issm = e;
    }
  }
  return a;
}

Result<PciPlacement> placement(const Sysfs& fs, const std::string& bdf) {
  auto path = fs.resolve("sys/bus/pci/devices/" + bdf);
  if (!path.ok()) return path.status();
  const std::string prefix = "sys/devices/";
  if (path->compare(0, prefix.size(), prefix) != 0) {
    return Status(Code::kInternal, bdf + " is not below sys/devices: " + *path);
  }
  PciPlacement p;
  p.dir = *path;
  std::string rest = path->substr(prefix.size());
  size_t start = 0;
  std::vector<std::string> parts;
  while (start < rest.size()) {
    size_t slash = rest.find('/', start);
    if (slash == std::string::npos) slash = rest.size();
    parts.push_back(rest.substr(start, slash - start));
    start = slash + 1;
  }
  if (parts.empty()) return Status(Code::kInternal, "empty device path for " + bdf);
  p.root = parts.front();
  for (size_t i = 1; i + 1 < parts.size(); ++i) {
    if (isPciAddress(parts[i])) p.bridges.push_back(parts[i]);
  }
  // Root port, switch upstream port, switch downstream port: a device below at least three
  // bridges sits in a switch whose upstream port is the second one.
  if (p.bridges.size() >= 3) p.pcie_switch = p.bridges[1];
  return p;
}

// The port GUIDs of an InfiniBand PF's VFs, as its driver reports them (one netlink request).
void readGuids(const Netlink& nl, api::InterfaceExt& pf, Topology& t) {
  auto guids = nl.vfGuids(pf.name);
  if (!guids.ok()) {
    t.warnings.push_back("reading the VF GUIDs of " + pf.name + ": " + guids.status().message());
    return;
  }
  for (const auto& g : *guids) {
    for (auto& vf : pf.vfs) {
      if (vf.vf_id == g.vf) vf.guid = guidText(g.port_guid);
    }
  }
}

// Long on purpose: one walk over sys/bus/pci/devices that sorts each device into PFs, VFs, GPUs
// and the PCIe tree as it goes. A VF has a higher routing id than its PF (its First VF Offset
// is positive), so in the sorted listing a PF comes before its VFs: the VFs it lists are skipped
// without reading anything; a VF listed earlier is recognised by its physfn link.
std::map<std::string, std::string> readVfAdminMacs(const Netlink& nl,
                                                   const api::SriovNodeStateSpec& spec,
                                                   const Topology& discovered,
                                                   std::vector<std::string>& warnings) {
  std::map<std::string, std::string> out;
  for (const auto& itf : spec.interfaces) {
    bool netdevice = std::any_of(itf.vf_groups.begin(), itf.vf_groups.end(),
                                 [](const api::VfGroup& g) { return g.device_type != "vfio-pci"; });
    if (!netdevice) continue;
    for (const auto& pf : discovered.pfs) {
      if (pf.pci_address != itf.pci_address || pf.name.empty() || pf.link_type == "IB" ||
          pf.vfs.empty()) {
        continue;
      }
      auto vfs = nl.vfs(pf.name);
      if (!vfs.ok()) {
        warnings.push_back("reading the VFs of " + pf.name + ": " + vfs.status().message());
        continue;
      }
      std::map<int64_t, const std::string*> address_of;
      for (const auto& vf : pf.vfs) address_of[vf.vf_id] = &vf.pci_address;
      for (const auto& info : *vfs) {
        if (auto it = address_of.find(info.vf); it != address_of.end()) out[*it->second] = info.mac;
      }
    }
  }
  return out;
}

// Long on purpose: one walk over sysfs and one netlink dump (the PCI devices, their roots and
// switches, then each PF with its VFs), sharing the maps the walk builds.
// NOLINTNEXTLINE(readability-function-size)
Result<Topology> discover(const Sysfs& fs, const Netlink& nl) {
  auto bdfs = fs.list("sys/bus/pci/devices");
  if (!bdfs.ok()) {
    return Status(Code::kNotFound, "cannot list sys/bus/pci/devices under \"" + fs.root() + "\": " +
                                       bdfs.status().message() + " (is --sysfs-root right?)");
  }
  Topology t;
  for (auto& d : fs.list("sys/bus/pci/drivers").valueOr({})) t.pci_drivers.insert(std::move(d));
  struct RootInfo {
    int64_t numa = -1;
    std::map<std::string, std::vector<std::string>> switches;
    std::vector<std::string> direct;
  };
  std::map<std::string, RootInfo> roots;
  std::vector<bool> listed_vf(bdfs->size());  // by index in `bdfs`
  auto links = nl.links();
  if (!links.ok()) {
    t.warnings.push_back("listing the network interfaces over rtnetlink: " +
                         links.status().message() + "; their attributes are read from sysfs");
  }
  Netdevs netdevs(links.ok() ? std::move(*links) : std::vector<LinkInfo>{});
  std::string vf_dir;   // buffers for each VF's paths, kept from VF to VF: 4,096 VFs make the
  std::string vf_path;  // loop below hot
  for (size_t i = 0; i < bdfs->size(); ++i) {
    const std::string& bdf = (*bdfs)[i];
    if (listed_vf[i]) continue;
    std::string dir = "sys/bus/pci/devices/" + bdf;
    auto cls = fs.read(dir + "/class");
    auto vendor = fs.read(dir + "/vendor");
    if (!cls.ok() || !vendor.ok()) {
      t.warnings.push_back("skipped " + bdf + ": cannot read class/vendor");
      continue;
    }
    bool network = cls->rfind("0x02", 0) == 0;
    bool gpu =
        *vendor == "0x10de" && (cls->rfind("0x0300", 0) == 0 || cls->rfind("0x0302", 0) == 0);
    bool is_vf = fs.exists(dir + "/physfn");
    bool sriov = fs.exists(dir + "/sriov_totalvfs");
    if (!(gpu || (network && sriov && !is_vf))) continue;
    auto where = placement(fs, bdf);
    if (!where.ok()) {
      t.warnings.push_back("skipped " + bdf + ": " + where.status().message());
      continue;
    }
    int64_t numa = toInt(fs.read(dir + "/numa_node").valueOr("-1"), -1);
    RootInfo& root = roots[where->root];
    if (root.numa < 0) root.numa = numa;
    if (where->pcie_switch.empty()) {
      root.direct.push_back(bdf);
    } else {
      root.switches[where->pcie_switch].push_back(bdf);
    }
    std::string driver = linkBase(fs, dir + "/driver");
    if (gpu) {
      t.gpus.push_back({bdf, hexId(*vendor), hexId(fs.read(dir + "/device").valueOr("")), driver,
                        where->root, numa, where->pcie_switch});
      continue;
    }
    api::InterfaceExt pf;
    pf.pci_address = bdf;
    pf.vendor = hexId(*vendor);
    pf.device_id = hexId(fs.read(dir + "/device").valueOr(""));
    pf.driver = driver;
    pf.total_vfs = toInt(fs.read(dir + "/sriov_totalvfs").valueOr("0"), 0);
    pf.num_vfs = toInt(fs.read(dir + "/sriov_numvfs").valueOr("0"), 0);
    pf.vf_device_id = hexId(fs.read(dir + "/sriov_vf_device").valueOr(""));
    pf.pcie_root = where->root;
    pf.pcie_switch = where->pcie_switch;
    pf.numa_node = numa;
    const LinkInfo* link = netdevs.of(fs, bdf, dir, pf.name);
    // Drivers without an eSwitch (and kernels without devlink) are in legacy mode, as upstream
    // reports them; any other failure to ask is a warning.
    pf.eswitch_mode = "legacy";
    if (auto mode = nl.eswitchMode(bdf); mode.ok()) {
      pf.eswitch_mode = *mode;
    } else if (int e = mode.status().sysErrno(); e != EOPNOTSUPP && e != ENOENT && e != ENODEV) {
      t.warnings.push_back("PF " + bdf + ": " + mode.status().message());
    }
    if (!pf.name.empty()) {
      std::string net = dir + "/net/" + pf.name;
      if (link == nullptr) link = netdevs.named(pf.name);
      int64_t type = 0;
      int64_t flags = 0;
      if (link != nullptr) {
        type = link->type;
        flags = link->flags;
        pf.mtu = link->mtu;
        pf.mac = link->mac;
        pf.alt_names = link->alt_names;
      } else {
        type = toInt(fs.read(net + "/type").valueOr(""), 0);
        std::string f = fs.read(net + "/flags").valueOr("0x0");
        std::from_chars(f.data() + (f.rfind("0x", 0) == 0 ? 2 : 0), f.data() + f.size(), flags, 16);
        pf.mtu = toInt(fs.read(net + "/mtu").valueOr("0"), 0);
        pf.mac = fs.read(net + "/address").valueOr("");
      }
      pf.link_type = type == 32 ? "IB" : type == 1 ? "ETH" : "";
      pf.link_admin_state = (flags & 0x1) != 0 ? "up" : "down";
      int64_t speed = toInt(fs.read(net + "/speed").valueOr("-1"), -1);  // ethtool's, not netlink's
      if (speed > 0) pf.link_speed = std::to_string(speed) + " Mb/s";
    }
    pf.rdma_device = firstEntry(fs, dir + "/infiniband");
    auto listing = fs.list(where->dir);
    std::vector<std::pair<int64_t, std::string_view>> vfs;  // views into `listing`
    if (listing.ok()) vfs = virtfns(*listing);
    pf.vfs.reserve(vfs.size());
    // The listing is sorted (Sysfs::list) and VF n sits at the PF's routing id + First VF Offset
    // + n x VF Stride: the VFs follow the PF in the listing in the order of their indexes, most
    // often each right after the one before.
    auto next = bdfs->begin() + static_cast<std::ptrdiff_t>(i) + 1;
    for (auto [index, virtfn] : vfs) {
      if (!vfDir(fs, where->dir, virtfn, vf_dir)) continue;
      pf.vfs.push_back(readVf(fs, pf, vf_dir, index, netdevs, vf_path));
      const std::string& address = pf.vfs.back().pci_address;
      auto at = next != bdfs->end() && *next == address
                    ? next
                    : std::lower_bound(next, bdfs->end(), address);
      if (at == bdfs->end() || *at != address) continue;
      listed_vf[static_cast<size_t>(at - bdfs->begin())] = true;
      next = at + 1;
    }
    if (pf.link_type == "IB" && !pf.vfs.empty() && !pf.name.empty()) readGuids(nl, pf, t);
    if (pf.vf_device_id.empty() && !pf.vfs.empty()) pf.vf_device_id = pf.vfs[0].device_id;
    t.pfs.push_back(std::move(pf));
  }
  for (auto& [name, info] : roots) {
    api::PcieRoot r{name, info.numa, {}, info.direct};
    for (auto& [usp, devices] : info.switches) r.switches.push_back({usp, devices});
    t.roots.push_back(std::move(r));
  }
  return t;
}

api::Alignment computeAlignment(const Topology& t, const std::vector<api::Device>& advertised) {
  api::Alignment out;
  for (const auto& r : t.roots) {
    size_t attachment_points = r.switches.size() + (r.devices.empty() ? 0 : 1);
    if (attachment_points > 1) out.root_implies_switch = false;
  }
  std::map<std::string, const api::InterfaceExt*> pf_of_vf;
  for (const auto& pf : t.pfs) {
    for (const auto& vf : pf.vfs) pf_of_vf[vf.pci_address] = &pf;
  }
  for (const auto& gpu : t.gpus) {
    api::GpuAlignment g{gpu.pci_address, gpu.pcie_root, {}, {}};
    for (const auto& d : advertised) {
      auto it = pf_of_vf.find(d.pci_address);
      if (it == pf_of_vf.end()) continue;
      const api::InterfaceExt& pf = *it->second;
      if (pf.pcie_root == gpu.pcie_root) g.same_root_vfs.push_back(d.name);
      if (!gpu.pcie_switch.empty() && pf.pcie_switch == gpu.pcie_switch) {
        g.same_switch_vfs.push_back(d.name);
      }
    }
    out.gpus.push_back(std::move(g));
  }
  return out;
}

}  // namespace sriovdra::host
