// The API server's own resource.k8s.io/v1 accepts the objects observed on the reference DRA
// cluster (tests/fixtures/reference) and keeps every field the product reads.
#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/resource.h"
#include "api/resource_limits.h"
#include "base/files.h"
#include "base/yaml.h"
#include "kube/resource.h"
#include "support/control_plane.h"
#include "support/dra_objects.h"

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
  auto with_status = client->update(kClaims, ns, *created, {}, "status");
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

namespace {

// A device with `attributes` attributes (the first a 64-character string under a 63-character
// domain and a 32-character name) and `capacities` capacities.
api::SliceDevice device(const std::string& name, size_t attributes, size_t capacities = 0) {
  api::SliceDevice d{name, {}, {}};
  std::string domain = std::string(59, 'd') + ".com";  // 63 characters
  d.attributes[domain + "/" + std::string(32, 'n')] =
      api::AttributeValue::ofString(std::string(64, 'v'));
  for (size_t i = 1; i < attributes; ++i) {
    d.attributes["example.com/a" + std::to_string(i)] =
        api::AttributeValue::ofInt(static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < capacities; ++i) d.capacity["example.com/c" + std::to_string(i)] = "1";
  return d;
}

// Creates a slice of `devices` through our codec; the API server's answer.
Result<json::Document> createSlice(kube::Client& client, const std::string& name,
                                   std::vector<api::SliceDevice> devices) {
  api::ResourceSliceSpec spec;
  spec.driver = std::string(api::kDriverName);
  spec.node_name = name;
  spec.pool = {name, 0, 1};
  spec.devices = std::move(devices);
  return testing::createSlice(client, name, spec);
}

}  // namespace

TEST_CASE(
    "a slice at every limit is accepted; over any limit our check refuses it as the API "
    "server does",
    "[dra-api][integration]") {
  auto client = ControlPlane::shared().client();
  std::vector<api::SliceDevice> full;
  full.push_back(device(std::string(63, 'x'), 32));
  full.push_back(device("with-capacity", 30, 2));
  for (size_t i = full.size(); i < api::kMaxDevicesPerSlice; ++i) {
    full.push_back(device("d" + std::to_string(i), 14));
  }
  for (const auto& d : full) CHECK(api::sliceDeviceProblems(d).empty());
  auto accepted = createSlice(*client, "at-the-limits", full);
  INFO((accepted.ok() ? "" : accepted.status().toString()));
  REQUIRE(accepted.ok());
  auto stored = api::ResourceSlice::decode(*accepted);
  REQUIRE(stored.ok());
  CHECK(stored->spec.devices == full);  // nothing pruned, nothing changed

  full.push_back(device("one-too-many", 1));
  auto too_many = createSlice(*client, "129-devices", full);
  CHECK(too_many.status().code() == Code::kInvalid);

  struct Row {
    std::string name;
    api::SliceDevice device;
    std::string problem;
  };
  auto with = [](api::SliceDevice d, const std::string& name, api::AttributeValue v) {
    d.attributes[name] = std::move(v);
    return d;
  };
  const std::vector<Row> rows = {
      {"33 attributes", device("d", 33), "33 attributes and 0 capacities"},
      {"31 attributes and 2 capacities", device("d", 31, 2), "31 attributes and 2 capacities"},
      {"a 65-character string",
       with(device("d", 1), "example.com/s", api::AttributeValue::ofString(std::string(65, 'v'))),
       "is longer than 64 characters"},
      {"a version that is not semver",
       with(device("d", 1), "example.com/v", api::AttributeValue::ofVersion("v1.2")),
       "is not a semantic version"},
      {"a 33-character name",
       with(device("d", 1), "example.com/" + std::string(33, 'n'), api::AttributeValue::ofInt(1)),
       "must be a C identifier"},
      {"a 64-character domain",
       with(device("d", 1), std::string(60, 'd') + ".com/n", api::AttributeValue::ofInt(1)),
       "must be a lower-case DNS subdomain of at most 63 characters"},
      {"a 64-character device name", device(std::string(64, 'x'), 1), "is not a DNS label"},
      {"an upper-case device name", device("GPU-0", 1), "is not a DNS label"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto problems = api::sliceDeviceProblems(row.device);
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::Contains(row.problem));
    auto refused = createSlice(*client, "over-a-limit", {row.device});
    INFO((refused.ok() ? "accepted" : refused.status().toString()));
    CHECK(refused.status().code() == Code::kInvalid);
  }
}
