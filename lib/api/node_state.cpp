#include "api/node_state.h"

#include "api/vf_range.h"

namespace sriovdra::api {

const VfGroup* Interface::groupOf(int64_t vf_id) const {
  if (vf_id >= num_vfs) return nullptr;
  for (const auto& g : vf_groups) {
    auto range = parseVfRange(g.vf_range);
    if (range.ok() && range->contains(vf_id)) return &g;
  }
  return nullptr;
}

SriovNodeStateSpec SriovNodeStateSpec::decode(const Reader& r) {
  SriovNodeStateSpec s;
  for (const auto& i : r.array("interfaces")) {
    Interface itf;
    itf.pci_address = i.str("pciAddress");
    itf.name = i.str("name");
    itf.num_vfs = i.i64("numVfs");
    itf.mtu = i.i64("mtu");
    itf.link_type = i.str("linkType");
    itf.eswitch_mode = i.str("eSwitchMode");
    itf.externally_managed = i.boolean("externallyManaged");
    for (const auto& g : i.array("vfGroups")) {
      itf.vf_groups.push_back({g.str("resourceName"), g.str("deviceType"), g.str("vfRange"),
                               g.str("policyName"), g.i64("mtu"), g.boolean("isRdma"),
                               g.str("vdpaType"), g.boolean("needVhostNet")});
    }
    s.interfaces.push_back(std::move(itf));
  }
  for (const auto& d : r.array("devices")) {
    s.devices.push_back({d.str("name"), d.str("pciAddress"), decodeAttributes(d, "attributes"),
                         d.boolean("excludeTopology"), d.strings("drivers"), d.boolean("noRdma")});
  }
  s.rdma_mode = r.object("system").str("rdmaMode");
  return s;
}

void SriovNodeStateSpec::encode(Writer w) const {
  auto& a = w.allocator();
  // interfaces is always written, [] included: when a server-side apply empties every field of
  // an object, the API server stores that object as null (kubernetes/kubernetes#135841), which
  // the schema of spec rejects.
  w.value("interfaces", encodeList(interfaces, a, [&](const Interface& i, Writer o) {
            o.strAlways("pciAddress", i.pci_address)
                .str("name", i.name)
                .i64("numVfs", i.num_vfs)
                .optI64("mtu", i.mtu > 0 ? std::optional<int64_t>(i.mtu) : std::nullopt)
                .str("linkType", i.link_type)
                .str("eSwitchMode", i.eswitch_mode)
                .trueOnly("externallyManaged", i.externally_managed);
            o.nonEmpty("vfGroups", encodeList(i.vf_groups, a, [](const VfGroup& g, Writer go) {
                         go.strAlways("resourceName", g.resource_name)
                             .strAlways("deviceType", g.device_type)
                             .strAlways("vfRange", g.vf_range)
                             .strAlways("policyName", g.policy_name)
                             .optI64("mtu",
                                     g.mtu > 0 ? std::optional<int64_t>(g.mtu) : std::nullopt)
                             .trueOnly("isRdma", g.is_rdma)
                             .str("vdpaType", g.vdpa_type)
                             .trueOnly("needVhostNet", g.need_vhost_net);
                       }));
          }));
  w.nonEmpty("devices", encodeList(devices, a, [&](const Device& d, Writer o) {
               o.strAlways("name", d.name).strAlways("pciAddress", d.pci_address);
               o.nonEmpty("attributes", encodeAttributes(d.attributes, a));
               o.trueOnly("excludeTopology", d.exclude_topology);
               o.strings("drivers", d.drivers);
               o.trueOnly("noRdma", d.no_rdma);
             }));
  if (!rdma_mode.empty()) w.object("system").str("rdmaMode", rdma_mode);
}

SriovNodeStateStatus SriovNodeStateStatus::decode(const Reader& r) {
  SriovNodeStateStatus s;
  for (const auto& i : r.array("interfaces")) {
    InterfaceExt x;
    x.name = i.str("name");
    x.mac = i.str("mac");
    x.driver = i.str("driver");
    x.pci_address = i.str("pciAddress");
    x.vendor = i.str("vendor");
    x.device_id = i.str("deviceID");
    x.net_filter = i.str("netFilter");
    x.mtu = i.i64("mtu");
    x.num_vfs = i.i64("numVfs");
    x.link_speed = i.str("linkSpeed");
    x.link_type = i.str("linkType");
    x.link_admin_state = i.str("linkAdminState");
    x.eswitch_mode = i.str("eSwitchMode");
    x.externally_managed = i.boolean("externallyManaged");
    x.total_vfs = i.i64("totalvfs");
    for (const auto& v : i.array("Vfs")) {
      x.vfs.push_back({v.str("name"), v.str("mac"), v.str("driver"), v.str("pciAddress"),
                       v.str("vendor"), v.str("deviceID"), v.i64("mtu"), v.i64("vfID"),
                       v.str("rdmaDevice"), v.str("iommuGroup"), v.str("guid"), v.str("assigned")});
    }
    x.alt_names = i.strings("altNames");
    x.pcie_root = i.str("pcieRoot");
    x.numa_node = i.i64("numaNode", -1);
    x.pcie_switch = i.str("pcieSwitch");
    x.rdma_device = i.str("rdmaDevice");
    x.vf_device_id = i.str("vfDeviceID");
    s.interfaces.push_back(std::move(x));
  }
  for (const auto& g : r.array("gpus")) {
    s.gpus.push_back({g.str("pciAddress"), g.str("vendor"), g.str("deviceID"), g.str("driver"),
                      g.str("pcieRoot"), g.i64("numaNode", -1), g.str("pcieSwitch")});
  }
  for (const auto& root : r.array("pcieRoots")) {
    PcieRoot pr{root.str("name"), root.i64("numaNode", -1), {}, root.strings("devices")};
    for (const auto& sw : root.array("switches")) {
      pr.switches.push_back({sw.str("pciAddress"), sw.strings("devices")});
    }
    s.pcie_roots.push_back(std::move(pr));
  }
  Reader al = r.object("alignment");
  s.alignment.root_implies_switch = al.boolean("pcieRootImpliesSwitch", true);
  for (const auto& g : al.array("gpus")) {
    s.alignment.gpus.push_back(
        {g.str("gpu"), g.str("pcieRoot"), g.strings("sameRootVfs"), g.strings("sameSwitchVfs")});
  }
  s.sync_status = r.str("syncStatus");
  s.last_sync_error = r.str("lastSyncError");
  s.conditions = decodeConditions(r, "conditions");
  s.observed_generation = r.i64("observedGeneration");
  s.advertised_vfs = r.i64("advertisedVfs");
  s.gpu_count = r.i64("gpuCount");
  s.rdma_mode = r.object("system").str("rdmaMode");
  return s;
}

void SriovNodeStateStatus::encode(Writer w) const {
  auto& a = w.allocator();
  w.nonEmpty("interfaces", encodeList(interfaces, a, [&](const InterfaceExt& x, Writer o) {
               o.str("name", x.name)
                   .str("mac", x.mac)
                   .str("driver", x.driver)
                   .strAlways("pciAddress", x.pci_address)
                   .str("vendor", x.vendor)
                   .str("deviceID", x.device_id)
                   .str("netFilter", x.net_filter)
                   .i64("mtu", x.mtu)
                   .i64("numVfs", x.num_vfs)
                   .str("linkSpeed", x.link_speed)
                   .str("linkType", x.link_type)
                   .str("linkAdminState", x.link_admin_state)
                   .str("eSwitchMode", x.eswitch_mode)
                   .trueOnly("externallyManaged", x.externally_managed)
                   .i64("totalvfs", x.total_vfs)
                   .strings("altNames", x.alt_names)
                   .str("pcieRoot", x.pcie_root)
                   .i64("numaNode", x.numa_node)
                   .str("pcieSwitch", x.pcie_switch)
                   .str("rdmaDevice", x.rdma_device)
                   .str("vfDeviceID", x.vf_device_id);
               o.nonEmpty("Vfs", encodeList(x.vfs, a, [](const VirtualFunction& v, Writer vo) {
                            vo.str("name", v.name)
                                .str("mac", v.mac)
                                .str("driver", v.driver)
                                .strAlways("pciAddress", v.pci_address)
                                .str("vendor", v.vendor)
                                .str("deviceID", v.device_id)
                                .i64("vfID", v.vf_id)
                                .str("rdmaDevice", v.rdma_device)
                                .str("iommuGroup", v.iommu_group)
                                .str("guid", v.guid)
                                .str("assigned", v.assigned);
                            if (v.mtu > 0) vo.i64("mtu", v.mtu);
                          }));
             }));
  w.nonEmpty("gpus", encodeList(gpus, a, [](const Gpu& g, Writer o) {
               o.strAlways("pciAddress", g.pci_address)
                   .str("vendor", g.vendor)
                   .str("deviceID", g.device_id)
                   .str("driver", g.driver)
                   .str("pcieRoot", g.pcie_root)
                   .i64("numaNode", g.numa_node)
                   .str("pcieSwitch", g.pcie_switch);
             }));
  w.nonEmpty(
      "pcieRoots", encodeList(pcie_roots, a, [&](const PcieRoot& r, Writer o) {
        o.strAlways("name", r.name).i64("numaNode", r.numa_node).strings("devices", r.devices);
        o.nonEmpty("switches", encodeList(r.switches, a, [](const PcieSwitch& s, Writer so) {
                     so.strAlways("pciAddress", s.pci_address).strings("devices", s.devices);
                   }));
      }));
  Writer al = w.object("alignment");
  al.boolean("pcieRootImpliesSwitch", alignment.root_implies_switch);
  al.nonEmpty("gpus", encodeList(alignment.gpus, a, [](const GpuAlignment& g, Writer o) {
                o.strAlways("gpu", g.gpu)
                    .str("pcieRoot", g.pcie_root)
                    .strings("sameRootVfs", g.same_root_vfs)
                    .strings("sameSwitchVfs", g.same_switch_vfs);
              }));
  w.str("syncStatus", sync_status)
      .str("lastSyncError", last_sync_error)
      .nonEmpty("conditions", encodeConditions(conditions, a))
      .i64("observedGeneration", observed_generation)
      .i64("advertisedVfs", advertised_vfs)
      .i64("gpuCount", gpu_count);
  if (!rdma_mode.empty()) w.object("system").str("rdmaMode", rdma_mode);
}

Result<SriovNodeState> SriovNodeState::decode(const json::Value& v) {
  Reader root(&v, "");
  SriovNodeState s;
  s.metadata = kube::ObjectMeta::decode(v);
  s.spec = SriovNodeStateSpec::decode(root.object("spec"));
  s.status = SriovNodeStateStatus::decode(root.object("status"));
  if (!root.status().isOk()) return root.status();
  return s;
}

std::string describePf(const InterfaceExt& pf) {
  return pf.name.empty() ? pf.pci_address : pf.name + " (" + pf.pci_address + ")";
}

std::vector<NodeReport> reportsOf(const std::vector<const SriovNodeState*>& states) {
  std::vector<NodeReport> out;
  out.reserve(states.size());
  for (const auto* s : states) out.push_back(NodeReport::of(*s));
  return out;
}

}  // namespace sriovdra::api
