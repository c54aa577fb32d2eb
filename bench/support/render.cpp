#include "support/render.h"

#include "base/yaml.h"
#include "operator/node_state_reconciler.h"
#include "policy/policy_set.h"
#include "support/floor.h"

namespace sriovdra::bench {
namespace {

template <typename T>
std::vector<T> decodeAll(const std::vector<json::Document>& docs, const std::string& kind) {
  std::vector<T> out;
  for (const auto& d : docs) {
    if (json::stringOr(d, "kind") != kind) continue;
    auto v = T::decode(d);
    mustBeOk(v.status(), "decoding a " + kind);
    out.push_back(std::move(*v));
  }
  return out;
}

}  // namespace

api::SriovNodeStateSpec renderFromYaml(const api::Node& node, const std::string& policies_yaml,
                                       const api::SriovNodeStateStatus& discovered) {
  auto docs = yamlToJson(policies_yaml);
  mustBeOk(docs.status(), "parsing policies");
  auto node_policies = decodeAll<api::SriovNetworkNodePolicy>(*docs, "SriovNetworkNodePolicy");
  auto resource_policies = decodeAll<api::SriovResourcePolicy>(*docs, "SriovResourcePolicy");
  auto attributes = decodeAll<api::DeviceAttributes>(*docs, "DeviceAttributes");
  policy::Policies all;
  for (const auto& p : node_policies) all.node_policies.push_back(&p);
  for (const auto& p : resource_policies) all.resource_policies.push_back(&p);
  for (const auto& p : attributes) all.device_attributes.push_back(&p);
  auto validated = policy::validatePolicies(all);
  if (!validated.invalid.empty()) {
    mustBeOk(Status(Code::kInvalidArgument, "the bench's policies are invalid: " +
                                                validated.invalid.front().errors.front()),
             "rendering");
  }
  return policy::render(node, validated.valid, discovered, {}).spec;
}

json::Document nodeStateObject(const std::string& ns, const api::Node& node,
                               const std::string& spec_json) {
  op::NodeStateDocument object(spec_json);
  auto doc = json::parse(object.under(ns, node, false, nullptr));
  mustBeOk(doc.status(), "encoding the SriovNodeState of " + node.metadata.name);
  return std::move(*doc);
}

}  // namespace sriovdra::bench
