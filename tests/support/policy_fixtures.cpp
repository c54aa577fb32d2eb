#include "support/policy_fixtures.h"

#include <cstdio>

namespace sriovdra::testing::fixture {

const std::vector<ReferencePf>& referencePfs() {
  static const std::vector<ReferencePf> kPfs = {
      {"ibp14s0", "0000:0e:00.0", "pci0000:00", 0},  {"ibp17s0", "0000:11:00.0", "pci0000:00", 0},
      {"ibp82s0", "0000:52:00.0", "pci0000:3a", 0},  {"ibp83s0", "0000:53:00.0", "pci0000:3a", 0},
      {"ibp139s0", "0000:8b:00.0", "pci0000:80", 1}, {"ibp142s0", "0000:8e:00.0", "pci0000:80", 1},
      {"ibp199s0", "0000:c7:00.0", "pci0000:b9", 1}, {"ibp202s0", "0000:ca:00.0", "pci0000:b9", 1},
  };
  return kPfs;
}

namespace {

std::string vfAddress(const std::string& pf_pci, int index) {
  // VFs follow the PF at function 1.. on the same bus (ConnectX-6 with few VFs).
  std::string base = pf_pci.substr(0, pf_pci.size() - 4);  // "0000:0e:"
  int slot = (index + 1) / 8;
  int fn = (index + 1) % 8;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%02x.%d", base.c_str(), slot, fn);
  return buf;
}

}  // namespace

api::SriovNodeStateStatus a100Status(int vfs_per_pf) {
  api::SriovNodeStateStatus s;
  for (const auto& pf : referencePfs()) {
    api::InterfaceExt x;
    x.name = pf.name;
    x.pci_address = pf.pci;
    x.vendor = "15b3";
    x.device_id = "101b";
    x.driver = "mlx5_core";
    x.link_type = "IB";
    x.mtu = 4092;
    x.num_vfs = vfs_per_pf;
    x.total_vfs = 8;
    x.eswitch_mode = "legacy";
    x.pcie_root = pf.root;
    x.numa_node = pf.numa;
    x.vf_device_id = "101c";
    for (int i = 0; i < vfs_per_pf; ++i) {
      x.vfs.push_back({.driver = "mlx5_core",
                       .pci_address = vfAddress(pf.pci, i),
                       .vendor = "15b3",
                       .device_id = "101c",
                       .vf_id = i});
    }
    s.interfaces.push_back(std::move(x));
  }
  return s;
}

api::SriovNodeStateStatus e810Status(int vfs_per_pf) {
  api::SriovNodeStateStatus s;
  int n = 0;
  for (std::string name : {"ens1f0", "ens1f1"}) {
    api::InterfaceExt x;
    x.name = name;
    x.pci_address = "0000:3b:00." + std::to_string(n);
    x.vendor = "8086";
    x.device_id = "1593";
    x.driver = "ice";
    x.link_type = "ETH";
    x.mtu = 1500;
    x.num_vfs = vfs_per_pf;
    x.total_vfs = 64;
    x.alt_names = {"enp59s0f" + std::to_string(n)};
    x.pcie_root = "pci0000:3a";
    x.numa_node = 0;
    for (int i = 0; i < vfs_per_pf; ++i) {
      char pci[32];
      std::snprintf(pci, sizeof pci, "0000:3b:%02x.%d", 2 + n * 2 + i / 8, i % 8);
      x.vfs.push_back({.driver = "iavf",
                       .pci_address = pci,
                       .vendor = "8086",
                       .device_id = "1889",
                       .vf_id = i});
    }
    s.interfaces.push_back(std::move(x));
    ++n;
  }
  return s;
}

api::SriovNodeStateStatus ethernetStatus(int pfs, int vfs_per_pf) {
  api::SriovNodeStateStatus s;
  s.sync_status = "Succeeded";
  for (int pf = 0; pf < pfs; ++pf) {
    char pci[32];
    std::snprintf(pci, sizeof pci, "0000:%02x:00.0", 0x10 + pf);
    api::InterfaceExt x{.name = "ens" + std::to_string(pf),
                        .pci_address = pci,
                        .vendor = "15b3",
                        .device_id = "101d",
                        .num_vfs = vfs_per_pf,
                        .link_type = "ETH",
                        .total_vfs = 2 * vfs_per_pf};
    for (int vf = 0; vf < vfs_per_pf; ++vf) {
      char vpci[32];
      std::snprintf(vpci, sizeof vpci, "0000:%02x:%02x.%d", 0x10 + pf, (vf + 1) / 8, (vf + 1) % 8);
      x.vfs.push_back({.driver = "mlx5_core",
                       .pci_address = vpci,
                       .vendor = "15b3",
                       .device_id = "101e",
                       .vf_id = vf});
    }
    s.interfaces.push_back(std::move(x));
  }
  return s;
}

api::Node node(const std::string& name, std::map<std::string, std::string> labels) {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  return n;
}

NodePolicy::NodePolicy(std::string name) {
  p_.metadata.name = std::move(name);
  p_.metadata.namespace_ = "sriov-dra";
  p_.spec.resource_name = "res";
  p_.spec.num_vfs = 8;
}
NodePolicy& NodePolicy::priority(int64_t p) {
  p_.spec.priority = p;
  return *this;
}
NodePolicy& NodePolicy::resource(std::string r) {
  p_.spec.resource_name = std::move(r);
  return *this;
}
NodePolicy& NodePolicy::numVfs(int64_t n) {
  p_.spec.num_vfs = n;
  return *this;
}
NodePolicy& NodePolicy::mtu(int64_t m) {
  p_.spec.mtu = m;
  return *this;
}
NodePolicy& NodePolicy::pf(std::string entry) {
  p_.spec.nic_selector.pf_names.push_back(std::move(entry));
  return *this;
}
NodePolicy& NodePolicy::vendor(std::string v) {
  p_.spec.nic_selector.vendor = std::move(v);
  return *this;
}
NodePolicy& NodePolicy::deviceId(std::string d) {
  p_.spec.nic_selector.device_id = std::move(d);
  return *this;
}
NodePolicy& NodePolicy::rootDevice(std::string pci) {
  p_.spec.nic_selector.root_devices.push_back(std::move(pci));
  return *this;
}
NodePolicy& NodePolicy::linkType(std::string t) {
  p_.spec.link_type = std::move(t);
  return *this;
}
NodePolicy& NodePolicy::deviceType(std::string t) {
  p_.spec.device_type = std::move(t);
  return *this;
}
NodePolicy& NodePolicy::nodeSelector(std::map<std::string, std::string> s) {
  p_.spec.node_selector = std::move(s);
  return *this;
}
NodePolicy& NodePolicy::rdma(bool on) {
  p_.spec.is_rdma = on;
  return *this;
}

ResourcePolicy::ResourcePolicy(std::string name) {
  p_.metadata.name = std::move(name);
  p_.metadata.namespace_ = "sriov-dra";
}
ResourcePolicy& ResourcePolicy::config(std::vector<api::ResourceFilter> filters,
                                       std::optional<std::map<std::string, std::string>> sel) {
  api::ResourcePolicyConfig c;
  c.resource_filters = std::move(filters);
  if (sel) c.device_attributes_selector = api::LabelSelector{*sel, {}};
  p_.configs.push_back(std::move(c));
  return *this;
}
ResourcePolicy& ResourcePolicy::nodeSelector(api::NodeSelector s) {
  p_.node_selector = std::move(s);
  return *this;
}

api::DeviceAttributes deviceAttributes(const std::string& name,
                                       std::map<std::string, std::string> labels,
                                       api::Attributes attributes) {
  api::DeviceAttributes d;
  d.metadata.name = name;
  d.metadata.namespace_ = "sriov-dra";
  d.metadata.labels = std::move(labels);
  d.attributes = std::move(attributes);
  return d;
}

}  // namespace sriovdra::testing::fixture
