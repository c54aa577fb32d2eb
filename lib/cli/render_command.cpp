#include <iostream>

#include "api/names.h"
#include "base/yaml.h"
#include "cli/commands.h"
#include "cli/objects.h"
#include "policy/policy_set.h"

namespace sriovdra::cli {
namespace {

template <typename T>
std::vector<const T*> inNamespace(const std::vector<T>& items, const std::string& ns) {
  std::vector<const T*> out;
  for (const auto& i : items) {
    if (ns.empty() || i.metadata.namespace_ == ns) out.push_back(&i);
  }
  return out;
}

json::Value policyRef(const policy::PolicyRef& ref, json::Allocator& a) {
  json::Value o(rapidjson::kObjectType);
  api::Writer(o, a).strAlways("kind", ref.kind).strAlways("name", ref.name);
  return o;
}

}  // namespace

int runRender(const RenderArgs& args, Streams io) {
  if (args.output != "yaml" && args.output != "json") {
    io.err << "error: -o must be yaml or json\n";
    return 1;
  }
  std::vector<std::string> files = args.policy_files;
  files.push_back(args.node_file);
  if (!args.state_file.empty()) files.push_back(args.state_file);
  auto bundle = loadObjects(files, io.in);
  if (!bundle.ok()) {
    io.err << "error: " << bundle.status().message() << "\n";
    return 1;
  }
  if (bundle->nodes.size() != 1) {
    io.err << "error: --node must hold exactly one Node, found " << bundle->nodes.size() << "\n";
    return 1;
  }
  const api::Node& node = bundle->nodes[0];
  api::SriovNodeStateStatus discovered;
  if (!bundle->node_states.empty()) discovered = bundle->node_states[0].status;
  if (discovered.interfaces.empty()) {
    io.err << "warning: no discovered interfaces (status.interfaces) for node "
           << node.metadata.name << ": no PF can match, so the spec has no interfaces\n";
  }

  policy::Policies all{inNamespace(bundle->node_policies, args.namespace_),
                       inNamespace(bundle->resource_policies, args.namespace_),
                       inNamespace(bundle->device_attributes, args.namespace_)};
  auto validated = policy::validatePolicies(all);
  auto result = policy::render(node, validated.valid, discovered,
                               {args.resource_prefix, args.advertise_node_policy_vfs});

  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::Value state(kube::newObject(api::resources::kSriovNodeStates, "", node.metadata.name), a);
  result.spec.encode(api::Writer(state, a).object("spec"));
  doc.AddMember("nodeState", state, a);

  json::Value conflicts(rapidjson::kArrayType);
  for (const auto& c : result.conflicts) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("loser", policyRef(c.loser, a), a);
    api::Writer(o, a)
        .strAlways("winner", c.winner)
        .strAlways("target", c.target)
        .strAlways("reason", c.reason);
    conflicts.PushBack(o, a);
  }
  doc.AddMember("conflicts", conflicts, a);
  json::Value warnings(rapidjson::kArrayType);
  auto addWarning = [&](const policy::PolicyRef& ref, const std::string& message) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("policy", policyRef(ref, a), a);
    api::Writer(o, a).strAlways("message", message);
    warnings.PushBack(o, a);
  };
  for (const auto& w : validated.warnings) addWarning(w.policy, w.message);
  for (const auto& w : result.warnings) addWarning(w.policy, w.message);
  doc.AddMember("warnings", warnings, a);
  json::Value invalid(rapidjson::kArrayType);
  for (const auto& inv : validated.invalid) {
    json::Value o(rapidjson::kObjectType);
    o.AddMember("policy", policyRef(inv.policy, a), a);
    api::Writer(o, a).strings("errors", inv.errors);
    invalid.PushBack(o, a);
  }
  doc.AddMember("invalid", invalid, a);

  if (args.output == "json") {
    io.out << json::dump(doc) << "\n";
  } else {
    io.out << jsonToYaml(doc);
  }
  for (const auto& s : bundle->skipped) io.err << "note: ignored " << s << "\n";
  return 0;
}

}  // namespace sriovdra::cli
