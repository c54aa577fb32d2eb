#include "kube/object_meta.h"

#include <algorithm>

namespace sriovdra::kube {

std::map<std::string, std::string> decodeStringMap(const json::Value* v) {
  std::map<std::string, std::string> out;
  if (v == nullptr || !v->IsObject()) return out;
  for (const auto& m : v->GetObject()) {
    if (m.value.IsString()) {
      out.emplace(std::string(m.name.GetString(), m.name.GetStringLength()),
                  std::string(m.value.GetString(), m.value.GetStringLength()));
    }
  }
  return out;
}

json::Value encodeStringMap(const std::map<std::string, std::string>& m, json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  for (const auto& [k, v] : m) out.AddMember(json::str(k, a), json::str(v, a), a);
  return out;
}

ObjectMeta ObjectMeta::decode(const json::Value& obj) {
  ObjectMeta m;
  const json::Value* md = json::objectMember(obj, "metadata");
  if (md == nullptr) return m;
  m.name = json::stringOr(*md, "name");
  m.generate_name = json::stringOr(*md, "generateName");
  m.namespace_ = json::stringOr(*md, "namespace");
  m.uid = json::stringOr(*md, "uid");
  m.resource_version = json::stringOr(*md, "resourceVersion");
  m.generation = json::intOr(*md, "generation", 0);
  m.creation_timestamp = json::stringOr(*md, "creationTimestamp");
  m.deletion_timestamp = json::stringOr(*md, "deletionTimestamp");
  m.labels = decodeStringMap(json::member(*md, "labels"));
  m.annotations = decodeStringMap(json::member(*md, "annotations"));
  if (const json::Value* refs = json::arrayMember(*md, "ownerReferences")) {
    for (const auto& r : refs->GetArray()) {
      OwnerReference o;
      o.api_version = json::stringOr(r, "apiVersion");
      o.kind = json::stringOr(r, "kind");
      o.name = json::stringOr(r, "name");
      o.uid = json::stringOr(r, "uid");
      o.controller = json::boolOr(r, "controller", false);
      o.block_owner_deletion = json::boolOr(r, "blockOwnerDeletion", false);
      m.owner_references.push_back(std::move(o));
    }
  }
  if (const json::Value* fins = json::arrayMember(*md, "finalizers")) {
    for (const auto& f : fins->GetArray()) {
      if (f.IsString()) m.finalizers.emplace_back(f.GetString(), f.GetStringLength());
    }
  }
  return m;
}

void ObjectMeta::encode(json::Value& md, json::Allocator& a) const {
  auto put = [&](const char* key, const std::string& v) {
    if (!v.empty()) json::setString(md, key, v, a);
  };
  put("name", name);
  put("generateName", generate_name);
  put("namespace", namespace_);
  put("uid", uid);
  put("resourceVersion", resource_version);
  if (!labels.empty()) json::set(md, "labels", encodeStringMap(labels, a), a);
  if (!annotations.empty()) json::set(md, "annotations", encodeStringMap(annotations, a), a);
  if (!owner_references.empty()) {
    json::Value refs(rapidjson::kArrayType);
    for (const auto& o : owner_references) {
      json::Value r(rapidjson::kObjectType);
      json::setString(r, "apiVersion", o.api_version, a);
      json::setString(r, "kind", o.kind, a);
      json::setString(r, "name", o.name, a);
      json::setString(r, "uid", o.uid, a);
      if (o.controller) r.AddMember("controller", true, a);
      if (o.block_owner_deletion) r.AddMember("blockOwnerDeletion", true, a);
      refs.PushBack(r, a);
    }
    json::set(md, "ownerReferences", std::move(refs), a);
  }
  if (!finalizers.empty()) {
    json::Value fins(rapidjson::kArrayType);
    for (const auto& f : finalizers) fins.PushBack(json::str(f, a), a);
    json::set(md, "finalizers", std::move(fins), a);
  }
}

std::string_view newerResourceVersion(std::string_view a, std::string_view b) {
  auto comparable = [](std::string_view rv) {
    return !rv.empty() && rv[0] != '0' &&
           std::all_of(rv.begin(), rv.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!comparable(a) || !comparable(b)) return a;
  if (a.size() != b.size()) return a.size() > b.size() ? a : b;
  return b > a ? b : a;
}

json::Document newObject(const ResourceType& rt, std::string_view ns, std::string_view name) {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::setString(doc, "apiVersion", rt.apiVersion(), a);
  json::setString(doc, "kind", rt.kind, a);
  json::Value md(rapidjson::kObjectType);
  json::setString(md, "name", name, a);
  if (!ns.empty()) json::setString(md, "namespace", ns, a);
  doc.AddMember("metadata", md, a);
  return doc;
}

std::string ObjectMeta::annotation(const std::string& key) const {
  auto it = annotations.find(key);
  return it == annotations.end() ? std::string() : it->second;
}

void ObjectMeta::setOwner(const OwnerReference& owner) {
  std::erase_if(owner_references, [&](const OwnerReference& o) {
    return o.kind == owner.kind && o.api_version == owner.api_version;
  });
  owner_references.insert(owner_references.begin(), owner);
}

std::string ObjectMeta::key() const { return objectKey(namespace_, name); }

std::string objectKey(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string k;
  k.reserve(ns.size() + 1 + name.size());
  k.append(ns).append("/").append(name);
  return k;
}

std::pair<std::string, std::string> splitKey(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos) return {"", std::string(key)};
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

}  // namespace sriovdra::kube
