#include "operator/admission.h"

#include "base/base64.h"
#include "base/strings.h"
#include "policy/networks.h"
#include "policy/operator_config.h"
#include "policy/validate.h"

namespace sriovdra::op {
namespace {

std::string joinErrors(const std::string& what, const std::vector<std::string>& errors) {
  return what + " is invalid: " + join(errors, "; ");
}

AdmissionDecision deny(std::string message) { return {false, 422, std::move(message), {}, ""}; }

template <typename T>
Result<T> decodeObject(const AdmissionRequest& req) {
  auto decoded = T::decode(req.object);
  if (!decoded.ok()) {
    return Status(Code::kInvalidArgument, decoded.status().message());
  }
  return decoded;
}

template <typename T>
Result<api::Network> decodeNetwork(const AdmissionRequest& req) {
  auto n = decodeObject<T>(req);
  if (!n.ok()) return n.status();
  return api::Network(*n);
}

}  // namespace

Result<AdmissionRequest> parseAdmissionReview(std::string_view body) {
  auto doc = json::parse(body);
  if (!doc.ok()) return doc.status();
  const json::Value* req = json::objectMember(*doc, "request");
  if (req == nullptr) {
    return Status(Code::kInvalidArgument, "not an AdmissionReview: no request");
  }
  AdmissionRequest out;
  out.uid = json::stringOr(*req, "uid");
  out.operation = json::stringOr(*req, "operation");
  out.namespace_ = json::stringOr(*req, "namespace");
  if (const json::Value* kind = json::objectMember(*req, "kind")) {
    out.kind = json::stringOr(*kind, "kind");
  }
  if (const json::Value* obj = json::member(*req, "object"); obj != nullptr && obj->IsObject()) {
    out.object.CopyFrom(*obj, out.object.GetAllocator());
  }
  if (out.uid.empty()) return Status(Code::kInvalidArgument, "AdmissionReview request has no uid");
  return out;
}

std::string admissionReviewResponse(const std::string& uid, const AdmissionDecision& d) {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::setString(doc, "apiVersion", "admission.k8s.io/v1", a);
  json::setString(doc, "kind", "AdmissionReview", a);
  json::Value resp(rapidjson::kObjectType);
  json::setString(resp, "uid", uid, a);
  resp.AddMember("allowed", d.allowed, a);
  if (!d.allowed) {
    json::Value status(rapidjson::kObjectType);
    status.AddMember("code", d.code, a);
    json::setString(status, "reason", d.code == 422 ? "Invalid" : "BadRequest", a);
    json::setString(status, "message", d.message, a);
    resp.AddMember("status", status, a);
  }
  if (!d.warnings.empty()) {
    json::Value warnings(rapidjson::kArrayType);
    for (const auto& w : d.warnings) warnings.PushBack(json::str(w, a), a);
    resp.AddMember("warnings", warnings, a);
  }
  if (!d.json_patch.empty()) {
    json::setString(resp, "patchType", "JSONPatch", a);
    json::setString(resp, "patch", base64Encode(d.json_patch), a);
  }
  doc.AddMember("response", resp, a);
  return json::dump(doc);
}

AdmissionDecision mutatePolicy(const AdmissionRequest& req) {
  if (req.kind != "SriovNetworkNodePolicy" || req.object.IsNull()) return {};
  auto p = decodeObject<api::SriovNetworkNodePolicy>(req);
  if (!p.ok()) return {};  // the validating webhook reports it
  auto defaults = policy::nodePolicyDefaults(p->spec);
  json::Document patch(rapidjson::kArrayType);
  auto& a = patch.GetAllocator();
  auto op = [&](const char* path, json::Value value) {
    json::Value o(rapidjson::kObjectType);
    json::setString(o, "op", "add", a);  // "add" replaces an existing member too
    json::setString(o, "path", path, a);
    o.AddMember("value", value, a);
    patch.PushBack(o, a);
  };
  if (!json::objectMember(req.object, "spec")) return {};
  if (defaults.set_priority) op("/spec/priority", json::Value(99));
  if (defaults.set_is_rdma) op("/spec/isRdma", json::Value(*defaults.set_is_rdma));
  AdmissionDecision d;
  if (!patch.Empty()) d.json_patch = json::dump(patch);
  return d;
}

AdmissionDecision validatePolicy(const AdmissionRequest& req, const ValidationContext& ctx) {
  if (req.operation == "DELETE" || req.object.IsNull()) return {};
  if (!ctx.upstream_namespace.empty() && req.namespace_ == ctx.upstream_namespace &&
      json::stringOr(req.object, "apiVersion").starts_with("sriovnetwork.openshift.io/")) {
    return {};
  }
  policy::Findings f;
  std::string what;
  if (req.kind == "SriovNetworkNodePolicy") {
    auto p = decodeObject<api::SriovNetworkNodePolicy>(req);
    if (!p.ok()) return deny("SriovNetworkNodePolicy: " + p.status().message());
    what = "SriovNetworkNodePolicy \"" + p->metadata.name + "\"";
    f = req.namespace_ == ctx.operator_namespace
            ? policy::validateNodePolicyInCluster(*p, ctx.cluster)
            : policy::validateNodePolicy(*p);
  } else if (req.kind == "SriovResourcePolicy") {
    auto p = decodeObject<api::SriovResourcePolicy>(req);
    if (!p.ok()) return deny("SriovResourcePolicy: " + p.status().message());
    what = "SriovResourcePolicy \"" + p->metadata.name + "\"";
    f = policy::validateResourcePolicy(*p);
  } else if (req.kind == "SriovNetwork" || req.kind == "SriovIBNetwork") {
    auto n = req.kind == "SriovNetwork" ? decodeNetwork<api::SriovNetwork>(req)
                                        : decodeNetwork<api::SriovIBNetwork>(req);
    if (!n.ok()) return deny(req.kind + ": " + n.status().message());
    auto f = policy::validateNetwork(*n, ctx.operator_namespace);
    if (!f.ok()) return deny(joinErrors(req.kind + " \"" + n->metadata.name + "\"", f.errors));
    return {};
  } else if (req.kind == "SriovOperatorConfig") {
    auto c = decodeObject<api::SriovOperatorConfig>(req);
    if (!c.ok()) return deny("SriovOperatorConfig: " + c.status().message());
    c->metadata.namespace_ = req.namespace_;
    what = "SriovOperatorConfig \"" + c->metadata.name + "\"";
    f = policy::validateOperatorConfig(*c, ctx.operator_namespace);
    if (f.ok()) {
      auto refused = policy::refuseDrainDisable(ctx.operator_config, *c, ctx.nodes_in_progress);
      if (!refused.empty()) f.errors.push_back(refused);
    }
  } else if (req.kind == "SriovNetworkPoolConfig") {
    auto p = decodeObject<api::SriovNetworkPoolConfig>(req);
    if (!p.ok()) return deny("SriovNetworkPoolConfig: " + p.status().message());
    what = "SriovNetworkPoolConfig \"" + p->metadata.name + "\"";
    f = policy::validatePoolConfig(*p);
  } else if (req.kind == "DeviceAttributes") {
    auto d = decodeObject<api::DeviceAttributes>(req);
    if (!d.ok()) return deny("DeviceAttributes: " + d.status().message());
    what = "DeviceAttributes \"" + d->metadata.name + "\"";
    f = policy::validateDeviceAttributes(*d);
  } else {
    return {};
  }
  if (!f.ok()) return deny(joinErrors(what, f.errors));
  AdmissionDecision d;
  d.warnings = f.warnings;
  if (req.namespace_ != ctx.operator_namespace) {
    d.warnings.push_back(what + " was created in namespace \"" + req.namespace_ +
                         "\" but is not used: only policies in namespace \"" +
                         ctx.operator_namespace + "\" count");
  }
  return d;
}

}  // namespace sriovdra::op
