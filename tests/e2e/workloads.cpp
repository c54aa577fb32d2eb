#include "e2e/workloads.h"

#include <stdexcept>

#include "api/names.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/operator_env.h"

namespace sriovdra::testing {
namespace {

using namespace std::chrono_literals;

// Scheduling a pod with claims takes the resourceclaim controller and one scheduling cycle.
constexpr auto kSchedulingTimeout = 60s;

const json::Value* podScheduledCondition(const json::Value& pod) {
  const json::Value* conds = json::at(pod, {"status", "conditions"});
  if (conds == nullptr || !conds->IsArray()) return nullptr;
  for (const auto& c : conds->GetArray()) {
    if (json::stringOr(c, "type") == "PodScheduled") return &c;
  }
  return nullptr;
}

}  // namespace

ControlPlane& schedulingControlPlane() {
  static std::unique_ptr<ControlPlane> cp = [] {
    auto options = OperatorEnv::controlPlaneOptions();
    options.controller_manager = true;
    options.scheduler = true;
    return ControlPlane::start(options);
  }();
  return *cp;
}

Workloads::Workloads(ControlPlane& cp, std::string ns,
                     std::map<std::string, std::string> node_selector)
    : cp_(cp), admin_(cp.client()), ns_(std::move(ns)), node_selector_(std::move(node_selector)) {}

void Workloads::createPod(const std::string& name, const std::string& spec) {
  std::string selector;
  for (const auto& [k, v] : node_selector_) {
    if (!selector.empty()) selector += ",";
    selector.append("\"").append(k).append("\":\"").append(v).append("\"");
  }
  auto doc = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                         R"("},"spec":{"nodeSelector":{)" + selector + "}," + spec + "}}");
  if (!doc.ok()) throw std::logic_error(doc.status().toString());
  auto created = admin_->create(kube::resources::kPods, ns_, *doc);
  if (!created.ok()) throw std::runtime_error("pod " + name + ": " + created.status().toString());
}

namespace {

// The spec members of a pod whose one container uses the claim "gpu-nic" from this source.
std::string withClaim(const std::string& claim_source) {
  return R"("resourceClaims":[{"name":"gpu-nic",)" + claim_source +
         R"(}],"containers":[{"name":"inference","image":"registry.k8s.io/pause:3.10",)"
         R"("resources":{"claims":[{"name":"gpu-nic"}]}}])";
}

}  // namespace

void Workloads::podFromTemplate(const std::string& pod, const std::string& claim_template) {
  createPod(pod, withClaim(R"("resourceClaimTemplateName":")" + claim_template + "\""));
}

void Workloads::podWithClaim(const std::string& pod, const std::string& claim) {
  createPod(pod, withClaim(R"("resourceClaimName":")" + claim + "\""));
}

void Workloads::podWithContainers(const std::string& pod, const std::string& containers_json) {
  createPod(pod, R"("containers":)" + containers_json);
}

void Workloads::claim(const std::string& name, const std::string& spec_yaml) {
  json::Document doc = yamlObject(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
      "metadata: {name: " +
      name + "}\nspec:\n" + spec_yaml);
  auto created = admin_->create(api::resources::kResourceClaims, ns_, doc);
  if (!created.ok()) throw std::runtime_error("claim " + name + ": " + created.status().toString());
}

json::Document Workloads::pod(const std::string& name) const {
  auto got = admin_->get(kube::resources::kPods, ns_, name);
  if (!got.ok()) throw std::runtime_error("pod " + name + ": " + got.status().toString());
  return std::move(*got);
}

Workloads::Outcome Workloads::waitOutcome(const std::string& name) {
  Outcome out;
  std::string seen;
  eventually(
      [&] {
        auto p = pod(name);
        seen = json::dump(p["status"]);
        out.node = std::string(json::stringOr(p["spec"], "nodeName"));
        if (!out.node.empty()) return true;
        const json::Value* c = podScheduledCondition(p);
        std::string_view reason = c != nullptr ? json::stringOr(*c, "reason") : "";
        std::string message = c != nullptr ? std::string(json::stringOr(*c, "message")) : "";
        if (reason == "Unschedulable") out.unschedulable_message = message;
        if (reason == "SchedulerError") out.error = message;
        return reason == "Unschedulable" || reason == "SchedulerError";
      },
      kSchedulingTimeout,
      [&] { return "pod " + name + " neither scheduled, Unschedulable nor failed: " + seen; });
  return out;
}

std::string Workloads::waitScheduled(const std::string& name) {
  // Not waitOutcome(): a pod can be Unschedulable for a moment, until the scheduler has seen the
  // slices it needs; it retries then.
  std::string node, seen;
  eventually(
      [&] {
        auto p = pod(name);
        node = std::string(json::stringOr(p["spec"], "nodeName"));
        seen = json::dump(p["status"]);
        return !node.empty();
      },
      kSchedulingTimeout, [&] { return "pod " + name + " not scheduled: " + seen; });
  return node;
}

std::string Workloads::waitUnschedulable(const std::string& name) {
  auto out = waitOutcome(name);
  if (!out.node.empty()) throw std::runtime_error("pod " + name + " was bound to " + out.node);
  return out.unschedulable_message;
}

api::ResourceClaim Workloads::claimOf(const std::string& pod_name) {
  std::string claim;
  eventually(
      [&] {
        auto p = pod(pod_name);
        const json::Value* statuses = json::at(p, {"status", "resourceClaimStatuses"});
        if (statuses != nullptr && statuses->IsArray() && !statuses->Empty()) {
          claim = std::string(json::stringOr((*statuses)[0], "resourceClaimName"));
        } else if (const json::Value* named = json::at(p, {"spec", "resourceClaims"})) {
          claim = std::string(json::stringOr((*named)[0], "resourceClaimName"));
        }
        return !claim.empty();
      },
      kSchedulingTimeout, [&] { return "pod " + pod_name + " has no claim"; });
  auto got = admin_->get(api::resources::kResourceClaims, ns_, claim);
  if (!got.ok()) throw std::runtime_error("claim " + claim + ": " + got.status().toString());
  auto decoded = api::ResourceClaim::decode(*got);
  if (!decoded.ok()) throw std::runtime_error(decoded.status().toString());
  return std::move(*decoded);
}

std::string Workloads::attribute(const api::DeviceRequestAllocationResult& device,
                                 const std::string& name) const {
  auto list = admin_->listAll(api::resources::kResourceSlices, "",
                              {.field_selector = "spec.driver=" + device.driver});
  if (!list.ok()) throw std::runtime_error(list.status().toString());
  for (const auto& item : (*list)["items"].GetArray()) {
    auto slice = api::ResourceSlice::decode(item);
    if (!slice.ok() || slice->spec.pool.name != device.pool) continue;
    for (const auto& d : slice->spec.devices) {
      if (d.name != device.device) continue;
      auto it = d.attributes.find(name);
      return it == d.attributes.end() ? "" : it->second.toString();
    }
  }
  return "";
}

}  // namespace sriovdra::testing
