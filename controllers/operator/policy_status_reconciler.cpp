#include "operator/policy_status_reconciler.h"

#include <set>

#include "api/names.h"
#include "base/time.h"
#include "operator/policy_status.h"

namespace sriovdra::op {
using kube::ReconcileResult;

Result<ReconcileResult> PolicyStatusReconciler::reconcile(const std::string& key) {
  auto slash = key.find('/');
  std::string kind = key.substr(0, slash);
  std::string name = key.substr(slash + 1);
  const kube::ResourceType* rt = nullptr;
  kube::ObjectMeta meta;
  api::PolicyStatus current;
  if (kind == policy::kNodePolicyKind) {
    auto p = caches_.node_policies.get(options_.namespace_, name);
    if (!p) return ReconcileResult::done();
    rt = &api::resources::kSriovNetworkNodePolicies;
    meta = p->metadata;
    current = p->status;
  } else if (kind == policy::kResourcePolicyKind) {
    auto p = caches_.resource_policies.get(options_.namespace_, name);
    if (!p) return ReconcileResult::done();
    rt = &api::resources::kSriovResourcePolicies;
    meta = p->metadata;
    current = p->status;
  } else {
    auto d = caches_.device_attributes.get(options_.namespace_, name);
    if (!d) return ReconcileResult::done();
    rt = &api::resources::kDeviceAttributes;
    meta = d->metadata;
    current = d->status;
  }
  policy::PolicyRef ref{kind, name};
  PolicyFacts facts;
  facts.ref = ref;
  facts.generation = meta.generation;
  auto snapshot = policies_.get();
  for (const auto& inv : snapshot->validated.invalid) {
    if (inv.policy == ref) facts.errors = inv.errors;
  }
  std::set<std::string> warnings;
  for (const auto& w : snapshot->validated.warnings) {
    if (w.policy == ref) warnings.insert(w.message);
  }
  facts_.addTo(ref, facts, warnings);
  facts.warnings.assign(warnings.begin(), warnings.end());
  auto computed = computePolicyStatus(facts, current, nowRfc3339());
  if (computed == current) return ReconcileResult::done();

  auto doc = kube::newObject(*rt, options_.namespace_, name);
  computed.encode(api::Writer(doc, doc.GetAllocator()).object("status"));
  auto applied = client_.apply(
      *rt, options_.namespace_, doc,
      {.field_manager = kFieldManager, .force = true, .metadata_only = true}, "status");
  if (!applied.ok()) {
    if (applied.status().code() == Code::kNotFound) return ReconcileResult::done();
    return applied.status();
  }
  // Events for what changed, on the policy itself.
  auto ref_obj = kube::ObjectReference::of(*rt, meta);
  for (const auto& c : computed.conditions) {
    const api::Condition* before = api::findCondition(current.conditions, c.type);
    bool changed = before == nullptr || before->status != c.status || before->reason != c.reason;
    if (!changed) continue;
    bool degraded =
        c.type == "Degraded" && (c.status == "True" || c.reason == "AppliedWithWarnings");
    bool not_ready = c.type == "Ready" && c.status == "False" && c.reason != "InvalidSpec";
    if (degraded || not_ready) {
      events_.warning(ref_obj, c.reason, c.message);
    } else if (c.type == "Ready" && c.status == "True") {
      events_.normal(ref_obj, c.reason, c.message);
    }
  }
  return ReconcileResult::done();
}

}  // namespace sriovdra::op
