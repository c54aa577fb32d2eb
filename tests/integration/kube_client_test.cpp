#include <map>

#include <catch2/catch.hpp>

#include "support/control_plane.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::ControlPlane;

namespace {

json::Document configMap(const std::string& ns, const std::string& name,
                         std::map<std::string, std::string> data) {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::setString(doc, "apiVersion", "v1", a);
  json::setString(doc, "kind", "ConfigMap", a);
  kube::ObjectMeta meta;
  meta.name = name;
  meta.namespace_ = ns;
  json::Value md(rapidjson::kObjectType);
  meta.encode(md, a);
  doc.AddMember("metadata", md, a);
  doc.AddMember("data", kube::encodeStringMap(data, a), a);
  return doc;
}

std::string dataOf(const json::Value& cm, const std::string& key) {
  const json::Value* d = json::objectMember(cm, "data");
  return d ? std::string(json::stringOr(*d, key)) : "";
}

}  // namespace

TEST_CASE("create, get, update and delete a ConfigMap", "[kube][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("crud");

  auto created =
      client->create(kube::resources::kConfigMaps, ns, configMap(ns, "a", {{"k", "v1"}}));
  REQUIRE(created.ok());
  auto meta = kube::ObjectMeta::decode(*created);
  CHECK(meta.name == "a");
  CHECK_FALSE(meta.uid.empty());

  auto got = client->get(kube::resources::kConfigMaps, ns, "a");
  REQUIRE(got.ok());
  CHECK(dataOf(*got, "k") == "v1");

  auto update = configMap(ns, "a", {{"k", "v2"}});
  json::setString(update["metadata"], "resourceVersion", meta.resource_version,
                  update.GetAllocator());
  auto updated = client->update(kube::resources::kConfigMaps, ns, update);
  REQUIRE(updated.ok());
  CHECK(dataOf(*updated, "k") == "v2");

  SECTION("a stale resourceVersion is a 409 Conflict") {
    auto stale = client->update(kube::resources::kConfigMaps, ns, update);
    REQUIRE_FALSE(stale.ok());
    CHECK(stale.status().code() == Code::kConflict);
    CHECK(stale.status().httpStatus() == 409);
    CHECK(stale.status().message().find("the object has been modified") != std::string::npos);
  }
  SECTION("creating it again is AlreadyExists") {
    auto again = client->create(kube::resources::kConfigMaps, ns, configMap(ns, "a", {}));
    REQUIRE_FALSE(again.ok());
    CHECK(again.status().code() == Code::kAlreadyExists);
    CHECK(again.status().reason() == "AlreadyExists");
  }
  SECTION("delete honours a UID precondition, then removes the object") {
    kube::DeleteOptions wrong;
    wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
    Status st = client->remove(kube::resources::kConfigMaps, ns, "a", wrong);
    CHECK(st.code() == Code::kConflict);
    kube::DeleteOptions right;
    right.precondition_uid = meta.uid;
    right.propagation_policy = "Background";
    REQUIRE(client->remove(kube::resources::kConfigMaps, ns, "a", right).isOk());
    auto gone = client->get(kube::resources::kConfigMaps, ns, "a");
    REQUIRE_FALSE(gone.ok());
    CHECK(gone.status().code() == Code::kNotFound);
    CHECK(gone.status().httpStatus() == 404);
  }
}
