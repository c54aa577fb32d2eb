#include "cli/objects.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>

#include "api/names.h"
#include "base/files.h"
#include "base/yaml.h"

namespace sriovdra::cli {
namespace {

// T decodes the object; Out is what the bundle keeps (T or a base of it).
template <typename Out, typename T = Out>
Status decodeInto(const json::Value& obj, const std::string& where, std::vector<Out>& out) {
  auto decoded = T::decode(obj);
  if (!decoded.ok())
    return Status(Code::kInvalidArgument, where + ": " + decoded.status().message());
  out.push_back(std::move(*decoded));
  return Status::ok();
}

// JSON input (a .json file, or a text whose first character is '{', as `kubectl get -o json`
// writes) is read by the strict JSON parser: as YAML it would pass with trailing garbage or
// invalid UTF-8.
Result<std::vector<json::Document>> documents(const std::string& path, const std::string& text) {
  auto first = text.find_first_not_of(" \t\r\n");
  bool is_json = path.ends_with(".json") || (first != std::string::npos && text[first] == '{');
  if (!is_json) return yamlToJson(text);
  auto doc = json::parse(text);
  if (!doc.ok()) return doc.status();
  std::vector<json::Document> out;
  out.push_back(std::move(*doc));
  return out;
}

}  // namespace

// Files as given; a directory stands for its *.yaml, *.yml and *.json files in name order.
std::vector<std::string> expandPaths(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (p == "-" || !std::filesystem::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(p, ec)) {
      auto ext = e.path().extension().string();
      auto name = e.path().filename().string();
      if (name == "kustomization.yaml" || name == "kustomization.yml") continue;
      if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
        files.push_back(e.path().string());
      }
    }
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

Result<ObjectBundle> loadObjects(const std::vector<std::string>& given, std::istream& in,
                                 bool with_pods) {
  ObjectBundle bundle;
  for (const auto& path : expandPaths(given)) {
    std::string text;
    if (path == "-") {
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } else {
      auto content = readFile(path);
      if (!content.ok()) return content.status();
      text = std::move(*content);
    }
    auto docs = documents(path, text);
    if (!docs.ok()) return Status(Code::kInvalidArgument, path + ": " + docs.status().message());
    for (const auto& doc : *docs) {
      std::vector<const json::Value*> objects;
      // A kubectl List holds its objects under items.
      if (json::stringOr(doc, "kind").ends_with("List") && json::arrayMember(doc, "items")) {
        for (const auto& item : doc["items"].GetArray()) objects.push_back(&item);
      } else {
        objects.push_back(&doc);
      }
      for (const json::Value* obj : objects) {
        std::string kind(json::stringOr(*obj, "kind"));
        std::string name = kube::ObjectMeta::decode(*obj).name;
        std::string where = path;
        where.append(": ").append(kind).append(" ").append(name);
        Status st;
        if (kind == "SriovNetworkNodePolicy") {
          st = decodeInto(*obj, where, bundle.node_policies);
        } else if (kind == "SriovResourcePolicy") {
          st = decodeInto(*obj, where, bundle.resource_policies);
        } else if (kind == "DeviceAttributes") {
          st = decodeInto(*obj, where, bundle.device_attributes);
        } else if (kind == "SriovNetwork") {
          st = decodeInto<api::Network, api::SriovNetwork>(*obj, where, bundle.networks);
        } else if (kind == "SriovIBNetwork") {
          st = decodeInto<api::Network, api::SriovIBNetwork>(*obj, where, bundle.networks);
        } else if (kind == "SriovOperatorConfig") {
          st = decodeInto(*obj, where, bundle.operator_configs);
        } else if (kind == "SriovNetworkPoolConfig") {
          st = decodeInto(*obj, where, bundle.pool_configs);
        } else if (kind == "Node") {
          st = decodeInto(*obj, where, bundle.nodes);
        } else if (kind == "SriovNodeState" || kind == "SriovNetworkNodeState") {
          st = decodeInto(*obj, where, bundle.node_states);
        } else if (kind == "ResourceSlice") {
          st = decodeInto(*obj, where, bundle.resource_slices);
        } else if (kind == "DeviceTaintRule") {
          st = decodeInto(*obj, where, bundle.device_taint_rules);
        } else if (kind == "DeviceClass") {
          st = decodeInto(*obj, where, bundle.device_classes);
        } else if (kind == "ResourceClaim") {
          st = decodeInto(*obj, where, bundle.resource_claims);
        } else if (kind == "ResourceClaimTemplate") {
          st = decodeInto(*obj, where, bundle.resource_claim_templates);
        } else if (with_pods && api::PodResources::reads(*obj)) {
          st = decodeInto(*obj, where, bundle.pods);
        } else {
          std::string skipped = kind.empty() ? "(no kind)" : kind;
          skipped.append("/").append(name).append(" (").append(path).append(")");
          bundle.skipped.push_back(std::move(skipped));
        }
        SDRA_RETURN_IF_ERROR(st);
      }
    }
  }
  api::applyTaintRules(bundle.device_taint_rules, bundle.resource_slices);
  return bundle;
}

Result<ObjectBundle> loadCluster(kube::Client& client) {
  ObjectBundle bundle;
  auto read = [&](const kube::ResourceType& rt, auto& into) -> Status {
    auto list = client.listAll(rt, "");
    if (!list.ok()) {
      return Status(list.status().code(),
                    "listing " + rt.qualifiedName() + ": " + list.status().message());
    }
    for (const auto& item : (*list)["items"].GetArray()) {
      std::string where = rt.qualifiedName() + " " + kube::ObjectMeta::decode(item).name;
      if (Status st = decodeInto(item, where, into); !st.isOk()) {
        bundle.skipped.push_back(st.message());
      }
    }
    return Status::ok();
  };
  SDRA_RETURN_IF_ERROR(read(kube::resources::kNodes, bundle.nodes));
  SDRA_RETURN_IF_ERROR(read(api::resources::kSriovNodeStates, bundle.node_states));
  SDRA_RETURN_IF_ERROR(read(api::resources::kResourceSlices, bundle.resource_slices));
  SDRA_RETURN_IF_ERROR(read(api::resources::kDeviceClasses, bundle.device_classes));
  SDRA_RETURN_IF_ERROR(read(api::resources::kResourceClaims, bundle.resource_claims));
  // Served from Kubernetes 1.37 on; before, or without the right to list them, the devices'
  // own taints are all there is, and the output says so.
  Status rules = read(api::resources::kDeviceTaintRules, bundle.device_taint_rules);
  if (rules.code() == Code::kNotFound) {
    bundle.skipped.push_back(
        "DeviceTaintRules: this API server does not serve resource.k8s.io/v1 devicetaintrules "
        "(Kubernetes before 1.37); only the taints in ResourceSlices are considered");
  } else if (rules.code() == Code::kForbidden) {
    bundle.skipped.push_back(
        "DeviceTaintRules: " + rules.message() +
        "; the taints they add are not considered (grant list on "
        "devicetaintrules.resource.k8s.io to see devices as kube-scheduler does)");
  } else {
    SDRA_RETURN_IF_ERROR(rules);
  }
  api::applyTaintRules(bundle.device_taint_rules, bundle.resource_slices);
  return bundle;
}

}  // namespace sriovdra::cli
