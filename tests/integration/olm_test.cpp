// The OLM bundle: current with config/, accepted by a real API server that serves OLM's own
// ClusterServiceVersion schema (nothing pruned), and consistent: every CRD in the bundle owned,
// every alm-example valid for our CRDs, the CSV's permissions exactly config/rbac's, webhooks
// and images as in config/.
#include "support/olm.h"

#include <filesystem>
#include <set>

#include <catch2/catch.hpp>

#include "base/files.h"
#include "base/process.h"
#include "base/yaml.h"
#include "support/control_plane.h"
#include "support/eventually.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::canonical;
using sriovdra::testing::ControlPlane;
using sriovdra::testing::kCsvs;

namespace {

std::string source(const std::string& relative) { return testing::sourceDir() + "/" + relative; }
const std::string kBundle = "manifests/olm/bundle";

std::map<std::string, std::string> filesUnder(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    auto text = readFile(e.path().string());
    REQUIRE(text.ok());
    out[std::filesystem::relative(e.path(), dir).string()] = *text;
  }
  return out;
}

std::multiset<std::string> csvRules(const json::Value& csv, const char* list,
                                    const std::string& sa) {
  std::multiset<std::string> out;
  for (const auto& p : (*json::at(csv, {"spec", "install", "spec", list})).GetArray()) {
    if (json::stringOr(p, "serviceAccountName") != sa) continue;
    for (const auto& r : p["rules"].GetArray()) out.insert(testing::canonical(r));
  }
  return out;
}

}  // namespace

TEST_CASE("the OLM bundle is generated from config/", "[olm][integration]") {
  testing::TempDir out;
  ProcessSpec spec;
  spec.argv = {std::string(SRIOV_DRA_BIN_DIR) + "/olm-bundle", testing::sourceDir(), out.path()};
  auto ran = runProcess(spec, 30s);
  REQUIRE(ran.ok());
  INFO(ran->err);
  REQUIRE(ran->exit_code == 0);
  INFO("manifests/olm/bundle is stale: run scripts/render-manifests.sh and commit the result");
  CHECK(filesUnder(out.path()) == filesUnder(source(kBundle)));
}

TEST_CASE("the ClusterServiceVersion is valid for OLM and consistent with config/",
          "[olm][integration]") {
  testing::ControlPlaneOptions options;
  options.install_product_crds = false;
  auto cp = ControlPlane::start(options);
  cp->applyYamlFile(
      source("tests/fixtures/reference/olm-crds/"
             "operators.coreos.com_clusterserviceversions.yaml"));
  cp->applyYamlFile(
      source("tests/fixtures/reference/olm-crds/operators.coreos.com_operatorgroups.yaml"));

  std::set<std::string> bundle_crds;
  json::Document csv;
  for (const auto& e : std::filesystem::directory_iterator(source(kBundle + "/manifests"))) {
    for (auto& d : testing::yamlDocuments(e.path().string())) {
      std::string kind(json::stringOr(d, "kind"));
      if (kind == "CustomResourceDefinition") {
        bundle_crds.insert(std::string(json::stringOr(*json::objectMember(d, "metadata"), "name")));
        cp->applyYamlFile(e.path().string());
      } else if (kind == "ClusterServiceVersion") {
        csv = std::move(d);
      }
    }
  }
  REQUIRE(csv.IsObject());
  std::string ns = cp->newNamespace("olm");
  auto client = cp->client();

  // OLM's schema accepts it, and prunes nothing: every field we wrote is one OLM knows.
  json::Document sent;
  sent.CopyFrom(csv, sent.GetAllocator());
  auto created = client->create(kCsvs, ns, sent);
  INFO((created.ok() ? "" : created.status().toString()));
  REQUIRE(created.ok());
  CHECK(canonical(*json::objectMember(*created, "spec")) == canonical(sent["spec"]));

  // Every CRD in the bundle is owned, and nothing else.
  std::set<std::string> owned;
  for (const auto& o :
       (*json::at(csv, {"spec", "customresourcedefinitions", "owned"})).GetArray()) {
    owned.insert(std::string(json::stringOr(o, "name")));
    CHECK_FALSE(json::stringOr(o, "description").empty());
    CHECK_FALSE(json::stringOr(o, "displayName").empty());
  }
  CHECK(owned == bundle_crds);
  CHECK(owned.size() == 8);

  // Every alm-example is an object our CRDs accept (server-side dry run), one per kind.
  auto examples = json::parse(std::string(
      json::stringOr(*json::objectMember(csv["metadata"], "annotations"), "alm-examples")));
  REQUIRE(examples.ok());
  std::set<std::string> kinds;
  testing::TempDir dir;
  for (const auto& ex : examples->GetArray()) {
    kinds.insert(std::string(json::stringOr(ex, "kind")));
    REQUIRE(writeFileAtomic(dir.path() + "/example.json", json::dump(ex), 0644).isOk());
    auto dry =
        cp->kubectl({"apply", "--dry-run=server", "-n", ns, "-f", dir.path() + "/example.json"});
    INFO(json::dump(ex) << "\n" << dry.err);
    CHECK(dry.exit_code == 0);
  }
  CHECK(kinds == std::set<std::string>{"SriovNetworkNodePolicy", "SriovNetwork", "SriovIBNetwork",
                                       "SriovResourcePolicy", "DeviceAttributes", "SriovNodeState",
                                       "SriovOperatorConfig", "SriovNetworkPoolConfig"});

  // The permissions are exactly what config/rbac grants the two ServiceAccounts.
  CHECK(csvRules(csv, "clusterPermissions", "sriov-dra-operator") ==
        testing::configRules("ClusterRole", {"sriov-dra-operator", "sriov-dra-metrics-auth"}));
  CHECK(csvRules(csv, "clusterPermissions", "sriov-dra-agent") ==
        testing::configRules("ClusterRole", {"sriov-dra-agent", "sriov-dra-metrics-auth"}));
  CHECK(csvRules(csv, "permissions", "sriov-dra-operator") ==
        testing::configRules("Role", {"sriov-dra-operator", "sriov-dra-operator-leader-election",
                                      "sriov-dra-operator-agent-daemonset"}));
  CHECK(csvRules(csv, "permissions", "sriov-dra-agent") ==
        testing::configRules("Role", {"sriov-dra-agent"}));
  // On OpenShift the agent may use the privileged SCC.
  CHECK_THAT(json::dump(csv), Catch::Contains("\"resourceNames\":[\"privileged\"]"));

  // The webhooks are config/webhook's, served by the Deployment in the CSV.
  std::set<std::string> paths;
  for (const auto& w : (*json::at(csv, {"spec", "webhookdefinitions"})).GetArray()) {
    paths.insert(std::string(json::stringOr(w, "webhookPath")));
    CHECK(json::stringOr(w, "deploymentName") == "sriov-dra-operator");
  }
  CHECK(paths == std::set<std::string>{"/mutating-custom-resource", "/validating-custom-resource"});

  // The operator deploys the agent from the bundle's ConfigMap, with the related image.
  const json::Value& deployment = (*json::at(csv, {"spec", "install", "spec", "deployments"}))[0];
  std::string args = json::dump(*json::at(deployment, {"spec", "template", "spec", "containers"}));
  CHECK_THAT(args, Catch::Contains("--agent-daemonset=/etc/sriov-dra/agent/daemonset.yaml"));
  CHECK_THAT(args, Catch::Contains("--agent-image=quay.io/sriov-dra/sriov-dra-agent:v0.1.0"));
  auto cm = testing::yamlDocuments(
      source(kBundle + "/manifests/sriov-dra-agent-daemonset_v1_configmap.yaml"));
  auto ds =
      yamlToJson(std::string(json::stringOr(*json::objectMember(cm[0], "data"), "daemonset.yaml")));
  REQUIRE(ds.ok());
  CHECK(json::stringOr(ds->at(0), "kind") == "DaemonSet");
  CHECK(json::stringOr(*json::objectMember(csv["metadata"], "annotations"),
                       "operatorframework.io/suggested-namespace") == "sriov-dra");

  auto annotations = testing::yamlDocuments(source(kBundle + "/metadata/annotations.yaml"));
  CHECK(json::stringOr(*json::objectMember(annotations[0], "annotations"),
                       "operators.operatorframework.io.bundle.mediatype.v1") == "registry+v1");
}
