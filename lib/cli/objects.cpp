#include "cli/objects.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>

#include "base/files.h"
#include "base/yaml.h"

namespace sriovdra::cli {
namespace {

template <typename T>
Status decodeInto(const json::Value& obj, const std::string& where, std::vector<T>& out) {
  auto decoded = T::decode(obj);
  if (!decoded.ok())
    return Status(Code::kInvalidArgument, where + ": " + decoded.status().message());
  out.push_back(std::move(*decoded));
  return Status::ok();
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

Result<ObjectBundle> loadObjects(const std::vector<std::string>& given, std::istream& in) {
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
    auto docs = yamlToJson(text);
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
        std::string where = path + ": " + kind + " " + name;
        Status st;
        if (kind == "SriovNetworkNodePolicy") {
          st = decodeInto(*obj, where, bundle.node_policies);
        } else if (kind == "SriovResourcePolicy") {
          st = decodeInto(*obj, where, bundle.resource_policies);
        } else if (kind == "DeviceAttributes") {
          st = decodeInto(*obj, where, bundle.device_attributes);
        } else if (kind == "Node") {
          st = decodeInto(*obj, where, bundle.nodes);
        } else if (kind == "SriovNodeState" || kind == "SriovNetworkNodeState") {
          st = decodeInto(*obj, where, bundle.node_states);
        } else {
          bundle.skipped.push_back((kind.empty() ? "(no kind)" : kind) + "/" + name + " (" + path +
                                   ")");
        }
        SDRA_RETURN_IF_ERROR(st);
      }
    }
  }
  return bundle;
}

}  // namespace sriovdra::cli
