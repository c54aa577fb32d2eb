#include "operator/caches.h"

#include "api/names.h"
#include "kube/manager.h"
#include "operator/options.h"
#include "scheduling/alignment.h"

namespace sriovdra::op {
namespace {

kube::InformerOptions inNamespace(const std::string& ns) {
  kube::InformerOptions o;
  o.namespace_ = ns;
  return o;
}

// SriovNodeStates: most of their changes are the operator's own spec writes, which it completes
// from what it wrote (NodeStateReconciler::ownWrite); the watch need not carry them whole.
kube::InformerOptions metadataWatchIn(const std::string& ns) {
  kube::InformerOptions o = inNamespace(ns);
  o.watch_metadata_only = true;
  return o;
}

}  // namespace

Result<ObjectOnly> ObjectOnly::decode(const json::Value& v) {
  return ObjectOnly{kube::ObjectMeta::decode(v)};
}

Caches::Caches(const std::shared_ptr<kube::Client>& client, const std::string& ns,
               const std::string& agent_daemonset)
    : nodes(client, kube::resources::kNodes, {.name = "nodes"}),
      node_policies(client, api::resources::kSriovNetworkNodePolicies, inNamespace(ns)),
      resource_policies(client, api::resources::kSriovResourcePolicies, inNamespace(ns)),
      device_attributes(client, api::resources::kDeviceAttributes, inNamespace(ns)),
      states(client, api::resources::kSriovNodeStates, metadataWatchIn(ns)),
      classes(client, api::resources::kDeviceClasses,
              {.name = "deviceclasses",
               .label_selector = std::string(kManagedByLabel) + "=" + kManagedByValue}),
      claims(client, api::resources::kResourceClaims, {.name = "resourceclaims"}),
      slices(client, api::resources::kResourceSlices, {.name = "resourceslices"}),
      operator_configs(client, api::resources::kSriovOperatorConfigs, inNamespace(ns)),
      pool_configs(client, api::resources::kSriovNetworkPoolConfigs, inNamespace(ns)) {
  // Each cache keeps what its readers use (kube::Informer::setTransform): Nodes their name, uid
  // and labels (the render and the webhook); ResourceClaims and ResourceSlices of the whole
  // cluster only what the alignment metrics read (slices as scheduling::SlicePlacements, with
  // their name and resourceVersion of all their metadata).
  nodes.setTransform([](api::Node& n) {
    n.metadata.annotations.clear();
    n.metadata.owner_references.clear();
    n.metadata.finalizers.clear();
  });
  claims.setTransform([](api::ResourceClaim& c) { scheduling::trimForAlignment(c); });
  slices.setTransform([](scheduling::SlicePlacements& s) {
    kube::ObjectMeta identity;  // what the informer itself reads
    identity.name = std::move(s.metadata.name);
    identity.resource_version = std::move(s.metadata.resource_version);
    s.metadata = std::move(identity);
  });
  if (!agent_daemonset.empty()) {
    kube::InformerOptions o = inNamespace(ns);
    o.name = "daemonsets";
    o.field_selector = "metadata.name=" + agent_daemonset;
    daemonsets = std::make_unique<kube::Informer<ObjectOnly>>(client, kDaemonSets, o);
  }
}

void Caches::start() {
  nodes.start();
  node_policies.start();
  resource_policies.start();
  device_attributes.start();
  states.start();
  classes.start();
  claims.start();
  slices.start();
  operator_configs.start();
  pool_configs.start();
  if (daemonsets) daemonsets->start();
}

void Caches::stop() {
  nodes.stop();
  node_policies.stop();
  resource_policies.stop();
  device_attributes.stop();
  states.stop();
  classes.stop();
  claims.stop();
  slices.stop();
  operator_configs.stop();
  pool_configs.stop();
  if (daemonsets) daemonsets->stop();
}

bool Caches::synced() const {
  return nodes.hasSynced() && node_policies.hasSynced() && resource_policies.hasSynced() &&
         device_attributes.hasSynced() && states.hasSynced() && classes.hasSynced() &&
         claims.hasSynced() && slices.hasSynced() && operator_configs.hasSynced() &&
         pool_configs.hasSynced() && (!daemonsets || daemonsets->hasSynced());
}

bool Caches::waitForSync(std::chrono::milliseconds timeout, const std::stop_token& stop) {
  return kube::waitUntil([this] { return synced(); }, timeout, stop);
}

NetworkCaches::NetworkCaches(const std::shared_ptr<kube::Client>& client)
    : sriov_networks(client, api::resources::kSriovNetworks, {.name = "sriovnetworks"}),
      ib_networks(client, api::resources::kSriovIBNetworks, {.name = "sriovibnetworks"}),
      nads(client, api::resources::kNetworkAttachmentDefinitions,
           {.name = "networkattachmentdefinitions"}),
      namespaces(client, kube::resources::kNamespaces, {.name = "namespaces"}) {}

void NetworkCaches::start() {
  sriov_networks.start();
  ib_networks.start();
  nads.start();
  namespaces.start();
}

void NetworkCaches::stop() {
  sriov_networks.stop();
  ib_networks.stop();
  nads.stop();
  namespaces.stop();
}

bool NetworkCaches::synced() const {
  return sriov_networks.hasSynced() && ib_networks.hasSynced() && namespaces.hasSynced();
}

bool NetworkCaches::waitForSync(std::chrono::milliseconds timeout, const std::stop_token& stop) {
  return kube::waitUntil([this] { return synced(); }, timeout, stop);
}

}  // namespace sriovdra::op
