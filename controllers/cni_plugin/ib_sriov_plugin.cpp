#include "cni_plugin/ib_sriov_plugin.h"

#include <optional>

#include "base/strings.h"
#include "cni/go_json.h"
#include "cni/result.h"
#include "cni_plugin/ipam.h"
#include "cni_plugin/pod_netdev.h"
#include "cni_plugin/vf_files.h"
#include "cni_plugin/vf_sysfs.h"
#include "host/netdev.h"
#include "host/netns.h"
#include "sriovcni/ib_netconf.h"

namespace sriovdra::cni_plugin {
namespace {

constexpr const char* kAllOnesGuid = "ff:ff:ff:ff:ff:ff:ff:ff";

// The GUID in an IPoIB netdev's 20-byte address (its last 8 bytes), as sysfs shows the address.
std::string guidOfNetdev(const host::Sysfs& fs, const std::string& netdev) {
  std::string address = fs.read("sys/class/net/" + netdev + "/address").valueOr("");
  return address.size() == 59 ? address.substr(36) : "";
}

class IbVf {
 public:
  IbVf(const PluginHost& h, sriovcni::IbNetConf& conf) : h_(h), conf_(conf) {}

  // Sets both GUIDs of the VF through its PF and, outside vfio mode, rebinds it.
  Status setGuid(const std::string& guid) {
    auto value = host::parseGuid(guid);
    if (!value.ok()) return fail("failed to parse guid " + guid + ": " + value.status().message());
    if (Status st =
            h_.netlink->setVfGuids(conf_.master, static_cast<int32_t>(conf_.vf_id), *value, *value);
        !st.isOk()) {
      return fail("failed to add node guid " + asciiLower(guid) + ": " + st.message());
    }
    if (!conf_.vfio_pci_mode) return VfSysfs(*h_.sysfs).rebind(*h_.sysfs, conf_.device_id);
    return Status::ok();
  }

  Status apply(const std::string& guid) {
    if (!conf_.link_state.empty()) {
      uint32_t state = conf_.link_state == "enable" ? 1 : conf_.link_state == "disable" ? 2 : 0;
      host::VfSetting s{.kind = host::VfSetting::Kind::kLinkState,
                        .vf = static_cast<int32_t>(conf_.vf_id),
                        .link_state = state};
      if (Status st = h_.netlink->setVf(conf_.master, s); !st.isOk()) {
        return fail("failed to set vf " + std::to_string(conf_.vf_id) + " link state to " +
                    std::to_string(state) + ": " + st.message());
      }
      link_state_set_ = true;
    }
    if (!guid.empty()) {
      if (!sriovcni::isValidGuid(guid)) return fail("invalid guid " + guid);
      conf_.host_if_guid =
          conf_.vfio_pci_mode ? kAllOnesGuid : guidOfNetdev(*h_.sysfs, conf_.host_if_names);
      return setGuid(guid);
    }
    if (!conf_.vfio_pci_mode) {
      std::string current = guidOfNetdev(*h_.sysfs, conf_.host_if_names);
      if (current.empty() || sriovcni::isAllZeroGuid(current) || sriovcni::isAllOnesGuid(current)) {
        return fail("VF " + conf_.host_if_names + " GUID is not valid");
      }
    }
    return Status::ok();
  }

  // The link state back to auto, the GUID back to the one before ADD (all-F for none), the
  // netdev's host name back.
  Status reset() {
    if (!conf_.link_state.empty() || link_state_set_) {
      host::VfSetting s{.kind = host::VfSetting::Kind::kLinkState,
                        .vf = static_cast<int32_t>(conf_.vf_id)};
      if (Status st = h_.netlink->setVf(conf_.master, s); !st.isOk()) {
        return fail("failed to set link state to auto for vf " + std::to_string(conf_.vf_id) +
                    ": " + st.message());
      }
    }
    if (!conf_.host_if_guid.empty()) {
      std::string guid =
          sriovcni::isAllZeroGuid(conf_.host_if_guid) ? kAllOnesGuid : conf_.host_if_guid;
      SDRA_RETURN_IF_ERROR(setGuid(guid));
    }
    return conf_.vfio_pci_mode ? Status::ok() : restoreName();
  }

  // After a rebind the netdev comes back under the kernel's name: give it its host name again.
  Status restoreName() {
    std::string now = VfSysfs(*h_.sysfs).linkName(conf_.device_id);
    if (now.empty() || now == conf_.host_if_names) return Status::ok();
    host::Netdevs nd;
    auto link = nd.link(now);
    if (!link.ok()) {
      return fail("restoreVFName error: failed to get link for " + now + ", " +
                  link.status().message());
    }
    if (Status st = nd.rename(link->index, conf_.host_if_names); !st.isOk()) {
      return fail("restoreVFName error: failed to rename link " + now + " to host name " +
                  conf_.host_if_names + ", " + st.message());
    }
    return Status::ok();
  }

 private:
  const PluginHost& h_;
  sriovcni::IbNetConf& conf_;
  bool link_state_set_ = false;
};

// Upstream's SetupVF: down, a temporary name (vfdev<index>) in the host's namespace, into the
// pod's, renamed to CNI_IFNAME there and up. `in_pod`: whether the netdev reached the pod.
Status setupVf(const PluginHost& h, sriovcni::IbNetConf& conf, const std::string& if_name,
               const host::NetNamespace& pod_ns, bool& in_pod) {
  SDRA_RETURN_IF_ERROR(nameFreeInPod(pod_ns, if_name));
  std::string name = VfSysfs(*h.sysfs).linkName(conf.device_id);
  if (name.empty()) {
    return fail("failed to get VF " + conf.device_id + " name after rebind with error, " +
                cni::goQuote("no netdev"));
  }
  host::Netdevs nd;
  auto link = nd.link(name);
  if (!link.ok()) return fail("error getting VF netdevice with name " + name);
  std::string temp = "vfdev" + std::to_string(link->index);
  if (Status st = nd.setUp(link->index, false); !st.isOk()) {
    return fail("failed to down vf device " + cni::goQuote(name) + ": " + st.message());
  }
  if (Status st = nd.rename(link->index, temp); !st.isOk()) {
    return fail("error setting temp IF name " + temp + " for " + name);
  }
  for (const auto& alt : link->alt_names) {
    if (alt != name) continue;
    if (Status st = nd.deleteAltName(link->index, alt); !st.isOk()) {
      return fail("error removing VF altname " + name + ": " + st.message());
    }
  }
  if (Status st = nd.moveTo(link->index, pod_ns); !st.isOk()) {
    (void)nd.rename(link->index, name);
    return fail("failed to move IF " + temp + " to netns: " + cni::goQuote(st.message()));
  }
  in_pod = true;
  Status inside = pod_ns.run([&]() -> Status {
    auto moved = nd.link(temp);
    if (!moved.ok()) return fail("error getting VF netdevice with name " + temp);
    if (Status st = nd.rename(moved->index, if_name); !st.isOk()) {
      return fail("error setting container interface name " + name + " for " + temp);
    }
    if (Status st = nd.setUp(moved->index, true); !st.isOk()) {
      return fail("error bringing interface up in container ns: " + cni::goQuote(st.message()));
    }
    return Status::ok();
  });
  if (!inside.isOk()) {
    return fail("error setting up interface in container namespace: " +
                cni::goQuote(inside.message()));
  }
  conf.cont_if_names = if_name;
  return Status::ok();
}

// Upstream's ReleaseVF: the pod's interface back on the host under its name.
Status releaseVf(const sriovcni::IbNetConf& conf, const std::string& if_name,
                 const host::NetNamespace& host_ns, const host::NetNamespace& pod_ns) {
  return releaseToHost(pod_ns, host_ns, if_name, conf.host_if_names, conf.device_id);
}

}  // namespace

Result<std::string> IbSriovPlugin::add(const cni::CmdArgs& args) {
  auto decoded = sriovcni::decodeIbNetConf(args.stdin_data);
  if (!decoded.ok()) {
    return fail("infiniBand SRI-OV CNI failed to load netconf: " + decoded.status().message());
  }
  auto& conf = *decoded;
  auto app = conf.args_cni.find("mellanox.infiniband.app");
  if (conf.ib_kubernetes_enabled && (app == conf.args_cni.end() || app->second != "configured")) {
    return fail(
        "infiniBand SRIOV-CNI failed, InfiniBand status \"mellanox.infiniband.app\" is not "
        "\"configured\" please check mellanox ib-kubernetes");
  }
  if (conf.rdma_isolation) {
    return fail(
        "rdmaIsolation is not supported by this ib-sriov plugin: it cannot move the VF's RDMA "
        "device into the pod's network namespace yet; remove rdmaIsolation from the "
        "NetworkAttachmentDefinition (the RDMA device stays shared)");
  }
  if (conf.device_id.empty()) return fail("deviceID is required");
  if (!isPciAddress(conf.device_id)) {
    return fail("deviceID " + cni::goQuote(conf.device_id) +
                " is not a PCI address (DDDD:BB:DD.F, lower-case hex)");
  }
  VfSysfs sysfs(*host_.sysfs);
  auto driver = sysfs.driver(conf.device_id);
  bool vfio = driver.ok() && *driver == "vfio-pci";
  if (!driver.ok() && driver.status().code() != Code::kNotFound) {
    return fail("failed to check vfio-pci driver binding for device " + conf.device_id + ": " +
                driver.status().message());
  }
  if (conf.vfio_pci_mode && !vfio) {
    return fail("vfioPciMode is enabled but device " + conf.device_id +
                " is not bound to vfio-pci driver");
  }
  conf.vfio_pci_mode = vfio;
  bool is_vf = sysfs.isVf(conf.device_id);
  std::string guid = sriovcni::guidOf(conf);
  if (conf.ib_kubernetes_enabled && is_vf && guid.empty()) {
    return fail(
        "infiniband SRIOV-CNI failed, Unexpected error. GUID must be provided by ib-kubernetes");
  }
  if (is_vf) {
    auto pf = sysfs.pfName(conf.device_id);
    auto id = pf.ok() ? sysfs.vfId(conf.device_id, *pf) : Result<int64_t>(pf.status());
    if (!id.ok()) {
      return fail(
          "failed to get VF device information: load config: failed to get VF "
          "information: " +
          cni::goQuote(id.status().message()));
    }
    conf.master = *pf;
    conf.vf_id = *id;
    if (!conf.vfio_pci_mode) {
      conf.host_if_names = sysfs.linkName(conf.device_id);
      if (conf.host_if_names.empty()) {
        return fail("failed to get VF device information: load config: failed to detect VF " +
                    conf.device_id + " name with error, " + cni::goQuote("no netdev"));
      }
    }
  }
  auto pod_ns = host::NetNamespace::open(args.netns);
  if (!pod_ns.ok()) {
    return fail("failed to open netns " + cni::goQuote(args.netns) + ": " +
                pod_ns.status().message());
  }
  auto host_ns = host::NetNamespace::current();
  if (!host_ns.ok()) return fail("failed to get current NS: " + host_ns.status().message());
  // Rebinds rename RDMA devices: the VF changes of all ADDs and DELs of the node one at a time
  // (the lock is let go before IPAM, which may take long).
  std::optional<HeldLock> lock;
  if (auto held = lockFile(host_.state_dir + "/cni.lock", host_.lock_timeout); held.ok()) {
    lock.emplace(std::move(*held));
  } else {
    return fail(held.status().message());
  }
  VfFiles files(host_.state_dir);

  cni::CniResult result;
  result.interfaces.push_back({.name = args.if_name, .sandbox = args.netns});
  if (!is_vf) {
    if (!conf.vfio_pci_mode) {
      return fail("PF device " + conf.device_id + " requires vfioPciMode to be enabled");
    }
  } else {
    IbVf vf(host_, conf);
    bool moved = false;
    std::optional<std::string> ipam_added;
    auto undo = [&](const Status& why) -> Status {
      if (ipam_added) (void)delegateDel(args, *ipam_added, host_.ipam_timeout);
      if (moved) (void)releaseVf(conf, args.if_name, *host_ns, *pod_ns);
      if (Status st = vf.reset(); !st.isOk()) host_.log("undoing a failed ADD: " + st.message());
      return why;
    };
    if (Status st = vf.apply(guid); !st.isOk()) {
      return undo(
          fail("infiniBand SRI-OV CNI failed to configure VF " + cni::goQuote(st.message())));
    }
    if (!conf.vfio_pci_mode) {
      Status st = setupVf(host_, conf, args.if_name, *pod_ns, moved);
      if (!st.isOk()) {
        return undo(fail("failed to set up pod interface " + cni::goQuote(args.if_name) +
                         " from the device " + cni::goQuote(conf.device_id) + ": " + st.message()));
      }
      lock.reset();
      if (!conf.plugin.ipam_type.empty()) {
        if (conf.plugin.ipam_type == "dhcp") return undo(fail("ipam type dhcp is not supported"));
        auto ipam = delegateAdd(args, conf.plugin.ipam_type, host_.ipam_timeout);
        if (!ipam.ok()) {
          return undo(fail("failed to set up IPAM plugin type " +
                           cni::goQuote(conf.plugin.ipam_type) + " from the device " +
                           cni::goQuote(conf.device_id) + ": " + ipam.status().message()));
        }
        ipam_added = conf.plugin.ipam_type;
        if (ipam->ips.empty()) return undo(fail("IPAM plugin returned missing IP config"));
        ipam->interfaces = result.interfaces;
        for (auto& ip : ipam->ips) ip.interface = 0;
        host::Netdevs nd;
        Status configured =
            pod_ns->run([&] { return configureInterface(nd, args.if_name, *ipam); });
        if (!configured.isOk()) return undo(fail(configured.message()));
        result = std::move(*ipam);
      }
    }
    // In the version the skeleton checked (the configuration's, read as Go reads it).
    auto text = result.encode(args.cni_version);
    if (!text.ok()) return undo(fail(text.status().message()));
    if (Status st = files.saveCache(args.container_id, args.if_name, sriovcni::encodeIbCache(conf));
        !st.isOk()) {
      return undo(fail("error saving NetConf: " + st.message()));
    }
    return *text;
  }
  auto text = result.encode(args.cni_version);
  if (!text.ok()) return fail(text.status().message());
  if (Status st = files.saveCache(args.container_id, args.if_name, sriovcni::encodeIbCache(conf));
      !st.isOk()) {
    return fail("error saving NetConf: " + st.message());
  }
  return *text;
}

Status IbSriovPlugin::del(const cni::CmdArgs& args) {
  if (args.netns.empty()) return Status::ok();
  VfFiles files(host_.state_dir);
  auto cached = files.readCache(args.container_id, args.if_name);
  auto conf =
      cached.ok() ? sriovcni::decodeIbCache(*cached) : Result<sriovcni::IbNetConf>(cached.status());
  if (!conf.ok()) {
    host_.log("DEL of " + args.container_id + "/" + args.if_name + ": no usable cache (" +
              conf.status().message() + "): nothing to do");
    return Status::ok();
  }
  if (!conf->plugin.ipam_type.empty() && !conf->vfio_pci_mode) {
    if (conf->plugin.ipam_type == "dhcp") return fail("ipam type dhcp is not supported");
    SDRA_RETURN_IF_ERROR(delegateDel(args, conf->plugin.ipam_type, host_.ipam_timeout));
  }
  VfSysfs sysfs(*host_.sysfs);
  if (!isPciAddress(conf->device_id) || !sysfs.isVf(conf->device_id)) {
    (void)files.removeCache(args.container_id, args.if_name);
    return Status::ok();
  }
  // The cache's PF and index must still be the VF's: after VFs were made again they may name
  // another VF (another pod's).
  auto pf = sysfs.pfName(conf->device_id);
  auto id = pf.ok() ? sysfs.vfId(conf->device_id, *pf) : Result<int64_t>(pf.status());
  if (!id.ok() || *pf != conf->master || *id != conf->vf_id) {
    host_.log("DEL of " + args.container_id + "/" + args.if_name + ": VF " + conf->device_id +
              " is not the one the cache names (" +
              (id.ok() ? "PF " + *pf + " index " + std::to_string(*id) : id.status().message()) +
              "): nothing to reset");
    (void)files.removeCache(args.container_id, args.if_name);
    return Status::ok();
  }
  auto lock = lockFile(host_.state_dir + "/cni.lock", host_.lock_timeout);
  if (!lock.ok()) return fail(lock.status().message());
  IbVf vf(host_, *conf);
  auto pod_ns = host::NetNamespace::open(args.netns);
  if (pod_ns.ok() && !conf->vfio_pci_mode) {
    auto host_ns = host::NetNamespace::current();
    if (!host_ns.ok()) return fail("failed to get init netns: " + host_ns.status().message());
    Status released = releaseVf(*conf, args.if_name, *host_ns, *pod_ns);
    // Not in the pod and on the host under its name: an ADD stopped before it moved it.
    bool on_host =
        released.code() == Code::kNotFound && host::Netdevs().link(conf->host_if_names).ok();
    if (!released.isOk() && !on_host) return released;
  } else if (!pod_ns.ok() && pod_ns.status().code() != Code::kNotFound) {
    return fail("failed to open netns " + args.netns + ": " +
                cni::goQuote(pod_ns.status().message()));
  }
  // With the pod gone, the netdev came back to the host under the pod's name: reset it all the
  // same.
  if (Status st = vf.reset(); !st.isOk()) {
    return fail("cmdDel() error resetting VF: " + st.message());
  }
  (void)files.removeCache(args.container_id, args.if_name);
  return Status::ok();
}

}  // namespace sriovdra::cni_plugin
