#pragma once
// SriovNodeState (sriovnetwork.k8snetworkplumbingwg.io/v1alpha1), one per node, name = node
// name: the only contract between the operator (writes spec) and the node agent (writes status).
// spec.interfaces and status.interfaces keep the upstream SriovNetworkNodeState field names
// (Vfs, totalvfs, vfRange "a-b", ...) so SR-IOV operator users and tools read them unchanged;
// spec.devices, GPUs, the PCIe tree and the alignment summary are this project's additions.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/meta.h"
#include "api/policies.h"
#include "kube/object_meta.h"

namespace sriovdra::api {

struct VfGroup {
  std::string resource_name;
  std::string device_type;
  std::string vf_range;  // "first-last"
  std::string policy_name;
  int64_t mtu = 0;
  bool is_rdma = false;
  std::string vdpa_type;
  bool need_vhost_net = false;  // its VFs get /dev/vhost-net and /dev/net/tun when prepared
  bool operator==(const VfGroup&) const = default;
  auto operator<=>(const VfGroup&) const = default;  // NOLINT(modernize-use-nullptr)
};

struct Interface {
  std::string pci_address;
  std::string name;
  int64_t num_vfs = 0;
  int64_t mtu = 0;
  std::string link_type;
  std::string eswitch_mode;
  bool externally_managed = false;
  std::vector<VfGroup> vf_groups;
  bool operator==(const Interface&) const = default;
  auto operator<=>(const Interface&) const = default;  // NOLINT(modernize-use-nullptr)
  // The VF group whose range holds VF `vf_id` (ranges on one PF are disjoint), or nullptr when
  // none does or the VF is past numVfs.
  const VfGroup* groupOf(int64_t vf_id) const;
};

// A VF to advertise, with the attributes the policies give it (discovery attributes are added
// by the agent when it publishes the ResourceSlice).
struct Device {
  std::string name;  // deviceName(pci_address)
  std::string pci_address;
  Attributes attributes;
  // From a node policy's excludeTopology: published without dra.net/numaNode, so no claim can
  // tie it to a NUMA node (as the device plugin then reported no NUMA affinity).
  bool exclude_topology = false;
  // The drivers a claim may use the VF with (the winning resource filter's `drivers`; the first
  // when the claim names none); empty: as its VfConfig says.
  std::vector<std::string> drivers;
  // From a node policy whose isRdma is false: published with rdmaCapable false, so it is
  // prepared without its RDMA devices (the device plugin gave them only with isRdma: true).
  bool no_rdma = false;
  bool operator==(const Device&) const = default;
};

struct SriovNodeStateSpec {
  std::vector<Interface> interfaces;
  std::vector<Device> devices;
  // spec.system.rdmaMode (upstream's field): "shared" or "exclusive", the RDMA subsystem's
  // network namespace mode the node's SriovNetworkPoolConfig asks for; "" = as the node boots.
  std::string rdma_mode;
  bool operator==(const SriovNodeStateSpec&) const = default;
  static SriovNodeStateSpec decode(const Reader& r);
  void encode(Writer w) const;
};

// VirtualFunction::assigned: its netdev is in another network namespace.
inline constexpr const char* kAssignedNetns = "netns";

struct VirtualFunction {
  std::string name;  // netdev
  std::string mac;
  std::string driver;
  std::string pci_address;
  std::string vendor;
  std::string device_id;
  int64_t mtu = 0;
  int64_t vf_id = 0;
  std::string rdma_device;  // ours: e.g. mlx5_3
  std::string iommu_group;  // ours
  std::string guid;         // an InfiniBand VF's port GUID, as its PF's driver reports it
  // Who holds the VF, when discovery can tell it is in use although this driver may not have
  // given it to anyone: "netns", its netdev is in another network namespace (a pod's). The
  // SR-IOV network operator declares the field and never fills it.
  std::string assigned;
  bool operator==(const VirtualFunction&) const = default;
  auto operator<=>(const VirtualFunction&) const = default;  // NOLINT(modernize-use-nullptr)
};

struct InterfaceExt {
  std::string name;
  std::string mac;
  std::string driver;
  std::string pci_address;
  std::string vendor;
  std::string device_id;
  std::string net_filter;
  int64_t mtu = 0;
  int64_t num_vfs = 0;
  std::string link_speed;        // "200000 Mb/s"
  std::string link_type;         // "ETH" or "IB"
  std::string link_admin_state;  // "up" or "down"
  std::string eswitch_mode;
  bool externally_managed = false;
  int64_t total_vfs = 0;
  std::vector<VirtualFunction> vfs;
  std::vector<std::string> alt_names;
  // Ours: topology of the PF, shared by its VFs.
  std::string pcie_root;    // "pci0000:b9"
  int64_t numa_node = -1;   // -1 = no affinity
  std::string pcie_switch;  // BDF of the switch's upstream port, "" when directly on the root
  std::string rdma_device;
  std::string vf_device_id;  // the device id its VFs carry
  bool operator==(const InterfaceExt&) const = default;
  auto operator<=>(const InterfaceExt&) const = default;  // NOLINT(modernize-use-nullptr)
};

// "ibp14s0 (0000:0e:00.0)", or the PCI address of a PF without a netdev: how messages name a PF.
std::string describePf(const InterfaceExt& pf);

struct Gpu {
  std::string pci_address;
  std::string vendor;
  std::string device_id;
  std::string driver;
  std::string pcie_root;
  int64_t numa_node = -1;
  std::string pcie_switch;
  bool operator==(const Gpu&) const = default;
  auto operator<=>(const Gpu&) const = default;  // NOLINT(modernize-use-nullptr)
};

struct PcieSwitch {
  std::string pci_address;           // upstream port
  std::vector<std::string> devices;  // BDFs of GPUs and PFs below it
  bool operator==(const PcieSwitch&) const = default;
};

struct PcieRoot {
  std::string name;  // "pci0000:b9"
  int64_t numa_node = -1;
  std::vector<PcieSwitch> switches;
  std::vector<std::string> devices;  // GPUs and PFs not behind a switch
  bool operator==(const PcieRoot&) const = default;
};

struct GpuAlignment {
  std::string gpu;  // BDF
  std::string pcie_root;
  std::vector<std::string> same_root_vfs;    // advertised device names
  std::vector<std::string> same_switch_vfs;  // advertised device names
  bool operator==(const GpuAlignment&) const = default;
};

struct Alignment {
  // False when some PCIe root holds more than one switch with GPUs or NICs: there, a matching
  // pcieRoot attribute does not guarantee that GPU and VF share a switch.
  bool root_implies_switch = true;
  std::vector<GpuAlignment> gpus;
  bool operator==(const Alignment&) const = default;
};

struct SriovNodeStateStatus {
  std::vector<InterfaceExt> interfaces;
  std::vector<Gpu> gpus;
  std::vector<PcieRoot> pcie_roots;
  Alignment alignment;
  std::string sync_status;  // Succeeded, InProgress, Failed
  std::string last_sync_error;
  std::vector<Condition> conditions;
  int64_t observed_generation = 0;
  int64_t advertised_vfs = 0;
  int64_t gpu_count = 0;
  // status.system.rdmaMode (upstream's field): the mode the kernel runs in; "" when the node has
  // no RDMA subsystem loaded.
  std::string rdma_mode;
  bool operator==(const SriovNodeStateStatus&) const = default;
  static SriovNodeStateStatus decode(const Reader& r);
  void encode(Writer w) const;
};

struct SriovNodeState {
  kube::ObjectMeta metadata;
  SriovNodeStateSpec spec;
  SriovNodeStateStatus status;
  static Result<SriovNodeState> decode(const json::Value& v);
};

// A node's report as the readers of many nodes take it (the webhook's checks, the alignment): its
// name, PFs and GPUs, as views (whoever holds them keeps them alive), from a SriovNodeState or
// from a cache that keeps them apart (operator/cached_node_state.h).
struct NodeReport {
  std::string_view node;
  std::span<const InterfaceExt> pfs;
  std::span<const Gpu> gpus;
  static NodeReport of(const SriovNodeState& s) {
    return {s.metadata.name, s.status.interfaces, s.status.gpus};
  }
};
// NodeReport::of each state.
std::vector<NodeReport> reportsOf(const std::vector<const SriovNodeState*>& states);

}  // namespace sriovdra::api
