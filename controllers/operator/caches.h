#pragma once
// The operator's view of the cluster: one informer per kind it reads, shared by every reconciler
// and by the admission webhook. A plain struct: the wiring (operator.cpp) registers the handlers
// that turn cache changes into work. Informers run on every replica, reconcilers only on the
// leader. Thread-safety: that of kube::Informer (reads from any thread).
#include <chrono>
#include <map>
#include <memory>
#include <stop_token>
#include <string>

#include "api/networks.h"
#include "api/node_state.h"
#include "api/objects.h"
#include "api/operator_config.h"
#include "api/policies.h"
#include "api/resource.h"
#include "kube/informer.h"
#include "operator/cached_node_state.h"
#include "scheduling/alignment.h"

namespace sriovdra::op {

// Just the metadata of an object, for informers that only need to notice changes.
struct ObjectOnly {
  kube::ObjectMeta metadata;
  static Result<ObjectOnly> decode(const json::Value& v);
};

inline const kube::ResourceType kDaemonSets{"apps", "v1", "daemonsets", "DaemonSet", true};

struct Caches {
  // Policies, the operator and pool configs, SriovNodeStates and the agent's DaemonSet (named
  // `agent_daemonset`, "" = not watched) in `ns`; Nodes, ResourceClaims and ResourceSlices of the
  // cluster; DeviceClasses this operator manages. Nodes, claims and slices keep only the fields
  // read (caches.cpp), so memory follows what the reconcilers use, not what the cluster stores.
  // SriovNodeStates are watched as metadata (kube::Informer's watch_metadata_only): a change is
  // read whole unless a completion set on `states` builds it.
  Caches(const std::shared_ptr<kube::Client>& client, const std::string& ns,
         const std::string& agent_daemonset);

  kube::Informer<api::Node> nodes;
  kube::Informer<api::SriovNetworkNodePolicy> node_policies;
  kube::Informer<api::SriovResourcePolicy> resource_policies;
  kube::Informer<api::DeviceAttributes> device_attributes;
  kube::Informer<CachedNodeState> states;
  kube::Informer<api::DeviceClass> classes;
  kube::Informer<api::ResourceClaim> claims;
  kube::Informer<scheduling::SlicePlacements> slices;  // what the alignment reads of each slice
  kube::Informer<api::SriovOperatorConfig> operator_configs;  // in `ns`; "default" counts
  kube::Informer<api::SriovNetworkPoolConfig> pool_configs;   // in `ns`
  std::unique_ptr<kube::Informer<ObjectOnly>> daemonsets;     // null unless watched

  void start();
  void stop();
  bool synced() const;
  // Blocks until every cache has synced, the timeout passes or `stop` is requested (within a few
  // milliseconds); returns synced().
  bool waitForSync(std::chrono::milliseconds timeout, const std::stop_token& stop);
};

// What the network controller reads: SriovNetworks and SriovIBNetworks of every namespace, the
// NetworkAttachmentDefinitions of every namespace and the names of the namespaces. Apart from
// Caches because NetworkAttachmentDefinitions are Multus's CRD: a cluster without it still gets
// every other part of the operator, and the networks say what is missing.
struct NetworkCaches {
  explicit NetworkCaches(const std::shared_ptr<kube::Client>& client);

  kube::Informer<api::SriovNetwork> sriov_networks;
  kube::Informer<api::SriovIBNetwork> ib_networks;
  kube::Informer<api::NetworkAttachmentDefinition> nads;
  kube::Informer<ObjectOnly> namespaces;

  void start();
  void stop();
  // The networks and the namespaces (not the NADs, which may not be served).
  bool synced() const;
  bool waitForSync(std::chrono::milliseconds timeout, const std::stop_token& stop);
};

}  // namespace sriovdra::op
