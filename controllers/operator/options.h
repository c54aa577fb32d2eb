#pragma once
// What every part of the operator is configured with, and the names it writes under.
#include <chrono>
#include <memory>
#include <string>

#include "api/meta.h"
#include "base/json.h"

namespace sriovdra::op {

inline constexpr const char* kFieldManager = "sriov-dra-operator";
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "sriov-dra-operator";
// On SriovNodeState: "true" while the spec written last tears down existing VFs.
inline constexpr const char* kDisruptiveAnnotation =
    "sriovnetwork.k8snetworkplumbingwg.io/disruptive-change";

struct OperatorOptions {
  std::string namespace_;
  std::string resource_prefix;
  bool advertise_node_policy_vfs = false;  // see policy::RenderOptions
  api::LabelSelector agent_node_selector;  // empty = every node
  int max_unavailable = 1;
  int workers = 4;
  std::chrono::milliseconds rollout_retry{std::chrono::seconds(5)};
  // A node whose SriovNodeState is over the API server's size limit is retried this often.
  std::chrono::milliseconds too_large_retry{std::chrono::minutes(5)};
  std::shared_ptr<const json::Document> agent_daemonset;  // null = not managed here
  std::string agent_image;                                // "" = as in the manifest
};

}  // namespace sriovdra::op
