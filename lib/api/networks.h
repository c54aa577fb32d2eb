#pragma once
// The network kinds of the upstream SR-IOV network operator (sriovnetwork.openshift.io/v1), with
// their JSON codecs: SriovNetwork (sriov CNI) and SriovIBNetwork (ib-sriov CNI). Both become a
// NetworkAttachmentDefinition (k8s.cni.cncf.io/v1) that policy/networks.h renders. Field names,
// optionality and defaults follow the upstream CRDs; the status is upstream's (conditions).
#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "kube/object_meta.h"

namespace sriovdra::api {

enum class NetworkKind { kSriov, kInfiniBand };

// The union of both specs: an SriovIBNetwork only ever sets the fields its CRD has (network
// namespace, resourceName, capabilities, ipam, linkState, metaPlugins).
struct NetworkSpec {
  std::string network_namespace;
  std::string resource_name;
  std::string capabilities;  // raw JSON
  std::string ipam;          // raw JSON
  std::string link_state;    // auto, enable, disable
  std::string meta_plugins;  // raw JSON: further plugins of the chain, comma separated
  // SriovNetwork only.
  int64_t vlan = 0;
  int64_t vlan_qos = 0;
  std::string vlan_proto;
  std::string spoof_chk;  // on, off
  std::string trust;      // on, off
  std::optional<int64_t> min_tx_rate;
  std::optional<int64_t> max_tx_rate;
  std::string log_level;
  std::string log_file;
  bool operator==(const NetworkSpec&) const = default;
};

struct NetworkStatus {
  std::vector<Condition> conditions;
  bool operator==(const NetworkStatus&) const = default;
  static NetworkStatus decode(const Reader& r);
  void encode(Writer w) const;
};

struct Network {
  NetworkKind kind = NetworkKind::kSriov;
  kube::ObjectMeta metadata;
  NetworkSpec spec;
  NetworkStatus status;
  // "SriovNetwork" or "SriovIBNetwork".
  std::string_view kindName() const;
};

struct SriovNetwork : Network {
  static Result<SriovNetwork> decode(const json::Value& v);
};
struct SriovIBNetwork : Network {
  static Result<SriovIBNetwork> decode(const json::Value& v);
};

// k8s.cni.cncf.io/v1 NetworkAttachmentDefinition: what the network controllers read back.
// On a NetworkAttachmentDefinition: the device-plugin resource its network is for
// (<prefix>/<resourceName>); Multus gives its pods a device of that resource.
inline constexpr const char* kNadResourceNameAnnotation = "k8s.v1.cni.cncf.io/resourceName";

struct NetworkAttachmentDefinition {
  kube::ObjectMeta metadata;
  std::string config;  // spec.config
  static Result<NetworkAttachmentDefinition> decode(const json::Value& v);
};

}  // namespace sriovdra::api
