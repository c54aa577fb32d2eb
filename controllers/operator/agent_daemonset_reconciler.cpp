#include "operator/agent_daemonset_reconciler.h"

#include "base/yaml.h"
#include "operator/caches.h"
#include "operator/operator_config_reconciler.h"

namespace sriovdra::op {

Result<json::Document> loadAgentDaemonSet(const std::string& yaml, const std::string& where) {
  auto docs = yamlToJson(yaml);
  if (!docs.ok()) return Status(Code::kInvalidArgument, where + ": " + docs.status().message());
  for (auto& d : *docs) {
    if (json::stringOr(d, "kind") != "DaemonSet") continue;
    if (json::stringOr(d, "apiVersion") != "apps/v1" || kube::ObjectMeta::decode(d).name.empty()) {
      return Status(Code::kInvalidArgument,
                    where + ": the DaemonSet needs apiVersion apps/v1 and metadata.name");
    }
    const json::Value* containers = json::at(d, {"spec", "template", "spec", "containers"});
    if (containers == nullptr || !containers->IsArray() || containers->Empty()) {
      return Status(Code::kInvalidArgument,
                    where + ": the DaemonSet has no spec.template.spec.containers");
    }
    return std::move(d);
  }
  return Status(Code::kInvalidArgument, where + " holds no DaemonSet");
}

Result<kube::ReconcileResult> AgentDaemonSetReconciler::reconcile(const std::string&) {
  auto copied = json::parse(json::dump(*options_.agent_daemonset));
  if (!copied.ok()) return copied.status();
  json::Document& ds = *copied;
  auto& md = json::ensureObject(ds, "metadata", ds.GetAllocator());
  json::setString(md, "namespace", options_.namespace_, ds.GetAllocator());
  auto& pod = ds["spec"]["template"]["spec"];
  if (!options_.agent_install_cni_plugins) pod.RemoveMember("initContainers");
  if (!options_.agent_image.empty()) {
    json::setString(pod["containers"][0], "image", options_.agent_image, ds.GetAllocator());
    if (auto inits = pod.FindMember("initContainers");
        inits != pod.MemberEnd() && inits->value.IsArray()) {
      for (auto& c : inits->value.GetArray()) {
        json::setString(c, "image", options_.agent_image, ds.GetAllocator());
      }
    }
  }
  if (!options_.agent_cni_bin_dir.empty()) {
    if (auto volumes = pod.FindMember("volumes");
        volumes != pod.MemberEnd() && volumes->value.IsArray()) {
      for (auto& v : volumes->value.GetArray()) {
        if (json::stringOr(v, "name") != "cni-bin") continue;
        json::setString(json::ensureObject(v, "hostPath", ds.GetAllocator()), "path",
                        options_.agent_cni_bin_dir, ds.GetAllocator());
      }
    }
  }
  if (auto config = appliedConfig(caches_, options_)) {
    auto& selector = json::ensureObject(pod, "nodeSelector", ds.GetAllocator());
    for (const auto& [k, v] : config->spec.config_daemon_node_selector) {
      json::setString(selector, k, v, ds.GetAllocator());
    }
  }
  auto applied = client_.apply(kDaemonSets, options_.namespace_, ds,
                               {.field_manager = kFieldManager, .force = true});
  // Also re-applied every 10 minutes, so a change the watch missed is undone (and a refusal is
  // tried again: an admission policy may have changed).
  constexpr std::chrono::minutes kReapply{10};
  if (!applied.ok()) return kube::errorResult(applied.status(), kReapply);
  return kube::ReconcileResult::after(kReapply);
}

}  // namespace sriovdra::op
