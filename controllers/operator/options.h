#pragma once
// What every part of the operator is configured with, and the names it writes under.
#include <chrono>
#include <memory>
#include <string>

#include "api/meta.h"
#include "base/json.h"
#include "policy/render.h"

namespace sriovdra::op {

inline constexpr const char* kFieldManager = "sriov-dra-operator";
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "sriov-dra-operator";
// On SriovNodeState: "true" while the spec written last tears down existing VFs.
inline constexpr const char* kDisruptiveAnnotation =
    "sriovnetwork.k8snetworkplumbingwg.io/disruptive-change";
// On SriovNodeState, while the operator drains its node: "cordoned" when the operator cordoned
// the node (it uncordons it when done), "draining" when the node was cordoned already.
inline constexpr const char* kDrainAnnotation = "sriovnetwork.k8snetworkplumbingwg.io/drain";
// When the drain of the node began (RFC 3339), beside kDrainAnnotation.
inline constexpr const char* kDrainStartedAnnotation =
    "sriovnetwork.k8snetworkplumbingwg.io/drain-started";

struct OperatorOptions {
  std::string namespace_;
  // The SR-IOV network operator's namespace while both run (docs/migration.md): its objects there
  // are its own (admitted as they are, networks not rendered here), and a network copied into our
  // namespace takes over the NetworkAttachmentDefinition it rendered. "" = none.
  std::string upstream_namespace;
  std::string resource_prefix = policy::kDefaultResourcePrefix;  // "" = none
  bool advertise_node_policy_vfs = false;                        // see policy::RenderOptions
  // The flags; SriovOperatorConfig and SriovNetworkPoolConfigs refine them (currentSettings()).
  api::LabelSelector agent_node_selector;  // empty = every node
  int max_unavailable = 1;                 // nodes in no pool
  int verbosity = 0;
  int workers = 4;
  // A policy set usually arrives as several objects in a row (kubectl apply -f dir/): nodes are
  // rendered once no policy changed for this long (at most ten times this long after the first
  // change; operator/settle.h), so none gets a configuration made of a part.
  std::chrono::milliseconds policy_settle{500};
  // While nodes are being rendered, every node changes the counts in the policies' status:
  // status is written at most this often then, and at once when no render is waiting.
  std::chrono::milliseconds busy_status_interval{std::chrono::seconds(30)};
  // The alignment metrics are recomputed at most this often while claims and slices change.
  std::chrono::milliseconds alignment_interval{std::chrono::seconds(1)};
  std::chrono::milliseconds rollout_retry{std::chrono::seconds(5)};
  // A drain that has not ended after this long is reported (DrainTimedOut Warning Event, naming
  // the pods still in the way and the ways out), and again after each further period.
  std::chrono::milliseconds drain_timeout{std::chrono::minutes(10)};
  // A node whose SriovNodeState is over the API server's size limit is retried this often.
  std::chrono::milliseconds too_large_retry{std::chrono::minutes(5)};
  std::shared_ptr<const json::Document> agent_daemonset;  // null = not managed here
  std::string agent_image;                                // "" = as in the manifest
  // false: the agent's init container that installs the CNI plugins is left out.
  bool agent_install_cni_plugins = true;
  std::string agent_cni_bin_dir;  // the host directory of the cni-bin volume; "" = as in the file
  // Keep the metrics CA and serving certificate (metrics_certificate_reconciler.h).
  bool metrics_certificates = true;
};

}  // namespace sriovdra::op
