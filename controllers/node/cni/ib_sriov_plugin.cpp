#include "node/cni/ib_sriov_plugin.h"

#include <cerrno>
#include <optional>
#include <utility>

#include "base/fault_point.h"
#include "base/strings.h"
#include "cni/go_json.h"
#include "cni/result.h"
#include "host/netdev.h"
#include "host/netns.h"
#include "host/pci.h"
#include "host/rdma.h"
#include "node/cni/commands.h"
#include "node/cni/ipam.h"
#include "node/cni/pf_settings.h"
#include "node/cni/pod_netdev.h"
#include "node/cni/vf_files.h"
#include "node/cni/vf_sysfs.h"
#include "sriovcni/ib_netconf.h"

namespace sriovdra::cni_plugin {
namespace {

constexpr const char* kAllOnesGuid = "ff:ff:ff:ff:ff:ff:ff:ff";

// The VF's settings through its PF (link state, node and port GUID) and its host name, for the
// configuration `conf` (its master, vf_id, device_id, host_if_name and host_if_guid).
class IbVf {
 public:
  IbVf(const PluginHost& h, const sriovcni::IbNetConf& conf) : h_(h), conf_(conf) {}

  // Upstream's ApplyVFConfig: the link state, then the GUID (a valid one, checked before), or the
  // VF's own GUID checked.
  Status apply(const std::string& guid) {
    if (!conf_.link_state.empty()) {
      SDRA_RETURN_IF_ERROR(setLinkState(*h_.netlink, conf_.master, conf_.vf_id,
                                        sriovcni::linkStateNumber(conf_.link_state)));
    }
    if (!guid.empty()) return setGuid(guid);
    if (conf_.vfio_pci_mode) return Status::ok();
    std::string current = VfSysfs(*h_.sysfs).ipoibGuid(conf_.host_if_name);
    if (current.empty() || sriovcni::isAllZeroGuid(current) || sriovcni::isAllOnesGuid(current)) {
      return fail("VF " + conf_.host_if_name + " GUID is not valid");
    }
    return Status::ok();
  }

  // Upstream's ResetVFConfig: the link state back to auto, the GUID back to the one before ADD
  // (all-F for none), the netdev's host name back. What the PF reports at that value already is
  // left alone (as SriovPfSettings::reset).
  Status reset() {
    std::optional<host::VfInfo> now;
    if (auto vfs = h_.netlink->vfs(conf_.master); vfs.ok()) {
      for (const auto& v : *vfs) {
        if (v.vf == conf_.vf_id) now = v;
      }
    }
    if (!conf_.link_state.empty() && (!now || now->link_state != 0)) {
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
      auto value = host::parseGuid(guid);
      if (!now || !value.ok() || now->node_guid != *value || now->port_guid != *value) {
        SDRA_RETURN_IF_ERROR(setGuid(guid));
      }
    }
    return conf_.vfio_pci_mode ? Status::ok() : restoreName();
  }

 private:
  // Both GUIDs of the VF through its PF and, outside vfio mode, a rebind so its driver reads them.
  Status setGuid(const std::string& guid) {
    auto value = host::parseGuid(guid);
    if (!value.ok()) return fail("failed to parse guid " + guid + ": " + value.status().message());
    if (Status st =
            h_.netlink->setVfGuids(conf_.master, static_cast<int32_t>(conf_.vf_id), *value, *value);
        !st.isOk()) {
      return fail("failed to add node guid " + asciiLower(guid) + ": " + st.message());
    }
    if (conf_.vfio_pci_mode) return Status::ok();
    return VfSysfs(*h_.sysfs).rebind(conf_.device_id);
  }

  // After a rebind the netdev comes back under the kernel's name: its host name again.
  Status restoreName() {
    std::string now = VfSysfs(*h_.sysfs).linkName(conf_.device_id);
    if (now.empty() || now == conf_.host_if_name) return Status::ok();
    host::Netdevs nd;
    auto link = nd.link(now);
    if (!link.ok()) {
      return fail("restoreVFName error: failed to get link for " + now + ", " +
                  link.status().message());
    }
    if (Status st = nd.rename(link->index, conf_.host_if_name); !st.isOk()) {
      return fail("restoreVFName error: failed to rename link " + now + " to host name " +
                  conf_.host_if_name + ", " + st.message());
    }
    return Status::ok();
  }

  const PluginHost& h_;
  const sriovcni::IbNetConf& conf_;
};

// Upstream's SetupVF: down, a temporary name (vfdev<ifindex>) in the host's namespace, into the
// pod's, renamed CNI_IFNAME there and up. `in_pod`: whether the netdev reached the pod.
Status setupVf(const PluginHost& h, const sriovcni::IbNetConf& conf, const std::string& if_name,
               const host::NetNamespace& pod_ns, bool& in_pod) {
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
  return Status::ok();
}

// Upstream's ReleaseVF: the pod's interface back on the host under its name. kNotFound (nothing
// of that name in the pod) is success when the VF's netdev is on the host already: an ADD
// stopped before it moved it.
Status releaseVf(const PluginHost& h, const sriovcni::IbNetConf& conf, const std::string& if_name,
                 const host::NetNamespace& host_ns, const host::NetNamespace& pod_ns) {
  Status released = releaseToHost(pod_ns, host_ns, if_name, conf.host_if_name, conf.device_id);
  if (released.code() == Code::kNotFound && !VfSysfs(*h.sysfs).linkName(conf.device_id).empty()) {
    return Status::ok();
  }
  return released;
}

// A plugin built without the RDMA subsystem (PluginHost::rdma) cannot honour rdmaIsolation.
Status noRdma() { return fail("rdmaIsolation: this plugin was built without the RDMA subsystem"); }

// Upstream's EnsureRdmaSystemMode: rdmaIsolation needs the RDMA subsystem in exclusive mode.
Status ensureRdmaExclusive(const PluginHost& h) {
  if (h.rdma == nullptr) return noRdma();
  auto mode = h.rdma->netnsMode();
  if (!mode.ok()) {
    return fail("failed to get RDMA subsystem namespace awareness mode. " +
                mode.status().message());
  }
  if (*mode != "exclusive") {
    return fail("RDMA subsystem namespace awareness mode is set to " + *mode +
                ", expecting it to be set to exclusive, invalid system configurations");
  }
  return Status::ok();
}

// Upstream's MoveRdmaDevFromNs: from inside the pod's namespace, the VF's RDMA device back into
// the host's. A device the pod does not see (ENODEV) was never moved in, or went back when a
// namespace ended: nothing to do.
Status rdmaToHost(const PluginHost& h, const sriovcni::IbNetConf& conf,
                  const host::NetNamespace& pod_ns, const host::NetNamespace& host_ns) {
  const std::string& device = conf.rdma_net_state.container_rdma_dev_name;
  if (!conf.rdma_isolation || device.empty()) return Status::ok();
  if (h.rdma == nullptr) return noRdma();
  Status moved = pod_ns.run([&] { return h.rdma->moveDevice(device, host_ns); });
  if (moved.isOk() || moved.sysErrno() == ENODEV) return Status::ok();
  return fail("failed to restore RDMA device " + device + " to default namespace. " +
              moved.message());
}

// One ADD, step by step (IbSriovPlugin::add runs them in order, and undo() on a failure).
class Add {
 public:
  Add(const PluginHost& h, const cni::CmdArgs& args)
      : h_(h), args_(args), files_(h.state_dir), vf_(h, conf_) {}

  // LoadConf and the checks before anything changes: the mode, the device and whether it is a
  // VF, its PF and index, its netdev, the GUID, the namespaces, the node's lock.
  Status load() {
    auto decoded = sriovcni::decodeIbNetConf(args_.stdin_data);
    if (!decoded.ok()) {
      return fail("infiniBand SRI-OV CNI failed to load netconf: " + decoded.status().message());
    }
    conf_ = std::move(*decoded);
    auto app = conf_.args_cni.find("mellanox.infiniband.app");
    if (conf_.ib_kubernetes_enabled &&
        (app == conf_.args_cni.end() || app->second != "configured")) {
      return fail(
          "infiniBand SRIOV-CNI failed, InfiniBand status \"mellanox.infiniband.app\" is not "
          "\"configured\" please check mellanox ib-kubernetes");
    }
    if (conf_.rdma_isolation) SDRA_RETURN_IF_ERROR(ensureRdmaExclusive(h_));
    if (conf_.device_id.empty()) return fail("deviceID is required");
    if (!host::isPciAddress(conf_.device_id)) {
      return fail("deviceID " + cni::goQuote(conf_.device_id) +
                  " is not a PCI address (DDDD:BB:DD.F)");
    }
    VfSysfs sysfs(*h_.sysfs);
    auto driver = sysfs.driver(conf_.device_id);
    if (!driver.ok() && driver.status().code() != Code::kNotFound) {
      return fail("failed to check vfio-pci driver binding for device " + conf_.device_id + ": " +
                  driver.status().message());
    }
    bool vfio = driver.ok() && *driver == "vfio-pci";
    if (conf_.vfio_pci_mode && !vfio) {
      return fail("vfioPciMode is enabled but device " + conf_.device_id +
                  " is not bound to vfio-pci driver");
    }
    conf_.vfio_pci_mode = vfio;
    is_vf_ = sysfs.isVf(conf_.device_id);
    guid_ = sriovcni::guidOf(conf_);
    if (conf_.ib_kubernetes_enabled && is_vf_ && guid_.empty()) {
      return fail(
          "infiniband SRIOV-CNI failed, Unexpected error. GUID must be provided by ib-kubernetes");
    }
    if (is_vf_) SDRA_RETURN_IF_ERROR(loadVf(sysfs));
    auto pod = host::NetNamespace::open(args_.netns);
    if (!pod.ok()) {
      return fail("failed to open netns " + cni::goQuote(args_.netns) + ": " +
                  pod.status().message());
    }
    pod_ns_.emplace(std::move(*pod));
    auto host = host::NetNamespace::current();
    if (!host.ok()) return fail("failed to get current NS: " + host.status().message());
    host_ns_.emplace(std::move(*host));
    SDRA_RETURN_IF_ERROR(relock());
    if (!is_vf_ && !conf_.vfio_pci_mode) {
      return fail("PF device " + conf_.device_id + " requires vfioPciMode to be enabled");
    }
    // Before the VF changes at all: the pod's own interface of that name is never touched.
    if (movesNetdev()) return nameFreeInPod(*pod_ns_, args_.if_name);
    return Status::ok();
  }

  // The GUID before ADD, then the cache with it: from here a killed ADD's DEL restores the VF.
  Status recordOriginal() {
    if (is_vf_ && !guid_.empty()) {
      if (!sriovcni::isValidGuid(guid_) || sriovcni::isAllZeroGuid(guid_)) {
        return fail("infiniBand SRI-OV CNI failed to configure VF " +
                    cni::goQuote("invalid guid " + guid_));
      }
      conf_.host_if_guid =
          conf_.vfio_pci_mode ? kAllOnesGuid : VfSysfs(*h_.sysfs).ipoibGuid(conf_.host_if_name);
    }
    SDRA_RETURN_IF_ERROR(saveCache());
    cached_ = true;
    return Status::ok();
  }

  // ApplyVFConfig, then (rdmaIsolation) the RDMA device and the netdev into the pod, in that
  // order: Linux recreates the IPoIB netdev when its RDMA device moves. The node's lock is let go
  // after (IPAM may take long).
  Status configure() {
    result_.interfaces.push_back({.name = args_.if_name, .sandbox = args_.netns});
    if (!is_vf_) return Status::ok();
    if (Status st = vf_.apply(guid_); !st.isOk()) {
      return fail("infiniBand SRI-OV CNI failed to configure VF " + cni::goQuote(st.message()));
    }
    if (movesNetdev() && conf_.rdma_isolation) SDRA_RETURN_IF_ERROR(rdmaToPod());
    if (movesNetdev()) {
      if (Status st = setupVf(h_, conf_, args_.if_name, *pod_ns_, in_pod_); !st.isOk()) {
        return fail("failed to set up pod interface " + cni::goQuote(args_.if_name) +
                    " from the device " + cni::goQuote(conf_.device_id) + ": " + st.message());
      }
      conf_.cont_if_name = args_.if_name;
    }
    lock_.reset();
    return Status::ok();
  }

  // The IPAM plugin's addresses and routes on the interface (a VF's netdev only).
  Status addresses() {
    const std::string& type = conf_.plugin.ipam_type;
    if (type.empty() || !movesNetdev()) return Status::ok();
    if (type == "dhcp") return fail("ipam type dhcp is not supported");
    return ipamAdd(h_, args_, type, conf_.device_id, &*pod_ns_, result_, ipam_added_);
  }

  // The result in the version the skeleton checked, and the cache with what ADD did.
  Result<std::string> commit() {
    auto text = result_.encode(args_.cni_version);
    if (!text.ok()) return fail(text.status().message());
    SDRA_RETURN_IF_ERROR(saveCache());
    return *text;
  }

  // What a failure leaves is undone in reverse, the VF under the node's lock again; the cache
  // goes once all of it is (otherwise it stays, and the runtime's DEL finishes the job).
  Status undo(const Status& why) {
    UndoNotes note(h_);
    if (ipam_added_) note(delegateDel(args_, conf_.plugin.ipam_type, h_.ipam_timeout));
    if (in_pod_) note(releaseVf(h_, conf_, args_.if_name, *host_ns_, *pod_ns_));
    if (cached_ && is_vf_) {
      Status locked = lock_ ? Status::ok() : relock();
      note(locked);
      if (locked.isOk()) {
        note(rdmaToHost(h_, conf_, *pod_ns_, *host_ns_));
        note(vf_.reset());
      }
    }
    if (cached_ && note.clean()) (void)files_.removeCache(args_.container_id, args_.if_name);
    return why;
  }

 private:
  // The VF's PF and index and, outside vfio mode, its netdev (wrapped in upstream's words).
  Status loadVf(const VfSysfs& sysfs) {
    auto where = sysfs.locate(conf_.device_id);
    if (!where.ok()) {
      return fail(
          "failed to get VF device information: load config: failed to get VF information: " +
          cni::goQuote(where.status().message()));
    }
    conf_.master = where->pf;
    conf_.vf_id = where->index;
    if (conf_.vfio_pci_mode) return Status::ok();
    conf_.host_if_name = sysfs.linkName(conf_.device_id);
    if (conf_.host_if_name.empty()) {
      return fail("failed to get VF device information: load config: failed to detect VF " +
                  conf_.device_id + " name with error, " + cni::goQuote("no netdev"));
    }
    return Status::ok();
  }

  // Upstream's MoveRdmaDevToNsPci: the VF's only RDMA device into the pod's namespace, written to
  // the cache first, so that a DEL after a killed ADD brings it back.
  Status rdmaToPod() {
    auto devices = host::rdmaDevicesOf(*h_.sysfs, conf_.device_id);
    if (devices.empty()) {
      return fail("failed to get RDMA devices for PCI device: " + conf_.device_id +
                  ". No RDMA devices found");
    }
    if (devices.size() != 1) {
      return fail("discovered more than one RDMA device [" + join(devices, " ") +
                  "] for PCI device " + conf_.device_id + ". Unsupported state");
    }
    conf_.rdma_net_state = {.device_id = conf_.device_id,
                            .sandbox_rdma_dev_name = devices[0],
                            .container_rdma_dev_name = devices[0]};
    SDRA_RETURN_IF_ERROR(saveCache());
    if (Status st = h_.rdma->moveDevice(devices[0], *pod_ns_); !st.isOk()) {
      return fail("failed to move RDMA device " + devices[0] + " to namespace. " + st.message());
    }
    return Status::ok();
  }

  // Rebinds rename RDMA devices: the VF changes of all ADDs and DELs of the node one at a time.
  Status relock() {
    auto held = lockFile(h_.state_dir + "/cni.lock", h_.lock_timeout);
    if (!held.ok()) return fail(held.status().message());
    lock_.emplace(std::move(*held));
    return Status::ok();
  }

  Status saveCache() {
    Status st = files_.saveCache(args_.container_id, args_.if_name, sriovcni::encodeIbCache(conf_));
    return st.isOk() ? st : fail("error saving NetConf: " + st.message());
  }

  bool movesNetdev() const { return is_vf_ && !conf_.vfio_pci_mode; }

  const PluginHost& h_;
  const cni::CmdArgs& args_;
  VfFiles files_;
  sriovcni::IbNetConf conf_;
  IbVf vf_;
  std::optional<HeldLock> lock_;
  std::optional<host::NetNamespace> pod_ns_, host_ns_;
  std::string guid_;  // the GUID to set, "" for none
  cni::CniResult result_;
  bool is_vf_ = false, cached_ = false, in_pod_ = false, ipam_added_ = false;
};

}  // namespace

IbSriovPlugin::IbSriovPlugin(PluginHost host) : host_(std::move(host)) {
  if (host_.state_dir.empty()) host_.state_dir = "/var/lib/cni/ib-sriov";
}

Result<std::string> IbSriovPlugin::add(const cni::CmdArgs& args) {
  Add add(host_, args);
  return runAdd(add);
}

Status IbSriovPlugin::del(const cni::CmdArgs& args) {
  VfFiles files(host_.state_dir);
  auto conf = readCache(host_, files, args, &sriovcni::decodeIbCache);
  if (!conf) return Status::ok();
  // A failure keeps the cache: the runtime retries DEL, and the retry finishes the job.
  if (!conf->plugin.ipam_type.empty() && !conf->vfio_pci_mode) {
    if (conf->plugin.ipam_type == "dhcp") return fail("ipam type dhcp is not supported");
    SDRA_RETURN_IF_ERROR(delegateDel(args, conf->plugin.ipam_type, host_.ipam_timeout));
  }
  auto done = [&] {
    (void)files.removeCache(args.container_id, args.if_name);
    return Status::ok();
  };
  if (!VfSysfs(*host_.sysfs).isVf(conf->device_id) ||
      !stillTheVf(host_, args, conf->device_id, conf->master, conf->vf_id)) {
    return done();
  }
  auto lock = lockFile(host_.state_dir + "/cni.lock", host_.lock_timeout);
  if (!lock.ok()) return fail(lock.status().message());
  // No namespace (the runtime says the pod is gone) or one that is gone: the netdev is back on
  // the host under the pod's name (the reset below gives it its own), and Linux has sent the
  // RDMA device (rdmaIsolation) back with it.
  if (!args.netns.empty() && !conf->vfio_pci_mode) {
    auto pod_ns = host::NetNamespace::open(args.netns);
    if (pod_ns.ok()) {
      auto host_ns = host::NetNamespace::current();
      if (!host_ns.ok()) return fail("failed to get init netns: " + host_ns.status().message());
      SDRA_RETURN_IF_ERROR(releaseVf(host_, *conf, args.if_name, *host_ns, *pod_ns));
      SDRA_RETURN_IF_ERROR(rdmaToHost(host_, *conf, *pod_ns, *host_ns));
    } else if (pod_ns.status().code() != Code::kNotFound) {
      return fail("failed to open netns " + args.netns + ": " +
                  cni::goQuote(pod_ns.status().message()));
    }
  }
  if (Status st = IbVf(host_, *conf).reset(); !st.isOk()) {
    return fail("cmdDel() error resetting VF: " + st.message());
  }
  fault::point("cni-del");
  return done();
}

}  // namespace sriovdra::cni_plugin
