#include "cni_plugin/sriov_plugin.h"

#include <optional>
#include <thread>

#include "base/files.h"
#include "base/strings.h"
#include "cni/go_json.h"
#include "cni/result.h"
#include "cni_plugin/ipam.h"
#include "cni_plugin/pod_netdev.h"
#include "cni_plugin/vf_files.h"
#include "cni_plugin/vf_sysfs.h"
#include "host/netdev.h"
#include "host/netns.h"
#include "sriovcni/netconf.h"

namespace sriovdra::cni_plugin {
namespace {

using host::VfSetting;
using Kind = host::VfSetting::Kind;

// The PF-side settings of an ADD and their undoing (upstream's ApplyVFConfig and ResetVFConfig).
class VfConfigurator {
 public:
  VfConfigurator(host::Netlink& nl, const sriovcni::NetConf& conf)
      : nl_(nl), conf_(conf), vf_(static_cast<int32_t>(conf.vf_id)) {}

  Status apply() {
    const auto& c = conf_;
    if (c.vlan) {
      auto s = setting(Kind::kVlan);
      s.vlan = static_cast<int32_t>(*c.vlan);
      s.qos = static_cast<int32_t>(c.vlan_qos.value_or(0));
      s.vlan_proto = sriovcni::vlanProtoNumber(c.vlan_proto.value_or("802.1q"));
      if (Status st = nl_.setVf(c.master, s); !st.isOk()) {
        return fail("failed to set vf " + std::to_string(vf_) + " vlan configuration - id " +
                    std::to_string(*c.vlan) + ", qos " + std::to_string(s.qos) + " and proto " +
                    c.vlan_proto.value_or("802.1q") + ": " + st.message());
      }
    }
    if (!c.mac.empty()) {
      if (Status st = setHardwareMac(c.mac); !st.isOk()) {
        return fail("failed to set MAC address to " + c.mac + ": " + st.message());
      }
    }
    if (c.min_tx_rate || c.max_tx_rate) {
      auto s = setting(Kind::kRate);
      s.min_tx_rate = static_cast<uint32_t>(c.min_tx_rate.value_or(0));
      s.max_tx_rate = static_cast<uint32_t>(c.max_tx_rate.value_or(0));
      if (Status st = nl_.setVf(c.master, s); !st.isOk()) {
        return fail("failed to set vf " + std::to_string(vf_) + " min_tx_rate to " +
                    std::to_string(c.min_tx_rate.value_or(0)) + " Mbps: max_tx_rate to " +
                    std::to_string(c.max_tx_rate.value_or(0)) + " Mbps: " + st.message());
      }
    }
    if (!c.spoofchk.empty()) {
      auto s = setting(Kind::kSpoofchk);
      s.on = c.spoofchk == "on";
      if (Status st = nl_.setVf(c.master, s); !st.isOk()) {
        return fail("failed to set vf " + std::to_string(vf_) + " spoofchk flag to " + c.spoofchk +
                    ": " + st.message());
      }
    }
    if (!c.trust.empty()) {
      auto s = setting(Kind::kTrust);
      s.on = c.trust == "on";
      if (Status st = nl_.setVf(c.master, s); !st.isOk()) {
        return fail("failed to set vf " + std::to_string(vf_) + " trust flag to " + c.trust + ": " +
                    st.message());
      }
    }
    if (!c.link_state.empty()) {
      auto s = setting(Kind::kLinkState);
      s.link_state = c.link_state == "enable" ? 1 : c.link_state == "disable" ? 2 : 0;
      if (Status st = nl_.setVf(c.master, s); !st.isOk()) {
        return fail("failed to set vf " + std::to_string(vf_) + " link state to " +
                    std::to_string(s.link_state) + ": " + st.message());
      }
    }
    return Status::ok();
  }

  // Every setting the configuration asks for back to the original; the first failure is
  // returned, the others are still tried.
  Status reset() {
    const auto& c = conf_;
    const auto& o = c.orig;
    Status first;
    auto note = [&](const Status& st, const std::string& what) {
      if (!st.isOk() && first.isOk()) first = fail(what + ": " + st.message());
    };
    if (c.vlan) {
      auto s = setting(Kind::kVlan);
      s.vlan = static_cast<int32_t>(o.vlan);
      s.qos = static_cast<int32_t>(o.vlan_qos);
      s.vlan_proto =
          o.vlan_proto == 0 ? host::kVlanProto8021Q : static_cast<uint16_t>(o.vlan_proto);
      note(nl_.setVf(c.master, s), "failed to set vf " + std::to_string(vf_) +
                                       " vlan configuration - id " + std::to_string(o.vlan) +
                                       ", qos " + std::to_string(o.vlan_qos) + " and proto " +
                                       std::to_string(s.vlan_proto));
    }
    if (!c.spoofchk.empty()) {
      auto s = setting(Kind::kSpoofchk);
      s.on = o.spoofchk;
      note(nl_.setVf(c.master, s), "failed to restore spoofchk for vf " + std::to_string(vf_));
    }
    if (!o.admin_mac.empty()) {
      note(setHardwareMac(o.admin_mac),
           "failed to restore original administrative MAC address " + o.admin_mac);
    }
    if (!c.trust.empty()) {
      auto s = setting(Kind::kTrust);
      s.on = o.trust;
      note(nl_.setVf(c.master, s), "failed to set trust for vf " + std::to_string(vf_));
    }
    if (c.min_tx_rate || c.max_tx_rate) {
      auto s = setting(Kind::kRate);
      s.min_tx_rate = static_cast<uint32_t>(o.min_tx_rate);
      s.max_tx_rate = static_cast<uint32_t>(o.max_tx_rate);
      note(nl_.setVf(c.master, s), "failed to disable rate limiting for vf " + std::to_string(vf_));
    }
    if (!c.link_state.empty()) {
      auto s = setting(Kind::kLinkState);
      s.link_state = o.link_state;
      note(nl_.setVf(c.master, s),
           "failed to set link state to auto for vf " + std::to_string(vf_));
    }
    return first;
  }

 private:
  VfSetting setting(Kind kind) const {
    VfSetting s;
    s.kind = kind;
    s.vf = vf_;
    return s;
  }

  // The VF's administrative MAC, read back until the PF reports it (a few tries: some drivers
  // apply it asynchronously).
  Status setHardwareMac(const std::string& mac) {
    auto wanted = host::parseMac(mac);
    if (!wanted.ok())
      return fail("failed to parse MAC address " + mac + ": " + wanted.status().message());
    auto s = setting(Kind::kMac);
    s.mac = mac;
    if (Status st = nl_.setVf(conf_.master, s); !st.isOk()) return st;
    for (int attempt = 0; attempt < 5; ++attempt) {
      auto vfs = nl_.vfs(conf_.master);
      if (!vfs.ok()) {
        return fail("failed to get netlink device with name " + conf_.master + ": " +
                    cni::goQuote(vfs.status().message()));
      }
      for (const auto& vf : *vfs) {
        if (vf.vf == vf_ && vf.mac == host::macText(*wanted)) return Status::ok();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return fail("hardware mac address is different from requested one");
  }

  host::Netlink& nl_;
  const sriovcni::NetConf& conf_;
  int32_t vf_;
};

// The netdev's MAC, read back until it shows (upstream's SetVFEffectiveMAC).
Status setEffectiveMac(const host::Netdevs& nd, const std::string& name, const std::string& mac) {
  auto wanted = host::parseMac(mac);
  if (!wanted.ok())
    return fail("failed to parse MAC address " + mac + ": " + wanted.status().message());
  auto link = nd.link(name);
  if (!link.ok()) return link.status();
  if (Status st = nd.setMac(link->index, mac); !st.isOk()) return st;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto now = nd.link(name);
    if (!now.ok()) {
      return fail("failed to get netlink device with name " + name + ": " +
                  cni::goQuote(now.status().message()));
    }
    if (now->mac == host::macText(*wanted)) return Status::ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fail("effective mac address is different from requested one");
}

// Upstream's SetupVF: the host netdev through a temporary namespace (renamed there, so neither
// name clashes) into the pod's, then set up inside it.
// `in_pod` says whether the netdev reached the pod's namespace (what a failure must undo there).
Status setupVf(sriovcni::NetConf& conf, const std::string& if_name,
               const host::NetNamespace& host_ns, const host::NetNamespace& pod_ns,
               const PluginHost& h, bool& in_pod) {
  const std::string link_name = conf.orig.host_if_name;
  host::Netdevs nd;
  SDRA_RETURN_IF_ERROR(nameFreeInPod(pod_ns, if_name));
  auto temp = host::NetNamespace::createTemporary();
  if (!temp.ok()) return fail("failed to create tempNS: " + temp.status().message());
  auto link = nd.link(link_name);
  if (!link.ok()) {
    return fail("error: " + link.status().message() + ". Failed to get VF netdevice with name " +
                link_name);
  }
  conf.orig.effective_mac = link->mac;
  if (Status st = nd.moveTo(link->index, *temp); !st.isOk()) {
    return fail("failed to move " + cni::goQuote(link_name) + " to tempNS: " + st.message());
  }
  Status moved = temp->run([&]() -> Status {
    auto in_temp = nd.link(link_name);
    if (!in_temp.ok()) {
      return fail("failed to find " + cni::goQuote(link_name) +
                  " in tempNS: " + in_temp.status().message());
    }
    if (Status st = nd.rename(in_temp->index, if_name); !st.isOk()) {
      return fail("failed to rename host device " + cni::goQuote(link_name) + " to " +
                  cni::goQuote(if_name) + ": " + st.message());
    }
    for (const auto& alt : in_temp->alt_names) {
      if (alt != link_name) continue;
      if (Status st = nd.deleteAltName(in_temp->index, alt); !st.isOk()) {
        return fail("error removing VF altname " + link_name + ": " + st.message());
      }
    }
    if (Status st = nd.moveTo(in_temp->index, pod_ns); !st.isOk()) {
      return fail("failed to move IF " + if_name + " to netns: " + st.message());
    }
    return Status::ok();
  });
  if (!moved.isOk()) {
    // Put it back in the host's namespace under its own name, wherever it is now.
    Status back = temp->run([&]() -> Status {
      for (const std::string& name : {if_name, link_name}) {
        auto l = nd.link(name);
        if (!l.ok()) continue;
        if (name != link_name) {
          if (Status st = nd.rename(l->index, link_name); !st.isOk()) return st;
        }
        return nd.moveTo(l->index, host_ns);
      }
      return fail("failed to find interface with any of the possible names: [" + if_name + " " +
                  link_name + "]");
    });
    if (!back.isOk()) {
      return fail("setupVF failed: " + moved.message() + "; rollback failed: " + back.message());
    }
    return fail("setupVF failed: " + moved.message());
  }
  in_pod = true;
  Status inside = pod_ns.run([&]() -> Status {
    auto pod_link = nd.link(if_name);
    if (!pod_link.ok()) {
      return fail("error: " + pod_link.status().message() +
                  ". Failed to get VF netdevice with name " + if_name);
    }
    for (const char* key : {"ipv4/conf/%s/arp_notify", "ipv6/conf/%s/ndisc_notify"}) {
      std::string k(key);
      k.replace(k.find("%s"), 2, if_name);
      if (Status st = nd.setSysctl(k, "1"); !st.isOk()) h.log("not set: " + st.message());
    }
    if (!conf.mac.empty()) {
      if (Status st = setEffectiveMac(nd, if_name, conf.mac); !st.isOk()) {
        return fail("failed to set netlink MAC address to " + conf.mac + ": " + st.message());
      }
    }
    if (Status st = nd.setSysctl("ipv6/conf/" + if_name + "/optimistic_dad", "1"); !st.isOk()) {
      h.log("not set: " + st.message());
    }
    if (Status st = nd.setUp(pod_link->index, true); !st.isOk()) {
      return fail("error bringing interface up in container ns: " + cni::goQuote(st.message()));
    }
    return Status::ok();
  });
  if (!inside.isOk()) {
    return fail("error setting up interface in container namespace: " +
                cni::goQuote(inside.message()));
  }
  conf.mtu = link->mtu;
  return Status::ok();
}

// Upstream's ReleaseVF: the pod's interface back on the host, its MAC and MTU restored.
Status releaseVf(const sriovcni::NetConf& conf, const std::string& if_name,
                 const host::NetNamespace& host_ns, const host::NetNamespace& pod_ns) {
  const std::string& host_name = conf.orig.host_if_name;
  return releaseToHost(pod_ns, host_ns, if_name, host_name, conf.device_id,
                       [&](const host::Netdevs& nd, int32_t index) -> Status {
                         if (!conf.orig.effective_mac.empty()) {
                           Status st = setEffectiveMac(nd, host_name, conf.orig.effective_mac);
                           if (!st.isOk()) {
                             return fail(
                                 "failed to restore original effective netlink MAC "
                                 "address " +
                                 conf.orig.effective_mac + ": " + st.message());
                           }
                         }
                         if (conf.orig.mtu == 0) return Status::ok();
                         Status st = nd.setMtu(index, static_cast<uint32_t>(conf.orig.mtu));
                         if (!st.isOk()) {
                           return fail("failed to reset MTU for link link " + host_name + ": " +
                                       cni::goQuote(st.message()));
                         }
                         return Status::ok();
                       });
}

// Another attachment's cache naming the VF (by its file name): only a stale one can, once the
// VF's allocation says it is free.
std::optional<std::pair<std::string, sriovcni::NetConf>> staleCacheFor(const VfFiles& files,
                                                                       const std::string& device,
                                                                       const cni::CmdArgs& args) {
  std::string ours = args.container_id + "-" + args.if_name;
  for (const auto& name : files.cacheNames()) {
    if (name == ours) continue;
    auto text = readFile(files.dir() + "/" + name, 1u << 20);
    auto cached =
        text.ok() ? sriovcni::decodeCache(*text) : Result<sriovcni::NetConf>(text.status());
    if (cached.ok() && cached->device_id == device) return std::pair{name, std::move(*cached)};
  }
  return std::nullopt;
}

// LoadConf: the configuration, its VF, the VF's lock and allocation, its netdev or DPDK driver.
struct Loaded {
  sriovcni::NetConf conf;
  std::optional<HeldLock> lock;
};

Result<Loaded> loadConf(const cni::CmdArgs& args, const PluginHost& h, const VfFiles& files) {
  auto conf = sriovcni::decodeNetConf(args.stdin_data);
  if (!conf.ok()) return conf.status();
  Loaded out{std::move(*conf), std::nullopt};
  auto& c = out.conf;
  VfSysfs vf(*h.sysfs);
  if (c.device_id.empty()) return fail("LoadConf(): VF pci addr is required");
  if (!isPciAddress(c.device_id)) {
    return fail("LoadConf(): deviceID " + cni::goQuote(c.device_id) +
                " is not a PCI address (DDDD:BB:DD.F, lower-case hex)");
  }
  auto pf = vf.pfName(c.device_id);
  auto id = pf.ok() ? vf.vfId(c.device_id, *pf) : Result<int64_t>(pf.status());
  if (!id.ok()) {
    return fail("LoadConf(): failed to get VF information: " + cni::goQuote(id.status().message()));
  }
  c.master = *pf;
  c.vf_id = *id;
  auto lock = files.lock(c.device_id, h.lock_timeout);
  if (!lock.ok()) return fail(lock.status().message());
  out.lock.emplace(std::move(*lock));
  auto allocated = files.allocated(c.device_id);
  if (!allocated.ok()) return fail(allocated.status().message());
  if (*allocated) return fail("pci address " + c.device_id + " is already allocated");
  c.orig.host_if_name = vf.linkName(c.device_id);
  if (c.orig.host_if_name.empty()) {
    auto driver = vf.driver(c.device_id);
    if (!driver.ok()) {
      return fail("LoadConf(): failed to detect if VF " + c.device_id + " has dpdk driver " +
                  cni::goQuote(driver.status().message()));
    }
    c.dpdk_mode = userspaceDriver(*driver);
    if (!c.dpdk_mode) {
      return fail("LoadConf(): the VF " + c.device_id +
                  " does not have a interface name or a dpdk driver");
    }
  }
  if (Status st = sriovcni::checkNetConf(c); !st.isOk()) return fail(st.message());
  return out;
}

}  // namespace

Result<std::string> SriovPlugin::add(const cni::CmdArgs& args) {
  VfFiles files(host_.state_dir);
  auto loaded = loadConf(args, host_, files);
  if (!loaded.ok()) {
    if (loaded.status().message().starts_with("LoadConf(): failed to load netconf:")) {
      // Upstream decodes the configuration for its logging first, and fails there.
      std::string rest = loaded.status().message().substr(
          std::string_view("LoadConf(): failed to load netconf: ").size());
      return fail("SetLogging(): failed to load netconf: " + rest);
    }
    return fail("SRIOV-CNI failed to load netconf: " + loaded.status().message());
  }
  auto& conf = loaded->conf;
  auto args_mac = sriovcni::macFromArgs(args.args);
  if (!args_mac.ok()) return fail("SRIOV-CNI failed to parse args: " + args_mac.status().message());
  if (!args_mac->empty()) conf.mac = *args_mac;
  if (!conf.runtime_mac.empty()) conf.mac = conf.runtime_mac;
  conf.mac = asciiLower(conf.mac);

  auto pod_ns = host::NetNamespace::open(args.netns);
  if (!pod_ns.ok()) {
    return fail("failed to open netns " + cni::goQuote(args.netns) + ": " +
                pod_ns.status().message());
  }
  auto host_ns = host::NetNamespace::current();
  if (!host_ns.ok()) return fail("failed to get current NS: " + host_ns.status().message());

  // FillOriginalVfInfo.
  {
    auto vfs = host_.netlink->vfs(conf.master);
    if (!vfs.ok()) {
      return fail("failed to get original vf information: failed to lookup master " +
                  cni::goQuote(conf.master) + ": " + vfs.status().message());
    }
    const host::VfInfo* info = nullptr;
    for (const auto& v : *vfs) {
      if (v.vf == conf.vf_id) info = &v;
    }
    if (info == nullptr) {
      return fail("failed to get original vf information: failed to find vf " +
                  std::to_string(conf.vf_id));
    }
    conf.orig.admin_mac = info->mac;
    conf.orig.link_state = info->link_state;
    conf.orig.max_tx_rate = info->max_tx_rate;
    conf.orig.min_tx_rate = info->min_tx_rate;
    conf.orig.vlan = info->vlan;
    conf.orig.vlan_qos = info->qos;
    conf.orig.vlan_proto = info->vlan_proto;
    conf.orig.spoofchk = info->spoofchk;
    conf.orig.trust = info->trust;
    if (!conf.orig.host_if_name.empty()) {
      auto vf_link = host::Netdevs().link(conf.orig.host_if_name);
      if (!vf_link.ok()) {
        return fail("failed to get original vf information: failed to lookup vf " +
                    cni::goQuote(conf.orig.host_if_name) + ": " + vf_link.status().message());
      }
      conf.orig.mtu = vf_link->mtu;
    }
    // A pod that ended without its DEL left the VF configured, and its cache says how the VF
    // was before: that is the state to come back to, not the one found now.
    if (auto earlier = staleCacheFor(files, conf.device_id, args)) {
      host_.log("VF " + conf.device_id + " was left configured by " + earlier->first +
                ", whose pod is gone: its original state is kept");
      std::string host_name = conf.orig.host_if_name;
      conf.orig = earlier->second.orig;
      conf.orig.host_if_name = host_name;
    }
  }

  // From here on a failure undoes what was done, in reverse. The cache holds the VF's original
  // state from now on: a runtime that kills this ADD (its deadline) and runs DEL restores it.
  if (Status st = files.saveCache(args.container_id, args.if_name, sriovcni::encodeCache(conf));
      !st.isOk()) {
    return fail("error saving NetConf " + cni::goQuote(st.message()));
  }
  VfConfigurator vf(*host_.netlink, conf);
  bool moved = false;
  std::optional<std::string> ipam_added;
  auto undo = [&](const Status& why) -> Status {
    (void)files.removeCache(args.container_id, args.if_name);
    if (ipam_added) {
      if (Status st = delegateDel(args, *ipam_added, host_.ipam_timeout); !st.isOk()) {
        host_.log("undoing a failed ADD: IPAM DEL: " + st.message());
      }
    }
    if (moved) {
      if (Status st = releaseVf(conf, args.if_name, *host_ns, *pod_ns); !st.isOk()) {
        host_.log("undoing a failed ADD: " + st.message());
      }
    }
    if (Status st = vf.reset(); !st.isOk()) host_.log("undoing a failed ADD: " + st.message());
    return why;
  };

  if (Status st = vf.apply(); !st.isOk()) {
    return undo(fail("SRIOV-CNI failed to configure VF " + cni::goQuote(st.message())));
  }
  conf.mtu = VfSysfs(*host_.sysfs).mtu(conf.master);

  cni::CniResult result;
  result.interfaces.push_back({.name = args.if_name, .sandbox = args.netns});
  if (!conf.dpdk_mode) {
    Status st = setupVf(conf, args.if_name, *host_ns, *pod_ns, host_, moved);
    if (!st.isOk()) {
      return undo(fail("failed to set up pod interface " + cni::goQuote(args.if_name) +
                       " from the device " + cni::goQuote(conf.master) + ": " + st.message()));
    }
  }
  result.interfaces[0].mac = !conf.mac.empty()                            ? conf.mac
                             : !conf.dpdk_mode                            ? conf.orig.effective_mac
                             : conf.orig.admin_mac != "00:00:00:00:00:00" ? conf.orig.admin_mac
                                                                          : "";
  if (conf.mtu) result.interfaces[0].mtu = static_cast<int>(*conf.mtu);

  bool announce_ips = false;
  if (!conf.plugin.ipam_type.empty()) {
    auto ipam = delegateAdd(args, conf.plugin.ipam_type, host_.ipam_timeout);
    if (!ipam.ok()) {
      return undo(fail("failed to set up IPAM plugin type " + cni::goQuote(conf.plugin.ipam_type) +
                       " from the device " + cni::goQuote(conf.master) + ": " +
                       ipam.status().message()));
    }
    ipam_added = conf.plugin.ipam_type;
    if (ipam->ips.empty()) return undo(fail("IPAM plugin returned missing IP config"));
    ipam->interfaces = result.interfaces;
    for (auto& ip : ipam->ips) ip.interface = 0;
    if (!conf.dpdk_mode) {
      host::Netdevs nd;
      Status st = pod_ns->run([&] { return configureInterface(nd, args.if_name, *ipam); });
      if (!st.isOk()) return undo(fail(st.message()));
      announce_ips = true;
    }
    result = std::move(*ipam);
  }

  // In the version the skeleton checked (the configuration's, read as Go reads it).
  auto text = result.encode(args.cni_version);
  if (!text.ok()) return undo(fail(text.status().message()));
  if (Status st = files.saveCache(args.container_id, args.if_name, sriovcni::encodeCache(conf));
      !st.isOk()) {
    return undo(fail("error saving NetConf " + cni::goQuote(st.message())));
  }
  if (Status st = files.saveAllocation(conf.device_id, args.netns); !st.isOk()) {
    return undo(fail("error saving the pci allocation for vf pci address " + conf.device_id + ": " +
                     st.message()));
  }
  if (announce_ips) {
    host::Netdevs nd;
    (void)pod_ns->run([&] {
      std::string problems = announce(nd, args.if_name, result);
      if (!problems.empty()) host_.log("announcing the addresses: " + problems);
      return Status::ok();
    });
  }
  return *text;
}

Status SriovPlugin::del(const cni::CmdArgs& args) {
  VfFiles files(host_.state_dir);
  auto cached = files.readCache(args.container_id, args.if_name);
  auto conf =
      cached.ok() ? sriovcni::decodeCache(*cached) : Result<sriovcni::NetConf>(cached.status());
  if (!conf.ok()) {
    // Nothing to undo that this plugin knows of: the attachment was deleted before, or never
    // made. A DEL that keeps failing would block the pod's removal forever.
    host_.log("DEL of " + args.container_id + "/" + args.if_name + ": no usable cache (" +
              conf.status().message() + "): nothing to do");
    return Status::ok();
  }
  if (!isPciAddress(conf->device_id)) {
    host_.log("DEL of " + args.container_id + "/" + args.if_name + ": the cache's deviceID " +
              cni::goQuote(conf->device_id) + " is not a PCI address: nothing to do");
    (void)files.removeCache(args.container_id, args.if_name);
    return Status::ok();
  }
  auto lock = files.lock(conf->device_id, host_.lock_timeout);
  if (!lock.ok()) {
    return fail("cmdDel() error obtaining lock for device [" + conf->device_id +
                "]: " + lock.status().message());
  }
  if (!conf->plugin.ipam_type.empty()) {
    if (Status st = delegateDel(args, conf->plugin.ipam_type, host_.ipam_timeout); !st.isOk()) {
      return fail(st.message());  // the cache stays: a retry releases the address
    }
  }
  // A DEL retried after the VF went to another pod (this pod's namespace vanished, the VF was
  // taken back and given again) must not reset it under that pod.
  std::string holder = files.holder(conf->device_id);
  if (!holder.empty() && holder != args.netns && host::NetNamespace::open(holder).ok()) {
    host_.log("DEL of " + args.container_id + "/" + args.if_name + ": VF " + conf->device_id +
              " is held by another pod now (" + holder + "): left as it is");
    (void)files.removeCache(args.container_id, args.if_name);
    return Status::ok();
  }
  auto finish = [&](Status result) {
    (void)files.removeCache(args.container_id, args.if_name);
    if (Status st = files.deleteAllocation(conf->device_id); !st.isOk() && result.isOk()) {
      return fail("error cleaning the pci allocation for vf pci address " + conf->device_id + ": " +
                  st.message());
    }
    return result;
  };
  if (args.netns.empty()) return finish(Status::ok());
  VfSysfs vf(*host_.sysfs);
  if (auto id = vf.vfId(conf->device_id, conf->master); !id.ok() || *id != conf->vf_id) {
    host_.log("DEL of " + args.container_id + "/" + args.if_name + ": VF " + conf->device_id +
              " is gone (" + (id.ok() ? "its index changed" : id.status().message()) +
              "): nothing to reset");
    return finish(Status::ok());
  }
  // Through the PF first: some drivers refuse to reset a netdev VF whose trust is off.
  VfConfigurator configurator(*host_.netlink, *conf);
  Status reset = configurator.reset();
  if (!reset.isOk()) reset = fail("cmdDel() error reseting VF: " + cni::goQuote(reset.message()));
  // Upstream's caches have no DPDK mode: a VF on a userspace driver has no netdev to move back.
  bool dpdk = conf->dpdk_mode || userspaceDriver(vf.driver(conf->device_id).valueOr(""));
  if (dpdk) return finish(reset);
  auto pod_ns = host::NetNamespace::open(args.netns);
  if (!pod_ns.ok()) {
    if (pod_ns.status().code() == Code::kNotFound) return finish(reset);
    return finish(fail("failed to open netns " + cni::goQuote(args.netns) + ": " +
                       pod_ns.status().message()));
  }
  auto host_ns = host::NetNamespace::current();
  if (!host_ns.ok()) return finish(fail("failed to get init netns: " + host_ns.status().message()));
  Status released = releaseVf(*conf, args.if_name, *host_ns, *pod_ns);
  // An ADD that stopped before the netdev left the host (its deadline) leaves nothing to move.
  if (released.code() == Code::kNotFound && host::Netdevs().link(conf->orig.host_if_name).ok()) {
    released = Status::ok();
  }
  return finish(reset.isOk() ? released : reset);
}

}  // namespace sriovdra::cni_plugin
