#include "api/networks.h"

namespace sriovdra::api {
namespace {

// The fields both CRDs have.
void decodeCommon(const Reader& spec, NetworkSpec& s) {
  s.network_namespace = spec.str("networkNamespace");
  s.resource_name = spec.str("resourceName");
  s.capabilities = spec.str("capabilities");
  s.ipam = spec.str("ipam");
  s.link_state = spec.str("linkState");
  s.meta_plugins = spec.str("metaPlugins");
}

template <typename T>
Result<T> decodeNetwork(const json::Value& v, NetworkKind kind) {
  Reader root(&v, "");
  T n;
  n.kind = kind;
  n.metadata = kube::ObjectMeta::decode(v);
  Reader spec = root.object("spec");
  decodeCommon(spec, n.spec);
  if (kind == NetworkKind::kSriov) {
    n.spec.vlan = spec.i64("vlan");
    n.spec.vlan_qos = spec.i64("vlanQoS");
    n.spec.vlan_proto = spec.str("vlanProto");
    n.spec.spoof_chk = spec.str("spoofChk");
    n.spec.trust = spec.str("trust");
    n.spec.min_tx_rate = spec.optI64("minTxRate");
    n.spec.max_tx_rate = spec.optI64("maxTxRate");
    n.spec.log_level = spec.str("logLevel");
    n.spec.log_file = spec.str("logFile");
  }
  n.status = NetworkStatus::decode(root.object("status"));
  if (!root.status().isOk()) return root.status();
  return n;
}

}  // namespace

NetworkStatus NetworkStatus::decode(const Reader& r) {
  return NetworkStatus{decodeConditions(r, "conditions")};
}

void NetworkStatus::encode(Writer w) const {
  w.value("conditions", encodeConditions(conditions, w.allocator()));
}

std::string_view Network::kindName() const {
  return kind == NetworkKind::kSriov ? "SriovNetwork" : "SriovIBNetwork";
}

Result<SriovNetwork> SriovNetwork::decode(const json::Value& v) {
  return decodeNetwork<SriovNetwork>(v, NetworkKind::kSriov);
}

Result<SriovIBNetwork> SriovIBNetwork::decode(const json::Value& v) {
  return decodeNetwork<SriovIBNetwork>(v, NetworkKind::kInfiniBand);
}

Result<NetworkAttachmentDefinition> NetworkAttachmentDefinition::decode(const json::Value& v) {
  Reader root(&v, "");
  NetworkAttachmentDefinition d;
  d.metadata = kube::ObjectMeta::decode(v);
  d.config = root.object("spec").str("config");
  if (!root.status().isOk()) return root.status();
  return d;
}

}  // namespace sriovdra::api
