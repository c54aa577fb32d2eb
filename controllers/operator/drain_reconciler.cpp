#include "operator/drain_reconciler.h"

#include <set>

#include "api/names.h"
#include "base/log.h"
#include "base/pointers.h"
#include "base/strings.h"
#include "operator/operator_config_reconciler.h"
#include "operator/rollout.h"

namespace sriovdra::op {

using kube::ReconcileResult;

std::vector<PodRef> podsUsingDevicesOn(const std::string& node, std::string_view driver,
                                       const std::vector<const api::ResourceClaim*>& claims) {
  std::set<PodRef> pods;
  for (const auto* c : claims) {
    if (!c->status.allocation) continue;
    bool here = false;
    for (const auto& r : c->status.allocation->results) {
      here = here || (r.driver == driver && r.pool == node);
    }
    if (!here) continue;
    for (const auto& consumer : c->status.reserved_for) {
      if (consumer.resource == "pods") pods.insert({c->metadata.namespace_, consumer.name});
    }
  }
  return {pods.begin(), pods.end()};
}

Result<ReconcileResult> DrainReconciler::reconcile(const std::string& name) {
  auto state = caches_.states.get(options_.namespace_, name);
  auto node = caches_.nodes.get("", name);
  if (!state) {
    std::lock_guard lock(mu_);
    marks_.erase(name);
    return ReconcileResult::done();
  }
  auto annotation = [&](const char* key) {
    auto it = state->metadata.annotations.find(key);
    return it == state->metadata.annotations.end() ? std::string() : it->second;
  };
  std::string marked = annotation(kDrainAnnotation);
  {
    std::lock_guard lock(mu_);
    if (auto it = marks_.find(name); it != marks_.end()) marked = it->second;
  }
  auto ref = kube::ObjectReference::of(api::resources::kSriovNodeStates, state->metadata);
  bool needed = node != nullptr && currentSettings(caches_, options_).drain &&
                annotation(kDisruptiveAnnotation) == "true" && isReconfiguring(*state);
  if (!needed) {
    if (marked.empty()) return ReconcileResult::done();
    // Not "if the cache shows it cordoned": the cache may not have seen the cordon yet.
    if (marked == "cordoned" && node != nullptr) SDRA_RETURN_IF_ERROR(cordon(name, false));
    SDRA_RETURN_IF_ERROR(mark(name, ""));
    events_.normal(ref, "DrainComplete",
                   marked == "cordoned" ? "the node is reconfigured and uncordoned"
                                        : "the node is reconfigured; it stays cordoned as it "
                                          "was before the drain");
    return ReconcileResult::done();
  }
  bool first = marked.empty();
  if (first) {
    // The mark first: a cordon that is not remembered would never be undone.
    marked = node->unschedulable ? "draining" : "cordoned";
    SDRA_RETURN_IF_ERROR(mark(name, marked));
    events_.normal(
        ref, "Draining",
        std::string(marked == "cordoned" ? "cordoning the node" : "the node is cordoned already") +
            "; evicting the pods that use its VFs before they are recreated");
  }
  if (marked == "cordoned" && (first || !node->unschedulable)) {
    SDRA_RETURN_IF_ERROR(cordon(name, true));
  }
  SDRA_RETURN_IF_ERROR(evictPods(name, ref));
  return ReconcileResult::after(options_.rollout_retry);
}

Status DrainReconciler::evictPods(const std::string& node, const kube::ObjectReference& state) {
  auto claims = caches_.claims.list();
  std::vector<std::string> blocked;
  for (const auto& pod : podsUsingDevicesOn(node, api::kDriverName, pointers(claims))) {
    Status st = client_.evict(pod.namespace_, pod.name);
    if (st.isOk() || st.code() == Code::kNotFound) continue;
    if (st.code() != Code::kTooManyRequests)
      return st.prepend("evicting pod " + pod.namespace_ + "/" + pod.name);
    blocked.push_back(pod.namespace_ + "/" + pod.name + " (" + st.message() + ")");
  }
  if (!blocked.empty()) {
    events_.warning(state, "DrainBlocked",
                    "cannot evict " + join(blocked, ", ") +
                        "; the node stays cordoned and the change waits; retrying every " +
                        std::to_string(options_.rollout_retry.count()) + " ms");
  }
  return Status::ok();
}

Status DrainReconciler::cordon(const std::string& node, bool unschedulable) {
  auto patched = client_.patch(
      kube::resources::kNodes, "", node, kube::PatchType::kMerge,
      unschedulable ? R"({"spec":{"unschedulable":true}})" : R"({"spec":{"unschedulable":null}})");
  if (!patched.ok()) {
    return Status(patched.status())
        .prepend((unschedulable ? "cordoning node " : "uncordoning node ") + node);
  }
  SDRA_LOG_INFO << (unschedulable ? "cordoned node " : "uncordoned node ") << node;
  return Status::ok();
}

Status DrainReconciler::mark(const std::string& node, const std::string& value) {
  // A merge patch, not an apply: it never creates a SriovNodeState that went away meanwhile.
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  json::Value annotations(rapidjson::kObjectType);
  annotations.AddMember(json::str(kDrainAnnotation, a),
                        value.empty() ? json::Value() : json::str(value, a), a);
  json::Value meta(rapidjson::kObjectType);
  meta.AddMember("annotations", annotations, a);
  patch.AddMember("metadata", meta, a);
  auto patched = client_.patch(api::resources::kSriovNodeStates, options_.namespace_, node,
                               kube::PatchType::kMerge, json::dump(patch), {.metadata_only = true});
  if (!patched.ok() && patched.status().code() != Code::kNotFound) return patched.status();
  std::lock_guard lock(mu_);
  marks_[node] = value;
  return Status::ok();
}

}  // namespace sriovdra::op
