#pragma once
// SriovNetwork and SriovIBNetwork -> NetworkAttachmentDefinition, exactly as the SR-IOV network
// operator renders it (its sriov CNI template and RenderNetAttDef): the same keys in the same
// order, `vlan` and `vlanQoS` always, the optional fields only when set, all whitespace removed
// from ipam (even inside strings: upstream's quirk), metaPlugins chained after the first plugin,
// and the config indented by four spaces as upstream stores it.
// Pure: no I/O, no clocks, no globals. The same network -> byte-identical output.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api/networks.h"
#include "policy/validate.h"

namespace sriovdra::policy {

inline constexpr const char* kNetAttachDefFinalizer =
    "netattdef.finalizers.sriovnetwork.openshift.io";
inline constexpr const char* kLastNetworkNamespaceAnnotation =
    "operator.sriovnetwork.openshift.io/last-network-namespace";
inline constexpr const char* kOwnerRefAnnotation = "sriovnetwork.openshift.io/owner-ref";

struct NetAttachDef {
  std::string name;
  std::string namespace_;
  std::map<std::string, std::string> annotations;
  std::string config;  // spec.config
  bool operator==(const NetAttachDef&) const = default;
};

// Where the network's NetworkAttachmentDefinition lives: spec.networkNamespace, else the
// network's own namespace.
std::string targetNamespace(const api::Network& n);

// The owner-ref annotation: "<Kind>.sriovnetwork.openshift.io/<namespace>/<name>".
std::string ownerRef(const api::Network& n);
struct NetworkRef {
  api::NetworkKind kind;
  std::string namespace_;
  std::string name;
};
// nullopt for anything that is not an owner-ref of one of our two kinds.
std::optional<NetworkRef> parseOwnerRef(std::string_view annotation);
// The namespace of the network an owner-ref annotation names when that network is n's namesake
// (same kind and name) in another namespace, else nullopt. When it is the SR-IOV network
// operator's namespace, n is that network's copy and may take its NAD over (docs/migration.md).
std::optional<std::string> namesakeNamespace(std::string_view owner, const api::Network& n);

// The NAD of the network. resource_prefix "" leaves out k8s.v1.cni.cncf.io/resourceName (upstream
// would write "/<resourceName>", which no device plugin serves); otherwise it is
// "<resource_prefix>/<resourceName>" as upstream's RESOURCE_PREFIX makes it.
// kInvalidArgument with validateNetwork()'s message when a field cannot be rendered.
Result<NetAttachDef> renderNetAttachDef(const api::Network& n, std::string_view resource_prefix);

// Admission rules, upstream's and in its words: networkNamespace only on a network in the operator
// namespace; capabilities a JSON object of booleans; ipam a JSON object with a non-empty string
// "type"; metaPlugins one or more JSON objects each with a non-empty string "type"; no quotes or
// backslashes in the strings the template copies verbatim (logFile, logLevel, vlanProto).
Findings validateNetwork(const api::Network& n, std::string_view operator_namespace);

}  // namespace sriovdra::policy
