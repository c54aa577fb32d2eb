#include <iostream>

#include "base/pointers.h"
#include "cli/commands.h"
#include "cli/objects.h"
#include "policy/networks.h"
#include "policy/operator_config.h"
#include "policy/policy_set.h"

namespace sriovdra::cli {

int runValidate(const ValidateArgs& args, Streams io) {
  if (args.files.empty()) {
    io.err << "error: give the files to check with -f\n";
    return 1;
  }
  auto bundle = loadObjects(args.files, io.in);
  if (!bundle.ok()) {
    io.err << "error: " << bundle.status().message() << "\n";
    return 1;
  }
  struct Line {
    std::string object;
    std::string level;  // error | warning
    std::string message;
  };
  std::vector<Line> lines;
  int checked = 0;
  auto report = [&](const std::string& object, const policy::Findings& f) {
    ++checked;
    for (const auto& e : f.errors) lines.push_back({object, "error", e});
    for (const auto& w : f.warnings) lines.push_back({object, "warning", w});
  };
  policy::ClusterView cluster{pointers(bundle->node_policies), pointers(bundle->nodes),
                              api::reportsOf(pointers(bundle->node_states))};
  for (const auto& p : bundle->node_policies) {
    report("SriovNetworkNodePolicy/" + p.metadata.name,
           policy::validateNodePolicyInCluster(p, cluster));
  }
  for (auto n : bundle->networks) {
    if (n.metadata.namespace_.empty()) n.metadata.namespace_ = args.namespace_;
    report(std::string(n.kindName()) + "/" + n.metadata.name,
           policy::validateNetwork(n, args.namespace_));
  }
  for (const auto& p : bundle->resource_policies) {
    report("SriovResourcePolicy/" + p.metadata.name, policy::validateResourcePolicy(p));
  }
  for (const auto& d : bundle->device_attributes) {
    report("DeviceAttributes/" + d.metadata.name, policy::validateDeviceAttributes(d));
  }
  for (auto c : bundle->operator_configs) {
    if (c.metadata.namespace_.empty()) c.metadata.namespace_ = args.namespace_;
    report("SriovOperatorConfig/" + c.metadata.name,
           policy::validateOperatorConfig(c, args.namespace_));
  }
  for (const auto& p : bundle->pool_configs) {
    report("SriovNetworkPoolConfig/" + p.metadata.name, policy::validatePoolConfig(p));
  }
  int errors = 0;
  for (const auto& l : lines) errors += l.level == "error" ? 1 : 0;
  if (args.output == "json") {
    json::Document doc(rapidjson::kArrayType);
    auto& a = doc.GetAllocator();
    for (const auto& l : lines) {
      json::Value o(rapidjson::kObjectType);
      json::setString(o, "object", l.object, a);
      json::setString(o, "level", l.level, a);
      json::setString(o, "message", l.message, a);
      doc.PushBack(o, a);
    }
    io.out << json::dump(doc) << "\n";
  } else {
    for (const auto& l : lines) io.out << l.object << ": " << l.level << ": " << l.message << "\n";
    io.out << checked << " object(s) checked, " << errors << " error(s), "
           << (lines.size() - static_cast<size_t>(errors)) << " warning(s)\n";
  }
  for (const auto& s : bundle->skipped) io.err << "note: ignored " << s << "\n";
  return errors == 0 ? 0 : 1;
}

}  // namespace sriovdra::cli
