#include "operator/device_class_reconciler.h"

#include <set>

#include "api/names.h"
#include "base/log.h"
#include "policy/device_classes.h"

namespace sriovdra::op {

using kube::ReconcileResult;

Result<ReconcileResult> DeviceClassReconciler::reconcile(const std::string&) {
  auto snapshot = policies_.get();
  auto desired = policy::renderDeviceClasses(snapshot->validated.valid.node_policies,
                                             snapshot->validated.valid.device_attributes,
                                             options_.resource_prefix);
  std::set<std::string> wanted;
  Status refused;  // the first class the API server refused; the others are still written
  for (const auto& d : desired) {
    wanted.insert(d.name);
    auto existing = caches_.classes.get("", d.name);
    if (existing && existing->spec == d.spec) continue;
    auto doc = kube::newObject(api::resources::kDeviceClasses, "", d.name);
    auto& a = doc.GetAllocator();
    api::Writer(doc["metadata"], a).object("labels").strAlways(kManagedByLabel, kManagedByValue);
    d.spec.encode(api::Writer(doc, a).object("spec"));
    auto applied = client_.apply(api::resources::kDeviceClasses, "", doc,
                                 {.field_manager = kFieldManager, .force = true});
    if (!applied.ok()) {
      Status error = applied.status();
      auto result =
          kube::errorResult(error.prepend("DeviceClass " + d.name), std::chrono::minutes(10));
      if (!result.ok()) return result;
      if (refused.isOk()) refused = result->terminal_error;
      continue;
    }
    SDRA_LOG_INFO << "DeviceClass " << d.name << (existing ? " updated" : " created");
  }
  for (const auto& existing : caches_.classes.list()) {
    if (wanted.count(existing->metadata.name) != 0) continue;
    Status st = client_.remove(api::resources::kDeviceClasses, "", existing->metadata.name);
    if (!st.isOk() && st.code() != Code::kNotFound) return st;
    SDRA_LOG_INFO << "DeviceClass " << existing->metadata.name
                  << " deleted: no policy uses its resourceName any more";
  }
  if (!refused.isOk()) return ReconcileResult::terminal(refused, std::chrono::minutes(10));
  return ReconcileResult::done();
}

}  // namespace sriovdra::op
