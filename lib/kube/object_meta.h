#pragma once
// metav1.ObjectMeta (the fields controllers use) and its JSON codec, plus object keys
// ("namespace/name", or "name" for cluster-scoped objects) as client-go's cache names them.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "kube/resource.h"

namespace sriovdra::kube {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::string creation_timestamp;
  std::string deletion_timestamp;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;

  // Reads obj["metadata"]; missing fields stay empty.
  static ObjectMeta decode(const json::Value& obj);
  // Writes the set fields into a metadata object (server-owned fields only when set).
  void encode(json::Value& metadata, json::Allocator& a) const;
  std::string key() const;
  // The annotation's value, "" when there is none.
  std::string annotation(const std::string& key) const;
  // `owner` becomes the first owner, in place of any other of its apiVersion and kind.
  void setOwner(const OwnerReference& owner);
  bool operator==(const ObjectMeta&) const = default;
};

// The newer of two resourceVersions of objects of one resource, compared as Kubernetes 1.35 and
// later guarantee they compare (KEP-5504: decimal integers without leading zeros, so the longer
// is newer and equal lengths compare as text). When either is not such an integer (an older or
// another server), `a`.
std::string_view newerResourceVersion(std::string_view a, std::string_view b);

std::string objectKey(std::string_view ns, std::string_view name);
// Splits a key into namespace and name (namespace "" for cluster-scoped keys).
std::pair<std::string, std::string> splitKey(std::string_view key);

// A new object of the resource's kind: apiVersion, kind, metadata.name (and metadata.namespace
// when ns is not empty). The starting point of every object this project creates or applies.
json::Document newObject(const ResourceType& rt, std::string_view ns, std::string_view name);

// A string->string map member, e.g. labels or ConfigMap data; non-string values are skipped.
std::map<std::string, std::string> decodeStringMap(const json::Value* v);
json::Value encodeStringMap(const std::map<std::string, std::string>& m, json::Allocator& a);

}  // namespace sriovdra::kube
