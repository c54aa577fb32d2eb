// What users install: manifests/install.yaml is what config/default says, kubectl applies it to a
// real API server (with the test resource.k8s.io CRDs, as a 1.34 cluster serves them), then the
// samples, and every sample passes a server-side dry run; the opt-in pieces parse (the alert
// rules with Prometheus' own promtool).
#include <filesystem>

#include <catch2/catch.hpp>

#include "base/files.h"
#include "base/process.h"
#include "base/yaml.h"
#include "support/control_plane.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using sriovdra::testing::ControlPlane;

namespace {

std::string source(const std::string& relative) { return testing::sourceDir() + "/" + relative; }

std::vector<std::string> yamlFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source(dir))) {
    if (e.path().extension() == ".yaml" && e.path().filename() != "kustomization.yaml") {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("manifests/install.yaml is rendered from config/default", "[install][integration]") {
  ProcessSpec spec;
  spec.argv = {source("scripts/render-manifests.sh"), "-"};
  auto rendered = runProcess(spec, std::chrono::seconds(30));
  REQUIRE(rendered.ok());
  INFO(rendered->err);
  REQUIRE(rendered->exit_code == 0);
  auto committed = readFile(source("manifests/install.yaml"));
  REQUIRE(committed.ok());
  INFO("manifests/install.yaml is stale: run scripts/render-manifests.sh and commit the result");
  CHECK(rendered->out == *committed);
  auto docs = yamlToJson(*committed);
  REQUIRE(docs.ok());
  CHECK(docs->size() >= 25);
}

TEST_CASE("docs/crd-reference.md is generated from the CRD schemas", "[install][integration]") {
  testing::TempDir dir;
  ProcessSpec spec;
  spec.argv = {std::string(SRIOV_DRA_BIN_DIR) + "/crd-reference", testing::sourceDir(),
               dir.path() + "/crd-reference.md"};
  auto ran = runProcess(spec, std::chrono::seconds(30));
  REQUIRE(ran.ok());
  REQUIRE(ran->exit_code == 0);
  auto fresh = readFile(dir.path() + "/crd-reference.md");
  auto committed = readFile(source("docs/crd-reference.md"));
  REQUIRE(fresh.ok());
  REQUIRE(committed.ok());
  INFO("docs/crd-reference.md is stale: run scripts/render-manifests.sh and commit the result");
  CHECK(*fresh == *committed);
  CHECK_THAT(*committed, Catch::Contains("## SriovNetworkNodePolicy"));
  CHECK_THAT(*committed, Catch::Contains("| `spec.numVfs` | integer"));
}

TEST_CASE("kubectl applies install.yaml, then the samples", "[install][integration]") {
  testing::ControlPlaneOptions options;
  options.install_product_crds = false;  // install.yaml brings them
  // No --allow-privileged: nothing in install.yaml is a privileged pod.
  auto cp = ControlPlane::start(options);

  auto installed = cp->kubectl({"apply", "-f", source("manifests/install.yaml")});
  INFO(installed.out << installed.err);
  REQUIRE(installed.exit_code == 0);
  CHECK_THAT(installed.out, Catch::Contains("deployment.apps/sriov-dra-operator created"));
  CHECK_THAT(installed.out, Catch::Contains("daemonset.apps/sriov-dra-agent created"));
  CHECK_THAT(installed.out,
             Catch::Contains("validatingadmissionpolicy.admissionregistration.k8s.io/"
                             "sriov-dra-agent-own-node created"));
  auto established =
      cp->kubectl({"wait", "--for", "condition=established", "--timeout=60s", "crd", "--all"});
  REQUIRE(established.exit_code == 0);

  // Applying it again works (upgrades apply the new file over the old one).
  auto again = cp->kubectl({"apply", "-f", source("manifests/install.yaml")});
  INFO(again.out << again.err);
  REQUIRE(again.exit_code == 0);

  // No operator pod runs here, so the webhooks cannot answer: failurePolicy Ignore lets the
  // samples in (the operator validates them again when it reconciles).
  for (const auto& file : yamlFiles("config/samples")) {
    INFO(file);
    auto dry = cp->kubectl({"apply", "--dry-run=server", "-n", "sriov-dra", "-f", file});
    INFO(dry.out << dry.err);
    CHECK(dry.exit_code == 0);
  }
  auto samples = cp->kubectl({"apply", "-n", "sriov-dra", "-k", source("config/samples")});
  INFO(samples.out << samples.err);
  REQUIRE(samples.exit_code == 0);
  CHECK_THAT(samples.out,
             Catch::Contains("sriovnetworknodepolicy.sriovnetwork.openshift.io/cx6-vfs created"));
  CHECK_THAT(samples.out, Catch::Contains("resourceclaimtemplate.resource.k8s.io/gpu-nic-aligned"));

  // The policy roles (aggregated into admin/edit/view by the controller manager, which this
  // test control plane does not run) grant what they say: an editor manages policies, a viewer
  // only reads them.
  auto canI = [&](const std::string& verb, const std::string& group) {
    return cp
        ->kubectl({"auth", "can-i", verb, "sriovnetworknodepolicies.sriovnetwork.openshift.io",
                   "-n", "sriov-dra", "--as", "someone", "--as-group", group})
        .out;
  };
  CHECK(canI("create", "editors") == "no\n");
  for (const auto& [group, role] : {std::pair{"editors", "sriov-dra-policy-editor"},
                                    std::pair{"viewers", "sriov-dra-policy-viewer"}}) {
    auto bound =
        cp->kubectl({"create", "rolebinding", std::string(group), "-n", "sriov-dra",
                     "--clusterrole=" + std::string(role), "--group=" + std::string(group)});
    REQUIRE(bound.exit_code == 0);
  }
  CHECK(canI("create", "editors") == "yes\n");
  CHECK(canI("list", "viewers") == "yes\n");
  CHECK(canI("delete", "viewers") == "no\n");
  // Least privilege: install.yaml deploys the agent itself, so the operator may not write
  // DaemonSets (config/agent-daemonset-rbac grants that where the operator deploys it).
  auto operatorMay = [&](const std::string& verb, const std::string& resource) {
    return cp
        ->kubectl({"auth", "can-i", verb, resource, "-n", "sriov-dra", "--as",
                   "system:serviceaccount:sriov-dra:sriov-dra-operator"})
        .out;
  };
  CHECK(operatorMay("create", "daemonsets.apps") == "no\n");
  CHECK(operatorMay("create", "sriovnodestates.sriovnetwork.k8snetworkplumbingwg.io") == "yes\n");
}

TEST_CASE("the opt-in manifests parse and the alert rules are valid Prometheus rules",
          "[install][integration]") {
  for (const char* dir :
       {"config/prometheus", "config/network-policy", "config/certmanager", "config/rbac"}) {
    for (const auto& file : yamlFiles(dir)) {
      INFO(file);
      auto text = readFile(file);
      REQUIRE(text.ok());
      auto docs = yamlToJson(*text);
      CHECK(docs.ok());
    }
  }
  auto text = readFile(source("config/prometheus/rules.yaml"));
  REQUIRE(text.ok());
  auto docs = yamlToJson(*text);
  REQUIRE(docs.ok());
  // promtool reads the rule groups of the PrometheusRule's spec.
  testing::TempDir dir;
  REQUIRE(writeFileAtomic(dir.path() + "/rules.yaml", jsonToYaml((*docs)[0]["spec"]), 0644).isOk());
  ProcessSpec spec;
  spec.argv = {"promtool", "check", "rules", dir.path() + "/rules.yaml"};
  auto checked = runProcess(spec, std::chrono::seconds(30));
  REQUIRE(checked.ok());
  INFO(checked->out << checked->err);
  CHECK(checked->exit_code == 0);
  CHECK_THAT(checked->out, Catch::Contains("SUCCESS: 5 rules found"));
}
