#include "operator/drain_reconciler.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "api/names.h"
#include "base/log.h"
#include "base/pointers.h"
#include "base/strings.h"
#include "base/time.h"
#include "operator/agent_policy.h"
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
      if (consumer.resource == "pods") {
        pods.insert({c->metadata.namespace_, consumer.name, consumer.uid});
      }
    }
  }
  return {pods.begin(), pods.end()};
}

std::vector<NodePod> podsToDrainForReboot(const json::Value& pod_list) {
  std::vector<NodePod> out;
  auto items = pod_list.FindMember("items");
  if (items == pod_list.MemberEnd() || !items->value.IsArray()) return out;
  for (const auto& pod : items->value.GetArray()) {
    if (!pod.IsObject() || !pod.HasMember("metadata")) continue;
    auto meta = kube::ObjectMeta::decode(pod);
    bool daemon = false;
    for (const auto& owner : meta.owner_references) daemon = daemon || owner.kind == "DaemonSet";
    if (daemon || meta.annotations.count("kubernetes.io/config.mirror") != 0) continue;
    std::string phase;
    if (auto st = pod.FindMember("status"); st != pod.MemberEnd() && st->value.IsObject()) {
      if (auto p = st->value.FindMember("phase"); p != st->value.MemberEnd() && p->value.IsString())
        phase = p->value.GetString();
    }
    if (phase == "Succeeded" || phase == "Failed") continue;
    out.push_back({{meta.namespace_, meta.name, meta.uid}, !meta.deletion_timestamp.empty()});
  }
  std::sort(out.begin(), out.end(),
            [](const NodePod& a, const NodePod& b) { return a.pod < b.pod; });
  return out;
}

Result<ReconcileResult> DrainReconciler::reconcile(const std::string& name) {
  auto state = caches_.states.get(options_.namespace_, name);
  auto node = caches_.nodes.get("", name);
  if (!state) {
    std::lock_guard lock(mu_);
    marks_.erase(name);
    return ReconcileResult::done();
  }
  std::string marked = state->metadata.annotation(kDrainAnnotation);
  {
    std::lock_guard lock(mu_);
    if (auto it = marks_.find(name); it != marks_.end()) marked = it->second;
  }
  auto ref = kube::ObjectReference::of(api::resources::kSriovNodeStates, state->metadata);
  // The node holds a rollout slot (node_state_reconciler.h) until its agent is done.
  bool slot = node != nullptr && state->metadata.annotation(kDisruptiveAnnotation) == "true" &&
              isReconfiguring(*state);
  bool drain = slot && currentSettings(caches_, options_).drain;
  bool reboot = slot && rebootRequested(*state);
  if (drain || reboot) {
    auto problem = policy_check_.problem();
    if (!problem.ok()) return problem.status();  // retried with backoff, nothing changed
    if (!problem->empty()) {
      // Nothing is done on this node, nothing undone either: a cordon or grant of before stays.
      events_.warning(ref, "DrainRefused",
                      *problem + ": any node's agent could have written this node's status, so " +
                          "it is not " + (reboot ? "drained or rebooted" : "drained") +
                          "; apply config/rbac/agent_validating_admission_policy.yaml "
                          "(docs/install.md)");
      return ReconcileResult::after(options_.rollout_retry);
    }
  }
  if (!drain && !marked.empty()) {
    // Not "if the cache shows it cordoned": the cache may not have seen the cordon yet.
    if (marked == "cordoned" && node != nullptr) SDRA_RETURN_IF_ERROR(cordon(name, false));
    SDRA_RETURN_IF_ERROR(annotate(name, kDrainStartedAnnotation, ""));
    SDRA_RETURN_IF_ERROR(annotate(name, kDrainAnnotation, ""));
    events_.normal(ref, "DrainComplete",
                   marked == "cordoned" ? "the node is reconfigured and uncordoned"
                                        : "the node is reconfigured; it stays cordoned as it "
                                          "was before the drain");
  }
  if (drain && marked.empty()) {
    // The mark first: a cordon that is not remembered would never be undone.
    marked = node->unschedulable ? "draining" : "cordoned";
    SDRA_RETURN_IF_ERROR(annotate(name, kDrainAnnotation, marked));
    SDRA_RETURN_IF_ERROR(annotate(name, kDrainStartedAnnotation, nowRfc3339()));
    events_.normal(
        ref, "Draining",
        std::string(marked == "cordoned" ? "cordoning the node" : "the node is cordoned already") +
            (reboot ? "; evicting its pods before it reboots"
                    : "; evicting the pods that use its VFs before they are "
                      "recreated"));
    if (marked == "cordoned") SDRA_RETURN_IF_ERROR(cordon(name, true));
  } else if (drain && marked == "cordoned" && !node->unschedulable) {
    SDRA_RETURN_IF_ERROR(cordon(name, true));
  }
  std::vector<NodePod> in_the_way;
  if (drain || reboot) {
    auto pods = podsInTheWay(name, drain && reboot);
    if (!pods.ok()) return pods.status();
    in_the_way = std::move(*pods);
  }
  if (drain) {
    SDRA_RETURN_IF_ERROR(evictPods(in_the_way, ref));
    SDRA_RETURN_IF_ERROR(reportTimeout(*state, in_the_way, ref));
  }
  SDRA_RETURN_IF_ERROR(grantReboot(*state, reboot, drain, in_the_way, ref));
  return drain || reboot ? ReconcileResult::after(options_.rollout_retry) : ReconcileResult::done();
}

Result<std::vector<NodePod>> DrainReconciler::podsInTheWay(const std::string& node, bool all) {
  if (all) {
    auto list =
        client_.listAll(kube::resources::kPods, "", {.field_selector = "spec.nodeName=" + node});
    if (!list.ok()) return Status(list.status()).prepend("listing the pods of node " + node);
    return podsToDrainForReboot(*list);
  }
  auto claims = caches_.claims.list();
  std::vector<NodePod> out;
  for (auto& pod : podsUsingDevicesOn(node, api::kDriverName, pointers(claims))) {
    out.push_back({std::move(pod), false});
  }
  return out;
}

Status DrainReconciler::grantReboot(const CachedNodeState& state, bool reboot, bool drain,
                                    const std::vector<NodePod>& in_the_way,
                                    const kube::ObjectReference& ref) {
  const std::string& name = state.metadata.name;
  std::string granted = state.metadata.annotation(api::kRebootGrantAnnotation);
  std::string want = reboot ? std::to_string(state.metadata.generation) : "";
  if (granted == want) return Status::ok();
  if (!reboot) return annotate(name, api::kRebootGrantAnnotation, "");
  if (!in_the_way.empty()) {
    if (!drain) {
      std::vector<std::string> names;
      names.reserve(in_the_way.size());
      for (const auto& p : in_the_way) names.push_back(p.pod.namespace_ + "/" + p.pod.name);
      events_.normal(ref, "RebootWaiting",
                     "the node's reboot waits for the pods using its VFs to end (drains are "
                     "off: SriovOperatorConfig disableDrain): " +
                         join(names, ", "));
    }
    return Status::ok();
  }
  SDRA_RETURN_IF_ERROR(annotate(name, api::kRebootGrantAnnotation, want));
  SDRA_LOG_INFO << "node " << name << ": reboot granted for generation " << want;
  events_.normal(ref, "RebootGranted",
                 std::string(drain ? "the node is drained"
                                   : "no pod uses the node's VFs (drains are off, other pods "
                                     "restart with the node)") +
                     "; its agent may reboot it for its firmware or RDMA mode changes");
  return Status::ok();
}

Status DrainReconciler::evictPods(const std::vector<NodePod>& pods,
                                  const kube::ObjectReference& state) {
  std::vector<std::string> blocked;
  for (const auto& [pod, terminating] : pods) {
    if (terminating) continue;
    // A namesake is passed over before the Eviction API sees it: that API would spend its
    // budget, answer 429 or wait out a pending pod before the UID precondition refuses it.
    auto current = client_.get(kube::resources::kPods, pod.namespace_, pod.name);
    if (!current.ok() && current.status().code() == Code::kNotFound) continue;
    if (!current.ok()) return Status(current.status()).prepend("reading pod " + pod.name);
    if (pod.uid.empty() || kube::ObjectMeta::decode(*current).uid != pod.uid) {
      SDRA_LOG_INFO << "pod " << pod.namespace_ << "/" << pod.name << " not evicted: it is not the "
                    << "pod " << (pod.uid.empty() ? "(no UID)" : pod.uid) << " in the way";
      continue;
    }
    Status st = client_.evict(pod.namespace_, pod.name, pod.uid);
    if (st.isOk() || st.code() == Code::kNotFound) continue;
    if (st.code() == Code::kConflict) {
      SDRA_LOG_INFO << "pod " << pod.namespace_ << "/" << pod.name << " not evicted: it is not the "
                    << "pod " << pod.uid << " in the way any more (" << st.message() << ")";
      continue;
    }
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

Status DrainReconciler::reportTimeout(const CachedNodeState& state,
                                      const std::vector<NodePod>& in_the_way,
                                      const kube::ObjectReference& ref) {
  const std::string& name = state.metadata.name;
  std::string started_text = state.metadata.annotation(kDrainStartedAnnotation);
  {
    std::lock_guard lock(mu_);
    if (auto it = drain_started_.find(name); it != drain_started_.end()) started_text = it->second;
  }
  auto started = parseRfc3339(started_text);
  if (!started.ok()) {
    // A mark of an older operator, or one whose start was not written: the drain starts now.
    return annotate(name, kDrainStartedAnnotation, nowRfc3339());
  }
  if (in_the_way.empty()) return Status::ok();
  auto age = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now() - *started);
  if (age < options_.drain_timeout) return Status::ok();
  int64_t periods = age / options_.drain_timeout;
  {
    std::lock_guard lock(mu_);
    int64_t& reported = timeouts_reported_[name];
    if (reported >= periods) return Status::ok();
    reported = periods;
  }
  std::vector<std::string> pods;
  pods.reserve(in_the_way.size());
  for (const auto& p : in_the_way) {
    pods.push_back(p.pod.namespace_ + "/" + p.pod.name + (p.terminating ? " (terminating)" : ""));
  }
  std::string message = "the drain has not ended after ";
  message.append(std::to_string(age.count() / 1000))
      .append(" s: ")
      .append(join(pods, ", "))
      .append(" still on the node; it stays cordoned and its change (and its pool's rollout ")
      .append("slot) waits. The drain goes on and is never forced. Ways out: let the pods go ")
      .append("(delete them, or relax the PodDisruptionBudget or finalizer that holds them), ")
      .append("or undo the policy change that recreates the node's VFs, or turn drains off by ")
      .append("deleting the SriovOperatorConfig default (docs/operator-config.md, Drains)");
  SDRA_LOG_WARN << "node " << name << ": " << message;
  events_.warning(ref, "DrainTimedOut", message);
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

Status DrainReconciler::annotate(const std::string& node, const char* key,
                                 const std::string& value) {
  // A merge patch, not an apply: it never creates a SriovNodeState that went away meanwhile.
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  json::Value annotations(rapidjson::kObjectType);
  annotations.AddMember(json::str(key, a), value.empty() ? json::Value() : json::str(value, a), a);
  json::Value meta(rapidjson::kObjectType);
  meta.AddMember("annotations", annotations, a);
  patch.AddMember("metadata", meta, a);
  auto patched = client_.patch(api::resources::kSriovNodeStates, options_.namespace_, node,
                               kube::PatchType::kMerge, json::dump(patch), {.metadata_only = true});
  if (!patched.ok() && patched.status().code() != Code::kNotFound) return patched.status();
  if (std::string_view(key) == kDrainAnnotation) {
    std::lock_guard lock(mu_);
    marks_[node] = value;
    if (value.empty()) timeouts_reported_.erase(node);
  } else if (std::string_view(key) == kDrainStartedAnnotation) {
    std::lock_guard lock(mu_);
    drain_started_[node] = value;
  }
  return Status::ok();
}

}  // namespace sriovdra::op
