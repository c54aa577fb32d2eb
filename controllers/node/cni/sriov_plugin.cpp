#include "node/cni/sriov_plugin.h"

#include <optional>
#include <utility>

#include "base/fault_point.h"
#include "base/files.h"
#include "base/strings.h"
#include "cni/go_json.h"
#include "cni/result.h"
#include "host/announce.h"
#include "host/netdev.h"
#include "host/netns.h"
#include "host/pci.h"
#include "node/cni/commands.h"
#include "node/cni/ipam.h"
#include "node/cni/pf_settings.h"
#include "node/cni/pod_netdev.h"
#include "node/cni/vf_files.h"
#include "node/cni/vf_sysfs.h"
#include "sriovcni/netconf.h"

namespace sriovdra::cni_plugin {
namespace {

// Upstream's SetupVF: the netdev `current_name` through a temporary namespace (renamed there, so
// neither name clashes) into the pod's, then set up inside it. `in_pod`: whether it got there.
Status setupVf(const sriovcni::NetConf& conf, const std::string& current_name,
               const std::string& if_name, const host::NetNamespace& host_ns,
               const host::NetNamespace& pod_ns, const PluginHost& h, bool& in_pod) {
  host::Netdevs nd;
  auto temp = host::NetNamespace::createTemporary();
  if (!temp.ok()) return fail("failed to create tempNS: " + temp.status().message());
  auto link = nd.link(current_name);
  if (!link.ok()) {
    return fail("error: " + link.status().message() + ". Failed to get VF netdevice with name " +
                current_name);
  }
  if (Status st = nd.moveTo(link->index, *temp); !st.isOk()) {
    return fail("failed to move " + cni::goQuote(current_name) + " to tempNS: " + st.message());
  }
  Status moved = temp->run([&]() -> Status {
    auto in_temp = nd.link(current_name);
    if (!in_temp.ok()) {
      return fail("failed to find " + cni::goQuote(current_name) +
                  " in tempNS: " + in_temp.status().message());
    }
    if (Status st = nd.rename(in_temp->index, if_name); !st.isOk()) {
      return fail("failed to rename host device " + cni::goQuote(current_name) + " to " +
                  cni::goQuote(if_name) + ": " + st.message());
    }
    for (const auto& alt : in_temp->alt_names) {
      if (alt != current_name) continue;
      if (Status st = nd.deleteAltName(in_temp->index, alt); !st.isOk()) {
        return fail("error removing VF altname " + current_name + ": " + st.message());
      }
    }
    if (Status st = nd.moveTo(in_temp->index, pod_ns); !st.isOk()) {
      return fail("failed to move IF " + if_name + " to netns: " + st.message());
    }
    return Status::ok();
  });
  if (!moved.isOk()) {
    // Back to the host's namespace under its own name, wherever it is now.
    Status back = temp->run([&]() -> Status {
      for (const std::string& name : {if_name, current_name}) {
        auto l = nd.link(name);
        if (!l.ok()) continue;
        if (name != current_name) SDRA_RETURN_IF_ERROR(nd.rename(l->index, current_name));
        return nd.moveTo(l->index, host_ns);
      }
      return fail("failed to find interface with any of the possible names: [" + if_name + " " +
                  current_name + "]");
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
    for (const std::string& key :
         {"ipv4/conf/" + if_name + "/arp_notify", "ipv6/conf/" + if_name + "/ndisc_notify"}) {
      if (Status st = nd.setSysctl(key, "1"); !st.isOk()) h.log("not set: " + st.message());
    }
    if (!conf.mac.empty()) {
      if (Status st = setNetdevMac(nd, if_name, conf.mac); !st.isOk()) {
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
  return Status::ok();
}

// Upstream's ReleaseVF: the pod's interface back on the host, its MAC and MTU restored.
Status releaseVf(const sriovcni::NetConf& conf, const std::string& if_name,
                 const host::NetNamespace& host_ns, const host::NetNamespace& pod_ns) {
  const std::string& host_name = conf.orig.host_if_name;
  return releaseToHost(pod_ns, host_ns, if_name, host_name, conf.device_id,
                       [&](const host::Netdevs& nd, int32_t index) -> Status {
                         if (!conf.orig.effective_mac.empty()) {
                           Status st = setNetdevMac(nd, host_name, conf.orig.effective_mac);
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

// Another attachment's cache naming the VF (with its file name): only a stale one can, once the
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

// One ADD, step by step (SriovPlugin::add runs them in order, and undo() on a failure).
class Add {
 public:
  Add(const PluginHost& h, const cni::CmdArgs& args)
      : h_(h), args_(args), files_(h.state_dir), settings_(*h.netlink, conf_) {}

  // LoadConf and the checks before anything changes: the VF, its lock and allocation, its netdev
  // or DPDK driver, the configuration's values, the MAC's precedence, the namespaces.
  Status load() {
    auto decoded = sriovcni::decodeNetConf(args_.stdin_data);
    if (!decoded.ok()) {
      // Upstream decodes the configuration for its logging first, and fails there.
      std::string why = decoded.status().message();
      return fail("SetLogging(): failed to load netconf: " +
                  why.substr(std::string_view("LoadConf(): failed to load netconf: ").size()));
    }
    conf_ = std::move(*decoded);
    if (Status st = loadVf(); !st.isOk()) {
      return fail("SRIOV-CNI failed to load netconf: " + st.message());
    }
    auto args_mac = sriovcni::macFromArgs(args_.args);
    if (!args_mac.ok()) {
      return fail("SRIOV-CNI failed to parse args: " + args_mac.status().message());
    }
    if (!args_mac->empty()) conf_.mac = *args_mac;
    if (!conf_.runtime_mac.empty()) conf_.mac = conf_.runtime_mac;
    conf_.mac = asciiLower(conf_.mac);
    auto pod = host::NetNamespace::open(args_.netns);
    if (!pod.ok()) {
      return fail("failed to open netns " + cni::goQuote(args_.netns) + ": " +
                  pod.status().message());
    }
    pod_ns_.emplace(std::move(*pod));
    auto host = host::NetNamespace::current();
    if (!host.ok()) return fail("failed to get current NS: " + host.status().message());
    host_ns_.emplace(std::move(*host));
    // Before the VF changes at all: the pod's own interface of that name is never touched.
    if (!conf_.dpdk_mode) return nameFreeInPod(*pod_ns_, args_.if_name);
    return Status::ok();
  }

  // FillOriginalVfInfo, then the cache with it: from here a killed ADD's DEL restores the VF.
  Status recordOriginal() {
    auto vfs = h_.netlink->vfs(conf_.master);
    if (!vfs.ok()) {
      return fail("failed to get original vf information: failed to lookup master " +
                  cni::goQuote(conf_.master) + ": " + vfs.status().message());
    }
    const host::VfInfo* info = nullptr;
    for (const auto& v : *vfs) {
      if (v.vf == conf_.vf_id) info = &v;
    }
    if (info == nullptr) {
      return fail("failed to get original vf information: failed to find vf " +
                  std::to_string(conf_.vf_id));
    }
    auto& o = conf_.orig;
    o.admin_mac = info->mac;
    o.link_state = info->link_state;
    o.max_tx_rate = info->max_tx_rate;
    o.min_tx_rate = info->min_tx_rate;
    o.vlan = info->vlan;
    o.vlan_qos = info->qos;
    o.vlan_proto = info->vlan_proto;
    o.spoofchk = info->spoofchk;
    o.trust = info->trust;
    if (!conf_.dpdk_mode) {
      auto link = host::Netdevs().link(current_name_);
      if (!link.ok()) {
        return fail("failed to get original vf information: failed to lookup vf " +
                    cni::goQuote(current_name_) + ": " + link.status().message());
      }
      o.mtu = link->mtu;
      o.effective_mac = link->mac;
    }
    // A pod that ended without its DEL left the VF configured (and maybe named as in that pod);
    // its cache says how the VF was before: that is the state to come back to.
    if (auto earlier = staleCacheFor(files_, conf_.device_id, args_)) {
      h_.log("VF " + conf_.device_id + " was left configured by " + earlier->first +
             ", whose pod is gone: its original state is kept");
      conf_.orig = earlier->second.orig;
    }
    if (Status st =
            files_.saveCache(args_.container_id, args_.if_name, sriovcni::encodeCache(conf_));
        !st.isOk()) {
      return fail("error saving NetConf " + cni::goQuote(st.message()));
    }
    cached_ = true;
    return Status::ok();
  }

  // ApplyVFConfig, then the netdev into the pod (kernel mode): the result's interface.
  Status configure() {
    if (Status st = settings_.apply(); !st.isOk()) {
      return fail("SRIOV-CNI failed to configure VF " + cni::goQuote(st.message()));
    }
    // DPDK mode reports the PF's MTU, as upstream (the VF has no netdev of its own).
    conf_.mtu = VfSysfs(*h_.sysfs).mtu(conf_.master);
    result_.interfaces.push_back({.name = args_.if_name, .sandbox = args_.netns});
    if (!conf_.dpdk_mode) {
      Status st = setupVf(conf_, current_name_, args_.if_name, *host_ns_, *pod_ns_, h_, in_pod_);
      if (!st.isOk()) {
        return fail("failed to set up pod interface " + cni::goQuote(args_.if_name) +
                    " from the device " + cni::goQuote(conf_.master) + ": " + st.message());
      }
      conf_.mtu = conf_.orig.mtu;
    }
    const auto& o = conf_.orig;
    result_.interfaces[0].mac = !conf_.mac.empty()                   ? conf_.mac
                                : !conf_.dpdk_mode                   ? o.effective_mac
                                : o.admin_mac != "00:00:00:00:00:00" ? o.admin_mac
                                                                     : "";
    if (conf_.mtu) result_.interfaces[0].mtu = static_cast<int>(*conf_.mtu);
    return Status::ok();
  }

  // The IPAM plugin's addresses and routes, on the interface in kernel mode.
  Status addresses() {
    const std::string& type = conf_.plugin.ipam_type;
    if (type.empty()) return Status::ok();
    SDRA_RETURN_IF_ERROR(ipamAdd(h_, args_, type, conf_.master,
                                 conf_.dpdk_mode ? nullptr : &*pod_ns_, result_, ipam_added_));
    announce_ = !conf_.dpdk_mode;
    return Status::ok();
  }

  // The result in the version the skeleton checked, the cache and the allocation, then the
  // announcements (best effort).
  Result<std::string> commit() {
    auto text = result_.encode(args_.cni_version);
    if (!text.ok()) return fail(text.status().message());
    if (Status st =
            files_.saveCache(args_.container_id, args_.if_name, sriovcni::encodeCache(conf_));
        !st.isOk()) {
      return fail("error saving NetConf " + cni::goQuote(st.message()));
    }
    if (Status st = files_.saveAllocation(conf_.device_id, args_.netns); !st.isOk()) {
      return fail("error saving the pci allocation for vf pci address " + conf_.device_id + ": " +
                  st.message());
    }
    if (announce_) {
      host::Netdevs nd;
      (void)pod_ns_->run([&] {
        std::vector<IpAddress> addresses;
        for (const auto& ip : result_.ips) addresses.push_back(ip.address.address);
        std::string problems = host::announceAddresses(nd, args_.if_name, addresses);
        if (!problems.empty()) h_.log("announcing the addresses: " + problems);
        return Status::ok();
      });
    }
    return *text;
  }

  // What a failure leaves is undone in reverse; the cache goes once all of it is (otherwise it
  // stays, and the runtime's DEL finishes the job).
  Status undo(const Status& why) {
    UndoNotes note(h_);
    if (ipam_added_) note(delegateDel(args_, conf_.plugin.ipam_type, h_.ipam_timeout));
    if (in_pod_) note(releaseVf(conf_, args_.if_name, *host_ns_, *pod_ns_));
    if (cached_) note(settings_.reset());
    if (cached_ && note.clean()) (void)files_.removeCache(args_.container_id, args_.if_name);
    (void)files_.deleteAllocation(conf_.device_id);
    return why;
  }

 private:
  // The VF of deviceID: its PF and index, lock, allocation, netdev or DPDK driver; the checks.
  Status loadVf() {
    auto& c = conf_;
    if (c.device_id.empty()) return fail("LoadConf(): VF pci addr is required");
    if (!host::isPciAddress(c.device_id)) {
      return fail("LoadConf(): deviceID " + cni::goQuote(c.device_id) +
                  " is not a PCI address (DDDD:BB:DD.F)");
    }
    VfSysfs vf(*h_.sysfs);
    auto where = vf.locate(c.device_id);
    if (!where.ok()) {
      return fail("LoadConf(): failed to get VF information: " +
                  cni::goQuote(where.status().message()));
    }
    c.master = where->pf;
    c.vf_id = where->index;
    auto lock = files_.lock(c.device_id, h_.lock_timeout);
    if (!lock.ok()) return lock.status();
    lock_.emplace(std::move(*lock));
    auto allocated = files_.allocated(c.device_id);
    if (!allocated.ok()) return allocated.status();
    if (*allocated) return fail("pci address " + c.device_id + " is already allocated");
    current_name_ = vf.linkName(c.device_id);
    c.orig.host_if_name = current_name_;
    if (current_name_.empty()) {
      auto driver = vf.driver(c.device_id);
      if (!driver.ok()) {
        return fail("LoadConf(): failed to detect if VF " + c.device_id + " has dpdk driver " +
                    cni::goQuote(driver.status().message()));
      }
      c.dpdk_mode = host::isUserspaceDriver(*driver);
      if (!c.dpdk_mode) {
        return fail("LoadConf(): the VF " + c.device_id +
                    " does not have a interface name or a dpdk driver");
      }
    }
    return sriovcni::checkNetConf(c);
  }

  const PluginHost& h_;
  const cni::CmdArgs& args_;
  VfFiles files_;
  sriovcni::NetConf conf_;
  SriovPfSettings settings_;
  std::optional<HeldLock> lock_;
  std::optional<host::NetNamespace> pod_ns_, host_ns_;
  std::string current_name_;  // the VF's netdev on the host now
  cni::CniResult result_;
  bool cached_ = false, in_pod_ = false, ipam_added_ = false, announce_ = false;
};

}  // namespace

SriovPlugin::SriovPlugin(PluginHost host) : host_(std::move(host)) {
  if (host_.state_dir.empty()) host_.state_dir = "/var/lib/cni/sriov";
}

Result<std::string> SriovPlugin::add(const cni::CmdArgs& args) {
  Add add(host_, args);
  return runAdd(add);
}

Status SriovPlugin::del(const cni::CmdArgs& args) {
  VfFiles files(host_.state_dir);
  auto conf = readCache(host_, files, args, &sriovcni::decodeCache);
  if (!conf) return Status::ok();
  auto lock = files.lock(conf->device_id, host_.lock_timeout);
  if (!lock.ok()) {
    return fail("cmdDel() error obtaining lock for device [" + conf->device_id +
                "]: " + lock.status().message());
  }
  // A failure keeps the cache: the runtime retries DEL, and the retry finishes the job.
  if (!conf->plugin.ipam_type.empty()) {
    SDRA_RETURN_IF_ERROR(delegateDel(args, conf->plugin.ipam_type, host_.ipam_timeout));
  }
  // A DEL retried after the VF went to another pod (this pod's namespace vanished, the VF was
  // taken back and given again) must not reset it under that pod.
  std::string holder = files.holder(conf->device_id);
  if (!holder.empty() && holder != args.netns && host::NetNamespace::open(holder).ok()) {
    host_.log(delPrefix(args) + "VF " + conf->device_id + " is held by another pod now (" + holder +
              "): left as it is");
    (void)files.removeCache(args.container_id, args.if_name);
    return Status::ok();
  }
  auto finish = [&](const Status& result) {
    if (!result.isOk()) return result;
    (void)files.removeCache(args.container_id, args.if_name);
    if (Status st = files.deleteAllocation(conf->device_id); !st.isOk()) {
      return fail("error cleaning the pci allocation for vf pci address " + conf->device_id + ": " +
                  st.message());
    }
    return Status::ok();
  };
  if (!stillTheVf(host_, args, conf->device_id, conf->master, conf->vf_id)) {
    return finish(Status::ok());
  }
  // Through the PF first: some drivers refuse to reset a netdev VF whose trust is off.
  if (Status st = SriovPfSettings(*host_.netlink, *conf).reset(); !st.isOk()) {
    return fail("cmdDel() error reseting VF: " + cni::goQuote(st.message()));
  }
  // No namespace (the runtime says the pod is gone), a DPDK VF (upstream's caches do not say,
  // its driver does), a namespace that is gone: no netdev to move back.
  bool dpdk = conf->dpdk_mode ||
              host::isUserspaceDriver(VfSysfs(*host_.sysfs).driver(conf->device_id).valueOr(""));
  if (args.netns.empty() || dpdk) return finish(Status::ok());
  auto pod_ns = host::NetNamespace::open(args.netns);
  if (!pod_ns.ok()) {
    if (pod_ns.status().code() == Code::kNotFound) return finish(Status::ok());
    return fail("failed to open netns " + cni::goQuote(args.netns) + ": " +
                pod_ns.status().message());
  }
  auto host_ns = host::NetNamespace::current();
  if (!host_ns.ok()) return fail("failed to get init netns: " + host_ns.status().message());
  Status released = releaseVf(*conf, args.if_name, *host_ns, *pod_ns);
  // Not in the pod but on the host under its name: an ADD stopped before it moved it.
  if (released.code() == Code::kNotFound && host::Netdevs().link(conf->orig.host_if_name).ok()) {
    released = Status::ok();
  }
  if (released.isOk()) fault::point("cni-del");
  return finish(released);
}

}  // namespace sriovdra::cni_plugin
