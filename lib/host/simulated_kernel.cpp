// Over 600 lines, kept whole: the behaviour simulated_kernel.h specifies. Its sysfs writes and
// netlink requests change one simulated device state under one lock and one journal; each
// rule stays beside the state it changes.
#include "host/simulated_kernel.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "api/names.h"
#include "base/strings.h"
#include "host/fixtures.h"
#include "host/pci.h"

namespace sriovdra::host {
namespace {

// The boot id after `id`: its last group of 12 hex digits counts the boots.
std::string nextBootId(const std::string& id) {
  uint64_t boots = 0;
  if (id.size() >= 12)
    std::from_chars(id.data() + id.size() - 12, id.data() + id.size(), boots, 16);
  char digits[16];
  auto end = std::to_chars(digits, digits + sizeof(digits), boots + 1, 16).ptr;
  std::string last(digits, end);
  // The first 24 characters ("00000000-0000-4000-8000-") stay.
  return std::string(kFirstBootId, 24) + std::string(12 - std::min<size_t>(12, last.size()), '0') +
         last;
}

std::string parentOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::optional<int64_t> toInt(std::string_view v) {
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) return std::nullopt;
  return n;
}

std::string trim(std::string_view v) {
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  return std::string(v);
}

Status err(int e, const std::string& what) { return Status::fromErrno(e, what); }

std::string formatSettings(const MlxSettings& s) {
  std::string out = "SRIOV_EN=" + std::string(s.sriov_en ? "True" : "False") +
                    "\nNUM_OF_VFS=" + std::to_string(s.num_of_vfs);
  if (!s.link_type_p1.empty()) out += "\nLINK_TYPE_P1=" + s.link_type_p1;
  if (!s.link_type_p2.empty()) out += "\nLINK_TYPE_P2=" + s.link_type_p2;
  return out;
}

// Applies KEY=VALUE (one setting) to `s`, or says why mstconfig would refuse it.
Status applySetting(MlxSettings& s, const std::string& key, const std::string& value,
                    bool dual_port) {
  auto bad = [&] { return Status(Code::kInternal, "-E- bad value " + key + "=" + value); };
  if (key == "SRIOV_EN") {
    if (value != "True" && value != "False") return bad();
    s.sriov_en = value == "True";
  } else if (key == "NUM_OF_VFS") {
    auto n = toInt(value);
    if (!n || *n < 0 || *n > api::kMellanoxMaxVfs) return bad();
    s.num_of_vfs = *n;
  } else if (key == "LINK_TYPE_P1" || (key == "LINK_TYPE_P2" && dual_port)) {
    if (value != "ETH" && value != "IB") return bad();
    (key == "LINK_TYPE_P1" ? s.link_type_p1 : s.link_type_p2) = value;
  } else {
    return Status(Code::kInternal, "-E- the device has no parameter " + key);
  }
  return Status::ok();
}

bool isNetworkDriver(const std::string& d) {
  return d == "mlx5_core" || d == "ice" || d == "iavf" || d == "i40e" || d == "ixgbevf" ||
         d == "igb" || d == "igbvf";
}

}  // namespace

SimulatedKernel::SimulatedKernel(std::string root) : fs_(root), tree_(std::move(root)) {}

Result<std::string> SimulatedKernel::deviceDir(const std::string& bdf) const {
  auto dir = fs_.resolve("sys/bus/pci/devices/" + bdf);
  if (!dir.ok()) return err(ENODEV, "no PCI device " + bdf);
  return dir;
}

int SimulatedKernel::nextFree(const std::string& dir, const std::string& prefix) const {
  auto entries = fs_.list(dir);
  int n = 0;
  if (!entries.ok()) return n;
  for (const auto& e : *entries) {
    if (e.rfind(prefix, 0) != 0) continue;
    if (auto v = toInt(e.substr(prefix.size())); v && *v >= n) n = static_cast<int>(*v) + 1;
  }
  return n;
}

std::string SimulatedKernel::defaultDriver(const std::string& dev_dir) const {
  std::string vendor = fs_.read(dev_dir + "/vendor").valueOr("");
  std::string device = fs_.read(dev_dir + "/device").valueOr("");
  if (vendor == "0x15b3") return "mlx5_core";
  if (vendor == "0x8086" && device == "0x1889") return "iavf";
  if (vendor == "0x8086" && device == "0x1593") return "ice";
  if (vendor == "0x8086" && device == "0x10c9") return "igb";
  if (vendor == "0x8086" && device == "0x10ca") return "igbvf";
  if (vendor == "0x10de") return "nvidia";
  return "";
}

Status SimulatedKernel::write(std::string_view path_view, std::string_view value) {
  std::lock_guard lock(mu_);
  Status st = writeLocked(std::string(path_view), value);
  journal(std::string(path_view) + " " + trim(value), st);
  return st;
}

void SimulatedKernel::journal(const std::string& what, const Status& result) {
  std::string line = what + " -> " + (result.isOk() ? std::string("ok") : result.message()) + "\n";
  if (FILE* f = std::fopen((fs_.root() + "/simulated-kernel.log").c_str(), "a")) {
    std::fputs(line.c_str(), f);
    std::fclose(f);
  }
}

Result<std::vector<LinkInfo>> SimulatedKernel::links() const {
  std::lock_guard lock(mu_);
  std::vector<LinkInfo> out;
  auto names = fs_.list("sys/class/net");
  if (!names.ok()) return out;
  for (const auto& name : *names) {
    std::string dir = "sys/class/net/" + name;
    LinkInfo link;
    link.index = static_cast<int32_t>(out.size()) + 1;
    link.name = name;
    link.mac = fs_.read(dir + "/address").valueOr("");
    link.mtu = toInt(fs_.read(dir + "/mtu").valueOr("0")).value_or(0);
    std::string flags = fs_.read(dir + "/flags").valueOr("0x0");
    link.flags = static_cast<uint32_t>(std::strtoul(flags.c_str(), nullptr, 16));
    link.type = static_cast<uint16_t>(toInt(fs_.read(dir + "/type").valueOr("0")).value_or(0));
    // The class link points into the device: ".../devices/.../0000:3b:02.0/net/<name>".
    std::string target = fs_.readLink(dir).valueOr("");
    auto net = target.rfind("/net/");
    if (net != std::string::npos) {
      std::string parent = baseName(target.substr(0, net));
      if (PciAddress::parse(parent).has_value()) {
        link.parent_bus = "pci";
        link.parent_device = parent;
      }
    }
    if (auto text = fs_.read("simulated/netlink/altnames/" + name); text.ok()) {
      for (size_t at = 0; at < text->size();) {
        size_t end = std::min(text->find('\n', at), text->size());
        if (end > at) link.alt_names.push_back(text->substr(at, end - at));
        at = end + 1;
      }
    }
    out.push_back(std::move(link));
  }
  return out;
}

Result<std::string> SimulatedKernel::eswitchFile(const std::string& bdf) const {
  if (!PciAddress::parse(bdf)) return err(ENODEV, "no PCI device " + bdf);
  auto dir = deviceDir(bdf);
  if (!dir.ok()) return dir.status();
  std::string driver = baseName(fs_.readLink(*dir + "/driver").valueOr(""));
  bool ethernet = false;
  if (auto nets = fs_.list(*dir + "/net"); nets.ok() && !nets->empty()) {
    ethernet = fs_.read(*dir + "/net/" + nets->front() + "/type").valueOr("") == "1";
  }
  bool vf = fs_.exists(*dir + "/physfn");
  if (!vf && driver != "mlx5_core" && driver != "ice") {
    return err(ENODEV, "no devlink instance pci/" + bdf + " (its driver has no devlink)");
  }
  if (vf || !ethernet) return err(EOPNOTSUPP, "pci/" + bdf + " has no eSwitch");
  return "simulated/devlink/" + bdf + "/eswitch_mode";
}

Result<std::string> SimulatedKernel::eswitchMode(std::string_view pci_address) const {
  std::lock_guard lock(mu_);
  auto file = eswitchFile(std::string(pci_address));
  if (!file.ok()) return file.status();
  return fs_.read(*file).valueOr("legacy");
}

Status SimulatedKernel::setEswitchMode(std::string_view pci_address, std::string_view mode) {
  std::lock_guard lock(mu_);
  std::string bdf(pci_address);
  Status st = [&]() -> Status {
    auto file = eswitchFile(bdf);
    if (!file.ok()) return file.status();
    if (mode != "legacy" && mode != "switchdev") {
      return err(EINVAL, "eSwitch mode \"" + std::string(mode) + "\"");
    }
    if (fs_.read(*file).valueOr("legacy") == mode) return Status::ok();
    auto dir = deviceDir(bdf);
    if (toInt(fs_.read(*dir + "/sriov_numvfs").valueOr("0")).value_or(0) > 0) {
      return err(EBUSY, "changing the eSwitch mode of pci/" + bdf + " while it has VFs");
    }
    return tree_.file(*file, std::string(mode));
  }();
  journal("devlink pci/" + bdf + " eswitch mode " + std::string(mode), st);
  return st;
}

Result<std::string> SimulatedKernel::guidDir(std::string_view pf, std::string* pf_dir) const {
  std::string name(pf);
  auto dir = vfPfDir(pf);
  if (!dir.ok()) return dir.status();
  *pf_dir = *dir;
  std::string driver = baseName(fs_.readLink(*pf_dir + "/driver").valueOr(""));
  bool ib = fs_.read("sys/class/net/" + name + "/type").valueOr("") == "32";
  if (driver != "mlx5_core" || !ib || fs_.exists(*pf_dir + "/physfn")) {
    return err(EOPNOTSUPP, name + " has no VF GUIDs (only an mlx5 InfiniBand PF has them)");
  }
  return "simulated/netlink/vf-guids/" + baseName(*pf_dir);
}

VfGuids SimulatedKernel::guidsOf(const std::string& state_dir, int32_t vf) const {
  VfGuids g{vf, 0, 0};
  auto text = fs_.read(state_dir + "/" + std::to_string(vf));
  if (!text.ok()) return g;
  auto space = text->find(' ');
  if (space == std::string::npos) return g;
  g.node_guid = parseGuid(text->substr(0, space)).valueOr(0);
  g.port_guid = parseGuid(trim(text->substr(space + 1))).valueOr(0);
  return g;
}

Result<std::string> SimulatedKernel::vfPfDir(std::string_view pf) const {
  std::string name(pf);
  auto net = fs_.resolve("sys/class/net/" + name);
  if (name.empty() || name.find('/') != std::string::npos || !net.ok()) {
    return err(ENODEV, "no network interface " + name);
  }
  return parentOf(parentOf(*net));
}

VfInfo SimulatedKernel::vfInfoOf(const std::string& pf_dir, int32_t vf) const {
  VfInfo info;
  info.vf = vf;
  // As the drivers start a VF: spoof checking on, except mlx5's; nothing else set.
  info.spoofchk = baseName(fs_.readLink(pf_dir + "/driver").valueOr("")) != "mlx5_core";
  auto text =
      fs_.read("simulated/netlink/vf-config/" + baseName(pf_dir) + "/" + std::to_string(vf));
  if (!text.ok()) return info;
  for (const auto& [key, value] : keyValueLines(*text)) {
    auto number = [&value = value] { return toInt(value).value_or(0); };
    if (key == "mac") info.mac = value;
    if (key == "vlan") info.vlan = static_cast<int32_t>(number());
    if (key == "qos") info.qos = static_cast<int32_t>(number());
    if (key == "proto") info.vlan_proto = static_cast<uint16_t>(number());
    if (key == "min_tx_rate") info.min_tx_rate = static_cast<uint32_t>(number());
    if (key == "max_tx_rate") info.max_tx_rate = static_cast<uint32_t>(number());
    if (key == "spoofchk") info.spoofchk = value == "on";
    if (key == "trust") info.trust = value == "on";
    if (key == "link_state") info.link_state = static_cast<uint32_t>(number());
  }
  return info;
}

Result<std::pair<std::string, int32_t>> SimulatedKernel::vfsOf(std::string_view pf) const {
  auto pf_dir = vfPfDir(pf);
  if (!pf_dir.ok()) return pf_dir.status();
  if (fs_.exists(*pf_dir + "/physfn")) return std::pair{*pf_dir, 0};  // a VF lists no VFs
  return std::pair{
      *pf_dir,
      static_cast<int32_t>(toInt(fs_.read(*pf_dir + "/sriov_numvfs").valueOr("0")).value_or(0))};
}

Result<std::vector<VfInfo>> SimulatedKernel::vfs(std::string_view pf) const {
  std::lock_guard lock(mu_);
  auto of = vfsOf(pf);
  if (!of.ok()) return of.status();
  const auto& [pf_dir, count] = *of;
  std::vector<VfInfo> out;
  std::string guid_dir;
  auto guids = guidDir(pf, &guid_dir);
  out.reserve(static_cast<size_t>(count));
  for (int32_t vf = 0; vf < count; ++vf) {
    VfInfo info = vfInfoOf(pf_dir, vf);
    if (guids.ok()) {
      auto g = guidsOf(*guids, vf);
      info.node_guid = g.node_guid;
      info.port_guid = g.port_guid;
      info.has_guids = true;
    }
    out.push_back(std::move(info));
  }
  return out;
}

Status SimulatedKernel::setUp(std::string_view netdev, bool up) {
  std::lock_guard lock(mu_);
  Status st = [&]() -> Status {
    std::string net = "sys/class/net/" + std::string(netdev);
    if (netdev.empty() || netdev.find('/') != std::string_view::npos || !fs_.exists(net)) {
      return err(ENODEV, "no network interface " + std::string(netdev));
    }
    auto flags = static_cast<uint32_t>(
        std::strtoul(fs_.read(net + "/flags").valueOr("0").c_str(), nullptr, 16));
    flags = up ? (flags | 1u) : (flags & ~1u);
    char text[16];
    std::snprintf(text, sizeof text, "0x%x", flags);
    SDRA_RETURN_IF_ERROR(tree_.file(fs_.resolve(net).valueOr(net) + "/flags", text));
    return tree_.file(fs_.resolve(net).valueOr(net) + "/operstate", up ? "up" : "down");
  }();
  journal("rtnetlink " + std::string(netdev) + (up ? " up" : " down"), st);
  return st;
}

// Long on purpose: the settings rtnetlink's IFLA_VF_* accepts, one branch each with the
// kernel's errno, in the order do_setvfinfo() takes them.
// NOLINTNEXTLINE(readability-function-size)
Status SimulatedKernel::setVf(std::string_view pf, const VfSetting& setting) {
  std::lock_guard lock(mu_);
  Status st = [&]() -> Status {
    auto pf_dir = vfPfDir(pf);
    if (!pf_dir.ok()) return pf_dir.status();
    int64_t count = toInt(fs_.read(*pf_dir + "/sriov_numvfs").valueOr("0")).value_or(0);
    if (setting.vf < 0 || setting.vf >= count || fs_.exists(*pf_dir + "/physfn")) {
      return err(EINVAL, std::string(pf) + " has no VF " + std::to_string(setting.vf));
    }
    std::string driver = baseName(fs_.readLink(*pf_dir + "/driver").valueOr(""));
    VfInfo info = vfInfoOf(*pf_dir, setting.vf);
    using Kind = VfSetting::Kind;
    // An IPoIB PF (mlx5's InfiniBand ports) sets its VFs' link state and GUIDs, nothing Ethernet.
    bool ib = fs_.read("sys/class/net/" + std::string(pf) + "/type").valueOr("") == "32";
    if (ib && setting.kind != Kind::kLinkState) {
      return err(EOPNOTSUPP, std::string(pf) + " is an InfiniBand port: its VFs take no " +
                                 setting.text().substr(setting.text().find(' ', 3) + 1));
    }
    switch (setting.kind) {
      case Kind::kMac: {
        auto mac = parseMac(setting.mac);
        // Multicast addresses are refused; the zero address clears the VF's MAC.
        if (!mac.ok() || (static_cast<unsigned char>((*mac)[0]) & 1) != 0) {
          return err(EINVAL, "invalid MAC " + setting.mac);
        }
        info.mac = macText(*mac);
        break;
      }
      case Kind::kVlan:
        // rtnetlink knows two protocols; igb only 802.1Q; every driver a 12-bit id, 3-bit priority.
        if (setting.vlan_proto != kVlanProto8021Q && setting.vlan_proto != kVlanProto8021AD) {
          return err(EPROTONOSUPPORT, "VLAN protocol " + vlanProtoText(setting.vlan_proto));
        }
        if (setting.vlan < 0 || setting.vlan > 4095 || setting.qos < 0 || setting.qos > 7) {
          return err(EINVAL, "VLAN " + std::to_string(setting.vlan) + " qos " +
                                 std::to_string(setting.qos));
        }
        if (driver == "igb" && setting.vlan_proto != kVlanProto8021Q) {
          return err(EPROTONOSUPPORT, "igb VFs take 802.1Q VLANs only");
        }
        info.vlan = setting.vlan;
        info.qos = setting.qos;
        info.vlan_proto = setting.vlan_proto;
        break;
      case Kind::kRate:
        if (driver == "igb" && setting.min_tx_rate != 0) {
          return err(EINVAL, "igb VFs have no minimum rate");
        }
        if (driver == "igb") {
          // igb limits a VF's rate against the PF's link: none while the PF is down.
          std::string net = "sys/class/net/" + std::string(pf);
          uint32_t flags = static_cast<uint32_t>(
              std::strtoul(fs_.read(net + "/flags").valueOr("0").c_str(), nullptr, 16));
          int64_t speed = toInt(fs_.read(net + "/speed").valueOr("0")).value_or(0);
          if ((flags & 1u) == 0 || static_cast<int64_t>(setting.max_tx_rate) > speed) {
            return err(EINVAL, "igb: no link on " + std::string(pf) + " for a rate of " +
                                   std::to_string(setting.max_tx_rate) + " Mbps");
          }
        }
        if (setting.max_tx_rate != 0 && setting.min_tx_rate > setting.max_tx_rate) {
          return err(EINVAL, "min_tx_rate above max_tx_rate");
        }
        info.min_tx_rate = setting.min_tx_rate;
        info.max_tx_rate = setting.max_tx_rate;
        break;
      case Kind::kSpoofchk:
        info.spoofchk = setting.on;
        break;
      case Kind::kTrust:
        info.trust = setting.on;
        break;
      case Kind::kLinkState:
        if (driver == "igb") return err(EOPNOTSUPP, "igb VFs have no link state");
        if (setting.link_state > 2)
          return err(EINVAL, "link state " + std::to_string(setting.link_state));
        info.link_state = setting.link_state;
        break;
    }
    return tree_.file(
        "simulated/netlink/vf-config/" + baseName(*pf_dir) + "/" + std::to_string(setting.vf),
        "mac=" + info.mac + "\nvlan=" + std::to_string(info.vlan) +
            "\nqos=" + std::to_string(info.qos) + "\nproto=" + std::to_string(info.vlan_proto) +
            "\nmin_tx_rate=" + std::to_string(info.min_tx_rate) + "\nmax_tx_rate=" +
            std::to_string(info.max_tx_rate) + "\nspoofchk=" + (info.spoofchk ? "on" : "off") +
            "\ntrust=" + (info.trust ? "on" : "off") +
            "\nlink_state=" + std::to_string(info.link_state));
  }();
  journal("rtnetlink " + std::string(pf) + " " + setting.text(), st);
  return st;
}

Status SimulatedKernel::setVfGuids(std::string_view pf, int32_t vf, uint64_t node_guid,
                                   uint64_t port_guid) {
  std::lock_guard lock(mu_);
  Status st = [&]() -> Status {
    std::string pf_dir;
    auto dir = guidDir(pf, &pf_dir);
    if (!dir.ok()) return dir.status();
    int64_t vfs = toInt(fs_.read(pf_dir + "/sriov_numvfs").valueOr("0")).value_or(0);
    if (vf < 0 || vf >= vfs) {
      return err(EINVAL, std::string(pf) + " has no VF " + std::to_string(vf));
    }
    return tree_.file(*dir + "/" + std::to_string(vf),
                      guidText(node_guid) + " " + guidText(port_guid));
  }();
  journal("rtnetlink " + std::string(pf) + " vf " + std::to_string(vf) + " node_guid " +
              guidText(node_guid) + " port_guid " + guidText(port_guid),
          st);
  return st;
}

Result<std::string> SimulatedKernel::mlxNic(std::string_view pci_address) const {
  std::string bdf(pci_address);
  auto dir = PciAddress::parse(bdf) ? deviceDir(bdf) : Result<std::string>(err(ENODEV, bdf));
  if (!dir.ok()) return Status(Code::kInternal, "-E- Failed to open device: " + bdf);
  if (fs_.read(*dir + "/vendor").valueOr("") != "0x15b3" || fs_.exists(*dir + "/physfn")) {
    return Status(Code::kInternal, "-E- Device " + bdf + " is not supported");
  }
  return bdf.substr(0, bdf.rfind('.'));
}

std::vector<std::string> SimulatedKernel::portsOf(const std::string& nic) const {
  std::vector<std::string> out;
  for (const char* fn : {".0", ".1"}) {
    auto dir = fs_.resolve("sys/bus/pci/devices/" + nic + fn);
    if (dir.ok() && !fs_.exists(*dir + "/physfn") &&
        fs_.read(*dir + "/vendor").valueOr("") == "0x15b3") {
      out.push_back(*dir);
    }
  }
  return out;
}

MlxFirmware SimulatedKernel::firmwareOf(const std::string& nic) const {
  auto ports = portsOf(nic);
  auto read = [&](const std::string& which) -> std::optional<MlxSettings> {
    auto text = fs_.read("simulated/firmware/" + nic + "/" + which);
    if (!text.ok()) return std::nullopt;
    MlxSettings s;
    for (const auto& [key, value] : keyValueLines(*text)) {
      (void)applySetting(s, key, value, ports.size() > 1);
    }
    return s;
  };
  MlxFirmware fw;
  if (auto current = read("current")) {
    fw.current = *current;
  } else {
    int64_t total =
        ports.empty() ? 0 : toInt(fs_.read(ports[0] + "/sriov_totalvfs").valueOr("0")).value_or(0);
    fw.current.sriov_en = total > 0;
    fw.current.num_of_vfs = total;
    for (size_t i = 0; i < ports.size(); ++i) {
      std::string type = "1";
      if (auto nets = fs_.list(ports[i] + "/net"); nets.ok() && !nets->empty()) {
        type = fs_.read(ports[i] + "/net/" + nets->front() + "/type").valueOr("1");
      }
      (i == 0 ? fw.current.link_type_p1 : fw.current.link_type_p2) = type == "32" ? "IB" : "ETH";
    }
  }
  fw.next = read("next").value_or(fw.current);
  return fw;
}

Result<MlxFirmware> SimulatedKernel::query(std::string_view pci_address) {
  std::lock_guard lock(mu_);
  auto nic = mlxNic(pci_address);
  if (!nic.ok()) return nic.status();
  return firmwareOf(*nic);
}

Status SimulatedKernel::set(std::string_view pci_address, const MlxChanges& values) {
  std::lock_guard lock(mu_);
  std::string line = "mstconfig -d " + std::string(pci_address) + " set " + describeChanges(values);
  Status st = [&]() -> Status {
    auto nic = mlxNic(pci_address);
    if (!nic.ok()) return nic.status();
    MlxFirmware fw = firmwareOf(*nic);
    for (const auto& [k, v] : values) {
      SDRA_RETURN_IF_ERROR(applySetting(fw.next, k, v, portsOf(*nic).size() > 1));
    }
    SDRA_RETURN_IF_ERROR(
        tree_.file("simulated/firmware/" + *nic + "/current", formatSettings(fw.current)));
    return tree_.file("simulated/firmware/" + *nic + "/next", formatSettings(fw.next));
  }();
  journal(line, st);
  return st;
}

Status SimulatedKernel::reboot() {
  std::lock_guard lock(mu_);
  Status st = [&]() -> Status {
    auto devices = fs_.list("sys/bus/pci/devices");
    if (!devices.ok()) return devices.status();
    for (const auto& bdf : *devices) {
      auto dir = deviceDir(bdf);
      if (!dir.ok() || toInt(fs_.read(*dir + "/sriov_numvfs").valueOr("0")).value_or(0) == 0)
        continue;
      SDRA_RETURN_IF_ERROR(setNumVfs(*dir, "0"));
    }
    auto nics = fs_.list("simulated/firmware");
    for (const auto& nic : nics.ok() ? *nics : std::vector<std::string>{}) {
      MlxFirmware fw = firmwareOf(nic);
      auto ports = portsOf(nic);
      for (size_t i = 0; i < ports.size(); ++i) {
        SDRA_RETURN_IF_ERROR(tree_.file(ports[i] + "/sriov_totalvfs",
                                        std::to_string(fw.next.sriov_en ? fw.next.num_of_vfs : 0)));
        const std::string& link = i == 0 ? fw.next.link_type_p1 : fw.next.link_type_p2;
        auto nets = fs_.list(ports[i] + "/net");
        if (link.empty() || !nets.ok() || nets->empty()) continue;
        SDRA_RETURN_IF_ERROR(
            tree_.file(ports[i] + "/net/" + nets->front() + "/type", link == "IB" ? "32" : "1"));
      }
      SDRA_RETURN_IF_ERROR(
          tree_.file("simulated/firmware/" + nic + "/current", formatSettings(fw.next)));
    }
    SDRA_RETURN_IF_ERROR(loadIbCoreOptions());
    return tree_.file(kBootIdPath, nextBootId(fs_.read(kBootIdPath).valueOr(kFirstBootId)));
  }();
  journal("reboot", st);
  return st;
}

Status SimulatedKernel::writeLocked(const std::string& path, std::string_view value) {
  std::string name = baseName(path);
  auto parent = fs_.resolve(parentOf(path));
  if (!parent.ok()) return err(ENOENT, "writing " + path);
  const std::string& dir = *parent;
  std::string canonical = dir + "/" + name;
  if (!fs_.exists(canonical)) return err(ENOENT, "writing " + path);

  if (name == "sriov_numvfs") return setNumVfs(dir, value);
  if (name == "driver_override") {
    std::string v = trim(value);
    return tree_.file(canonical, v.empty() ? "(null)" : v);
  }
  if (canonical == "sys/bus/pci/drivers_probe") return probe(trim(value));
  if (parentOf(dir) == "sys/bus/pci/drivers" && (name == "bind" || name == "unbind")) {
    return name == "bind" ? bind(baseName(dir), trim(value)) : unbind(baseName(dir), trim(value));
  }
  if (name == "mtu" && baseName(parentOf(dir)) == "net") {
    auto mtu = toInt(value);
    bool ib = fs_.read(dir + "/type").valueOr("1") == "32";
    if (!mtu || *mtu < 68 || *mtu > (ib ? 4092 : 65535)) {
      return err(EINVAL, "MTU \"" + trim(value) + "\" for " + baseName(dir));
    }
    return tree_.file(canonical, std::to_string(*mtu));
  }
  return err(EACCES, "writing " + path + " (read-only attribute)");
}

Status SimulatedKernel::setNumVfs(const std::string& pf_dir, std::string_view value) {
  auto n = toInt(value);
  if (!n || *n < 0) return err(EINVAL, "sriov_numvfs \"" + trim(value) + "\"");
  int64_t total = toInt(fs_.read(pf_dir + "/sriov_totalvfs").valueOr("0")).value_or(0);
  int64_t current = toInt(fs_.read(pf_dir + "/sriov_numvfs").valueOr("0")).value_or(0);
  if (*n > total) return err(ERANGE, "sriov_numvfs " + std::to_string(*n) + " > sriov_totalvfs");
  if (!fs_.exists(pf_dir + "/driver"))
    return err(ENOENT, "sriov_numvfs: no driver bound to the PF");
  if (*n == current) return Status::ok();
  if (*n > 0 && current > 0) {
    return err(EBUSY, "sriov_numvfs " + std::to_string(*n) + " while " + std::to_string(current) +
                          " VFs exist");
  }
  std::string pf_bdf = baseName(pf_dir);
  if (*n == 0) {
    for (int i = 0; i < current; ++i) SDRA_RETURN_IF_ERROR(removeVf(pf_dir, i));
    // The driver forgets the VFs' GUIDs with them (mlx5 frees its VF contexts).
    SDRA_RETURN_IF_ERROR(tree_.remove("simulated/netlink/vf-guids/" + pf_bdf));
    // And every VF setting and counter: VFs made again start as the driver starts them.
    SDRA_RETURN_IF_ERROR(tree_.remove("simulated/netlink/vf-config/" + pf_bdf));
    SDRA_RETURN_IF_ERROR(tree_.remove(std::string(kVfStatsDir) + pf_bdf));
  } else {
    for (int i = 0; i < *n; ++i) SDRA_RETURN_IF_ERROR(createVf(pf_dir, pf_bdf, i));
  }
  return tree_.file(pf_dir + "/sriov_numvfs", std::to_string(*n));
}

Status SimulatedKernel::createVf(const std::string& pf_dir, const std::string& pf_bdf, int i) {
  auto pf = *PciAddress::parse(pf_bdf);
  int64_t offset = toInt(fs_.read(pf_dir + "/sriov_offset").valueOr("1")).value_or(1);
  int64_t stride = toInt(fs_.read(pf_dir + "/sriov_stride").valueOr("1")).value_or(1);
  auto vf = PciAddress::fromRoutingId(pf.domain,
                                      pf.routingId() + static_cast<uint32_t>(offset + i * stride));
  std::string bdf = vf.toString();
  std::string dir = parentOf(pf_dir) + "/" + bdf;
  SDRA_RETURN_IF_ERROR(tree_.file(dir + "/vendor", fs_.read(pf_dir + "/vendor").valueOr("")));
  // sriov_vf_device holds the id without 0x ("101c"); a device's own attribute has it ("0x101c").
  SDRA_RETURN_IF_ERROR(
      tree_.file(dir + "/device", "0x" + fs_.read(pf_dir + "/sriov_vf_device").valueOr("")));
  SDRA_RETURN_IF_ERROR(tree_.file(dir + "/class", fs_.read(pf_dir + "/class").valueOr("")));
  SDRA_RETURN_IF_ERROR(
      tree_.file(dir + "/numa_node", fs_.read(pf_dir + "/numa_node").valueOr("-1")));
  SDRA_RETURN_IF_ERROR(tree_.file(dir + "/driver_override", "(null)"));
  SDRA_RETURN_IF_ERROR(tree_.link(dir + "/physfn", pf_dir));
  SDRA_RETURN_IF_ERROR(tree_.link(pf_dir + "/virtfn" + std::to_string(i), dir));
  SDRA_RETURN_IF_ERROR(tree_.link("sys/bus/pci/devices/" + bdf, dir));
  std::string group = std::to_string(nextFree("sys/kernel/iommu_groups", ""));
  SDRA_RETURN_IF_ERROR(tree_.link("sys/kernel/iommu_groups/" + group + "/devices/" + bdf, dir));
  SDRA_RETURN_IF_ERROR(tree_.link(dir + "/iommu_group", "sys/kernel/iommu_groups/" + group));
  std::string driver = defaultDriver(dir);
  return driver.empty() ? Status::ok() : bind(driver, bdf);
}

Status SimulatedKernel::removeVf(const std::string& pf_dir, int i) {
  std::string link = pf_dir + "/virtfn" + std::to_string(i);
  auto dir = fs_.resolve(link);
  if (!dir.ok()) return Status::ok();
  std::string bdf = baseName(*dir);
  if (auto drv = fs_.readLink(*dir + "/driver"); drv.ok()) {
    SDRA_RETURN_IF_ERROR(unbind(baseName(*drv), bdf));
  }
  if (auto group = fs_.readLink(*dir + "/iommu_group"); group.ok()) {
    SDRA_RETURN_IF_ERROR(tree_.remove("sys/kernel/iommu_groups/" + baseName(*group)));
    SDRA_RETURN_IF_ERROR(tree_.remove("dev/vfio/" + baseName(*group)));
  }
  SDRA_RETURN_IF_ERROR(tree_.remove("sys/bus/pci/devices/" + bdf));
  SDRA_RETURN_IF_ERROR(tree_.remove(link));
  return tree_.remove(*dir);
}

Status SimulatedKernel::bind(const std::string& driver, const std::string& bdf) {
  std::string drv_dir = "sys/bus/pci/drivers/" + driver;
  if (!fs_.exists(drv_dir)) return err(ENODEV, "no driver " + driver);
  auto dir = deviceDir(bdf);
  if (!dir.ok()) return dir.status();
  if (fs_.exists(*dir + "/driver")) return err(EBUSY, bdf + " is already bound");
  SDRA_RETURN_IF_ERROR(tree_.link(*dir + "/driver", drv_dir));
  SDRA_RETURN_IF_ERROR(tree_.link(drv_dir + "/" + bdf, *dir));
  bool is_vf = fs_.exists(*dir + "/physfn");
  if (driver == "vfio-pci") {
    if (auto group = fs_.readLink(*dir + "/iommu_group"); group.ok()) {
      SDRA_RETURN_IF_ERROR(tree_.file("dev/vfio/" + baseName(*group), "simulated vfio group"));
    }
    return Status::ok();
  }
  if (!is_vf || !isNetworkDriver(driver)) return Status::ok();
  // A network driver creates the VF's netdev (named after its PF) and, for mlx5, an RDMA device.
  auto pf_dir = fs_.resolve(*dir + "/physfn");
  std::string pf_name;
  std::string pf_type = "1";
  int64_t pf_mtu = 1500;
  if (auto nets = fs_.list(*pf_dir + "/net"); nets.ok() && !nets->empty()) {
    pf_name = nets->front();
    pf_type = fs_.read(*pf_dir + "/net/" + pf_name + "/type").valueOr("1");
    pf_mtu = toInt(fs_.read(*pf_dir + "/net/" + pf_name + "/mtu").valueOr("1500")).value_or(1500);
  }
  int index = 0;
  if (auto virtfns = fs_.list(*pf_dir); virtfns.ok()) {
    for (const auto& e : *virtfns) {
      if (e.rfind("virtfn", 0) == 0 && fs_.resolve(*pf_dir + "/" + e).valueOr("") == *dir) {
        index = static_cast<int>(toInt(e.substr(6)).value_or(0));
      }
    }
  }
  std::string name = (pf_name.empty() ? "vf" : pf_name) + "v" + std::to_string(index);
  std::string net = *dir + "/net/" + name;
  auto addr = *PciAddress::parse(bdf);
  char mac[32];
  std::snprintf(mac, sizeof mac, "02:00:%02x:%02x:%02x:%02x", addr.bus, addr.device, addr.function,
                index & 0xff);
  std::string address = mac;
  if (pf_type == "32") {
    // An IPoIB address: queue pair number, the link-local subnet prefix, then the port GUID the
    // VF's driver read when it bound (0 until one is assigned).
    address = "00:00:10:49:fe:80:00:00:00:00:00:00:" +
              guidText(guidsOf("simulated/netlink/vf-guids/" + baseName(*pf_dir), index).port_guid);
  }
  SDRA_RETURN_IF_ERROR(tree_.file(net + "/type", pf_type));
  SDRA_RETURN_IF_ERROR(tree_.file(
      net + "/mtu", std::to_string(pf_type == "32" ? std::min<int64_t>(pf_mtu, 4092) : 1500)));
  SDRA_RETURN_IF_ERROR(tree_.file(net + "/operstate", "up"));
  SDRA_RETURN_IF_ERROR(tree_.file(net + "/flags", "0x1003"));
  SDRA_RETURN_IF_ERROR(tree_.file(net + "/address", address));
  SDRA_RETURN_IF_ERROR(tree_.link("sys/class/net/" + name, net));
  SDRA_RETURN_IF_ERROR(tree_.link(net + "/device", *dir));
  if (driver == "mlx5_core") {
    SDRA_RETURN_IF_ERROR(addRdmaDevice(tree_, *dir, nextFree("sys/class/infiniband", "mlx5_")));
  }
  return Status::ok();
}

Status SimulatedKernel::unbind(const std::string& driver, const std::string& bdf) {
  auto dir = deviceDir(bdf);
  if (!dir.ok()) return dir.status();
  auto bound = fs_.readLink(*dir + "/driver");
  if (!bound.ok() || baseName(*bound) != driver)
    return err(ENODEV, bdf + " is not bound to " + driver);
  if (auto nets = fs_.list(*dir + "/net"); nets.ok()) {
    for (const auto& n : *nets) SDRA_RETURN_IF_ERROR(tree_.remove("sys/class/net/" + n));
    SDRA_RETURN_IF_ERROR(tree_.remove(*dir + "/net"));
  }
  SDRA_RETURN_IF_ERROR(destroyMovedNetdevs(*dir));
  SDRA_RETURN_IF_ERROR(forgetRdmaNamespaces(*dir));
  SDRA_RETURN_IF_ERROR(removeRdmaDevice(tree_, *dir));
  if (driver == "vfio-pci") {
    if (auto group = fs_.readLink(*dir + "/iommu_group"); group.ok()) {
      SDRA_RETURN_IF_ERROR(tree_.remove("dev/vfio/" + baseName(*group)));
    }
  }
  SDRA_RETURN_IF_ERROR(tree_.remove("sys/bus/pci/drivers/" + driver + "/" + bdf));
  return tree_.remove(*dir + "/driver");
}

Status SimulatedKernel::probe(const std::string& bdf) {
  auto dir = deviceDir(bdf);
  if (!dir.ok()) return dir.status();
  if (fs_.exists(*dir + "/driver")) return Status::ok();  // already bound: nothing to probe
  std::string override_drv = fs_.read(*dir + "/driver_override").valueOr("(null)");
  std::string driver =
      override_drv != "(null)" && !override_drv.empty() ? override_drv : defaultDriver(*dir);
  if (driver.empty()) return err(ENODEV, "no driver for " + bdf);
  return bind(driver, bdf);
}

}  // namespace sriovdra::host
