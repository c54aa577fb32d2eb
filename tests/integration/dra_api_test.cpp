// The API server's own resource.k8s.io/v1 accepts the objects observed on the reference DRA
// cluster (tests/fixtures/reference) and keeps every field the product reads.
#include <catch2/catch.hpp>

#include "base/files.h"
#include "base/yaml.h"
#include "support/control_plane.h"

using namespace sriovdra;
using sriovdra::testing::ControlPlane;
using sriovdra::testing::sourceDir;

namespace {

const kube::ResourceType kSlices{"resource.k8s.io", "v1", "resourceslices", "ResourceSlice", false};
const kube::ResourceType kClaims{"resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", true};
const kube::ResourceType kTemplates{"resource.k8s.io", "v1", "resourceclaimtemplates",
                                    "ResourceClaimTemplate", true};

json::Document fixture(const std::string& name) {
  auto text = readFile(sourceDir() + "/tests/fixtures/reference/" + name);
  REQUIRE(text.ok());
  auto docs = yamlToJson(*text);  // JSON is YAML
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  return std::move(docs->at(0));
}

const json::Value& attribute(const json::Value& slice, const std::string& name) {
  const json::Value* attrs = json::at(slice["spec"]["devices"][0], {"attributes"});
  REQUIRE(attrs != nullptr);
  const json::Value* a = json::member(*attrs, name);
  REQUIRE(a != nullptr);
  return *a;
}

}  // namespace

TEST_CASE("observed ResourceSlices of both drivers are stored unchanged",
          "[dra-api][integration]") {
  auto client = ControlPlane::shared().client();
  auto vf = client->create(kSlices, "", fixture("resourceslice-sriov-observed.json"));
  REQUIRE(vf.ok());
  CHECK(json::intOr(attribute(*vf, "dra.net/numaNode"), "int", -1) == 1);
  CHECK(json::stringOr(attribute(*vf, "resource.kubernetes.io/pcieRoot"), "string") ==
        "pci0000:b9");
  CHECK(json::boolOr(attribute(*vf, "sriovnetwork.k8snetworkplumbingwg.io/rdmaCapable"), "bool",
                     false));
  CHECK(json::intOr(*json::at(*vf, {"spec", "pool"}), "resourceSliceCount", 0) == 1);

  auto gpu = client->create(kSlices, "", fixture("resourceslice-gpu-observed.json"));
  REQUIRE(gpu.ok());
  CHECK(json::stringOr(attribute(*gpu, "cudaComputeCapability"), "version") == "8.0.0");
  CHECK(json::stringOr(*json::at((*gpu)["spec"]["devices"][0], {"capacity", "memory"}), "value") ==
        "80Gi");
}

TEST_CASE("the observed aligned claim, its template and its status are accepted",
          "[dra-api][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("claims");

  auto tmpl = fixture("aligned-resourceclaimtemplate.yaml");
  json::setString(tmpl["metadata"], "namespace", ns, tmpl.GetAllocator());
  auto created_tmpl = client->create(kTemplates, ns, tmpl);
  REQUIRE(created_tmpl.ok());
  const json::Value* constraint = json::at(*created_tmpl, {"spec", "spec", "devices"});
  REQUIRE(constraint != nullptr);
  CHECK(json::stringOr((*constraint)["constraints"][0], "matchAttribute") ==
        "resource.kubernetes.io/pcieRoot");

  auto claim = fixture("resourceclaim-aligned-observed.yaml");
  auto& a = claim.GetAllocator();
  json::Document status;
  status.CopyFrom(claim["status"], status.GetAllocator());
  claim.RemoveMember("status");
  auto& md = claim["metadata"];
  for (const char* server_owned : {"resourceVersion", "uid", "creationTimestamp"}) {
    md.RemoveMember(server_owned);
  }
  json::setString(md, "namespace", ns, a);
  auto created = client->create(kClaims, ns, claim);
  REQUIRE(created.ok());

  json::set(*created, "status", json::Value(status, created->GetAllocator()),
            created->GetAllocator());
  auto with_status = client->updateStatus(kClaims, ns, *created);
  REQUIRE(with_status.ok());
  const json::Value* dev = json::at(*with_status, {"status", "devices"});
  REQUIRE(dev != nullptr);
  REQUIRE(dev->Size() == 1);
  CHECK(json::stringOr(*json::at((*dev)[0], {"networkData"}), "interfaceName") == "net1");
  CHECK(json::stringOr(*json::at((*dev)[0], {"data", "cniConfig"}), "deviceID") == "0000:11:00.1");
  const json::Value* results =
      json::at(*with_status, {"status", "allocation", "devices", "results"});
  REQUIRE(results != nullptr);
  CHECK(results->Size() == 2);
  CHECK(json::stringOr((*results)[1], "device") == "0000-11-00-1");
}

TEST_CASE("a ResourceSlice with more than 128 devices is rejected", "[dra-api][integration]") {
  auto client = ControlPlane::shared().client();
  std::string yaml =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: too-many}\n"
      "spec:\n  driver: sriovnetwork.k8snetworkplumbingwg.io\n  nodeName: n\n"
      "  pool: {name: n, generation: 0, resourceSliceCount: 1}\n  devices:\n";
  for (int i = 0; i < 129; ++i) yaml += "  - name: d" + std::to_string(i) + "\n";
  auto doc = yamlToJson(yaml);
  REQUIRE(doc.ok());
  auto created = client->create(kSlices, "", doc->at(0));
  REQUIRE_FALSE(created.ok());
  CHECK(created.status().code() == Code::kInvalid);
  CHECK(created.status().message().find("spec.devices") != std::string::npos);
}
