#pragma once
// Attaching a pod's VFs to its network namespace (standalone mode, the NRI plugin), pure: which
// VFs, with which interface name and NetworkAttachmentDefinition, what is recorded on disk
// about each attachment, and what the claim's status says about it.
//
// attachmentsFor(): the VFs prepared for the pod (the checkpoint's claims reserved for its UID,
// by claim name, devices in claim order). A VF whose VfConfig names no
// NetworkAttachmentDefinition is not attached (a vfio-pci VF for DPDK needs no CNI); the
// reference driver fails such a claim at prepare instead. The NAD is in the claim's namespace,
// as in the reference driver (planPrepare refuses a VfConfig naming another). The interface is
// VfConfig.ifName, else <prefix><N> (the reference driver's default prefix is vfnet), N counting
// the pod's VFs without ifName from 0 and skipping names some ifName takes. A VF of a claim the
// scheduler made for an extended resource has no VfConfig: the pod's
// k8s.v1.cni.cncf.io/networks annotation names its network and interface
// (dra/network_selection.h, withNetworks()).
//
// AttachRecord: what the agent keeps per pod sandbox (<state-dir>/attach/<sandbox>.json): per
// interface the CNI configuration it ran (deviceID included) and the ADD result, marked Adding
// before CNI ADD runs and Attached once it returned, so an agent that dies in between knows
// what to undo, and DEL runs with the same configuration and prevResult after any restart.
//
// deviceStatuses(): status.devices for our results of a prepared claim: data {vfConfig} and,
// for an attached VF, data {vfConfig, cniConfig, cniResult} and networkData {interfaceName,
// ips, hardwareAddress}, as the reference driver writes them; networkData.interfaceName alone
// when only the VfConfig names it.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/resource.h"
#include "dra/checkpoint.h"
#include "dra/network_selection.h"

namespace sriovdra::dra {

struct Attachment {
  std::string claim_uid;
  std::string claim_namespace;
  std::string claim_name;
  std::string pool;
  std::string device;  // "0000-11-00-1"
  std::string pci_address;
  std::string if_name;
  std::string nad_name;  // in claim_namespace
  // A VF of an extended-resource claim: its resourceName, and the network of the pod's
  // annotation it takes; nad_name and if_name are "" until withNetworks() gives it one.
  bool extended_resource = false;
  std::string resource_name;   // its k8s.cni.cncf.io/resourceName attribute
  bool needs_network = false;  // it stays on a kernel network driver
  std::optional<NetworkSelection> network;
  bool operator==(const Attachment&) const = default;
};

inline constexpr const char* kDefaultInterfacePrefix = "vfnet";
// Also the VFs of extended-resource claims (PreparedClaim::extended_resource), which wait for the
// pod's networks (they take no <prefix><N> name).
std::vector<Attachment> attachmentsFor(
    const Checkpoint& checkpoint, const std::string& pod_uid,
    const std::string& interface_prefix = kDefaultInterfacePrefix);
// The VFs of `wanted` that wait for a network, in order (assignNetworks' input).
std::vector<ResourceVf> waitingForNetworks(const std::vector<Attachment>& wanted);
// `wanted` with each waiting VF given the network assigned to it (its NAD, in the claim's
// namespace, and interface name); a waiting VF that no network took is left out. Two
// attachments of one interface name (a VfConfig's ifName and a network's net<N>, or two
// networks) are kInvalidArgument naming both: CNI ADD of the second would fail less clearly.
Result<std::vector<Attachment>> withNetworks(std::vector<Attachment> wanted,
                                             const std::vector<AssignedNetwork>& assigned);
// Whether <prefix><N> is a valid interface name for every N below 1000 (at most 15 characters,
// no '/', ':' or whitespace, not "." or ".."): "" when it is, else why not.
std::string interfacePrefixProblem(const std::string& prefix);

struct AttachedInterface {
  enum class State { kAdding, kAttached };
  std::string claim_uid;
  std::string pool;
  std::string device;
  std::string pci_address;
  std::string if_name;
  State state = State::kAdding;
  std::string cni_config;  // the configuration CNI ran with, JSON text
  std::string cni_result;  // the ADD result, JSON text ("" while Adding)
  // The NetworkAttachmentDefinition, "<namespace>/<name>" ("" in records of agents before it
  // was kept).
  std::string network;
  bool operator==(const AttachedInterface&) const = default;
};

// What one record keeps per interface, and the whole record: bounded, so that every record
// written can be read back (a NAD's configuration or a CNI result larger than this is refused at
// attach time, before CNI ADD or undone right after it).
inline constexpr size_t kMaxCniConfigBytes = 64u << 10;
inline constexpr size_t kMaxCniResultBytes = 64u << 10;
inline constexpr size_t kMaxRecordBytes = 4u << 20;

struct AttachRecord {
  std::string sandbox;  // the pod sandbox ID
  std::string pod_uid;
  std::string pod_namespace;
  std::string pod_name;
  std::string netns;
  std::vector<AttachedInterface> interfaces;
  bool operator==(const AttachRecord&) const = default;

  std::string encode() const;
  // kInvalidArgument naming the problem for anything that is not a record.
  static Result<AttachRecord> decode(std::string_view text);
  const AttachedInterface* find(const std::string& claim_uid, const std::string& device) const;
};

// What a runtime's Synchronize asks: detach the recorded sandboxes it no longer has, attach the
// ones it has (in its order). A snapshot can be older than a pod event the attacher saw after it
// was taken (it waits for a worker): a sandbox in `newer` (an event arrived after the snapshot)
// is left to that event, never torn down or attached by the older snapshot.
struct SyncPlan {
  std::vector<std::string> detach;
  std::vector<std::string> attach;
  bool operator==(const SyncPlan&) const = default;
};
SyncPlan planSync(const std::vector<std::string>& recorded, const std::vector<std::string>& running,
                  const std::set<std::string>& newer);

// Multus's pod annotation k8s.v1.cni.cncf.io/network-status for what a record attached, as a
// JSON array: per attached interface with a network, in the record's order, {name: the
// network, interface, ips (the result's addresses without their prefix length), mac, dns (the
// result's, else {}), device-info: {type: pci, version: 1.1.0, pci: {pci-address}}}. Not
// written, unlike Multus: the pod's default network (the runtime's own CNI configuration attached
// it, under a name the agent does not know), mtu, gateway, and device-info's rdma-device.
// "" when the record has no such interface.
inline constexpr const char* kNetworkStatusAnnotation = "k8s.v1.cni.cncf.io/network-status";
std::string networkStatus(const AttachRecord& record);

// `attached`: the attached interfaces of this claim (any sandbox).
std::vector<api::AllocatedDeviceStatus> deviceStatuses(
    const PreparedClaim& claim, const std::string& driver,
    const std::vector<AttachedInterface>& attached);

}  // namespace sriovdra::dra
