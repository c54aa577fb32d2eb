#pragma once
// Pods written for the SR-IOV network operator, attached unchanged (standalone mode), pure.
//
// Such a pod asks for a VF as an extended resource (`resources.limits: openshift.io/<resource>`),
// which kube-scheduler turns into a claim of its own (KEP-5004: annotated
// resource.kubernetes.io/extended-resource-claim: "true", no VfConfig), and names its networks in
// the annotation k8s.v1.cni.cncf.io/networks, which Multus reads. Without Multus, the agent reads
// that annotation as Multus does and gives each of those VFs the network it is for.
//
// parseNetworkSelection(): the annotation in either of Multus's forms:
//   - a JSON list of objects {name, namespace, interface, mac, ips, infiniband-guid, ...}
//     (other keys, such as cni-args or default-route, are Multus's own and ignored here);
//   - a comma-separated list of [namespace/]name[@interface], each part a DNS-1123 label.
//   An element without a namespace is in the pod's. An empty annotation selects nothing; a
//   malformed one is kInvalidArgument saying where, as Multus refuses the pod: an empty element,
//   more than kMaxNetworks elements, an interface that is eth0, lo or not printable ASCII, a mac
//   or infiniband-guid not written as hex bytes separated by ':', more than kMaxNetworkIps ips
//   or one that is not an address with its prefix length.
//
// assignNetworks(): Multus's device-plugin matching. A NetworkAttachmentDefinition annotated
// k8s.v1.cni.cncf.io/resourceName <prefix>/<resource> is for the VFs whose
// k8s.cni.cncf.io/resourceName attribute is the same (what the operator's --resource-prefix
// publishes); each element in annotation order whose NAD is for a resource takes the next VF of
// that resource the pod's extended-resource claims hold, in claim order. Its interface is the
// element's `interface`, else net<N> with N its position in the annotation counting from 1 (what
// Multus names it). Elements whose NAD is for no resource are left to whatever attaches them. A
// VF no element takes stays unattached when it is a device (vfio-pci: its pod opens it), as the
// SR-IOV network operator leaves a device no network names; one that stays a network interface
// is kInvalidArgument: left in the host's namespace with its RDMA devices in the pod, it would be
// a VF without the network's VLAN or partition (prepare refuses a VfConfig without a network for
// the same reason). An element whose resource has no VF left is kInvalidArgument naming the
// network and the resource, as Multus fails the pod. The pod's sandbox fails with either.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sriovdra::dra {

inline constexpr const char* kNetworksAnnotation = "k8s.v1.cni.cncf.io/networks";
inline constexpr const char* kExtendedResourceClaimAnnotation =
    "resource.kubernetes.io/extended-resource-claim";
// Bounds on what a pod's annotation makes the agent do: each network is a read of the API
// within the runtime's request budget, each address a value passed to the plugins.
inline constexpr size_t kMaxNetworks = 32;
inline constexpr size_t kMaxNetworkIps = 16;

struct NetworkSelection {
  std::string namespace_;
  std::string name;
  std::string interface;  // "" = net<position + 1>
  // Multus passes these to a plugin that declares the capability (CNI runtimeConfig): mac, ips,
  // infinibandGUID.
  std::string mac;
  std::vector<std::string> ips;
  std::string infiniband_guid;
  int position = 0;  // in the annotation, from 0
  bool operator==(const NetworkSelection&) const = default;
};

Result<std::vector<NetworkSelection>> parseNetworkSelection(std::string_view annotation,
                                                            const std::string& pod_namespace);

// A VF of an extended-resource claim, waiting for its network.
struct ResourceVf {
  std::string claim_uid;
  std::string device;  // "0000-11-00-1"
  // Its k8s.cni.cncf.io/resourceName attribute, "openshift.io/cx6_vfs" ("" = none: no network
  // takes it).
  std::string resource_name;
  bool needs_network = true;  // it stays on a kernel network driver
  bool operator==(const ResourceVf&) const = default;
};

struct AssignedNetwork {
  ResourceVf vf;
  NetworkSelection network;
  std::string if_name;
  bool operator==(const AssignedNetwork&) const = default;
};

// nad_resources: "namespace/name" of each NAD the elements name that the agent read, to its
// k8s.v1.cni.cncf.io/resourceName ("" when it has none).
Result<std::vector<AssignedNetwork>> assignNetworks(
    const std::vector<ResourceVf>& vfs, const std::vector<NetworkSelection>& networks,
    const std::map<std::string, std::string>& nad_resources);

}  // namespace sriovdra::dra
