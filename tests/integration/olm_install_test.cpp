// OLM for real: the bundle of manifests/olm/bundle installed by Operator Lifecycle Manager's own
// operators (olm, catalog; scripts/build-olm.sh) on the test control plane, from a file-based
// catalog opm builds and serves, through CatalogSource -> Subscription -> InstallPlan ->
// ClusterServiceVersion; then upgraded to a second bundle that replaces it and adds an optional
// CRD field. A stand-in for kubelet makes the Deployment's pods Ready; the test itself starts our
// operator from the Deployment's own arguments, with the ServiceAccount, permissions and webhook
// certificate OLM gave it.
#include <filesystem>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "base/base64.h"
#include "base/files.h"
#include "base/yaml.h"
#include "support/eventually.h"
#include "support/https_get.h"
#include "support/olm.h"
#include "support/operator_process.h"
#include "support/ports.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::canonical;
using sriovdra::testing::eventually;

namespace {

const std::string kNs = "sriov-dra";
const std::string kPackage = "sriov-dra-operator";
const std::string kV1 = "sriov-dra-operator.v0.1.0";
const std::string kV2 = "sriov-dra-operator.v0.2.0";
const kube::ResourceType kDeployments{"apps", "v1", "deployments", "Deployment", true};
const kube::ResourceType kDaemonSets{"apps", "v1", "daemonsets", "DaemonSet", true};
const kube::ResourceType kServices{"", "v1", "services", "Service", true};

std::string bundleDir() { return testing::sourceDir() + "/manifests/olm/bundle"; }

// The string at `path` ("" when any part is missing).
std::string field(const json::Value& v, std::initializer_list<std::string_view> path) {
  const json::Value* f = json::at(v, path);
  return f != nullptr && f->IsString() ? std::string(f->GetString(), f->GetStringLength()) : "";
}

// The phases of the namespace's InstallPlans, "" when there is none.
std::string planPhases(kube::Client& client) {
  auto plans = client.listAll(testing::kInstallPlans, kNs);
  if (!plans.ok()) return plans.status().message();
  std::string out;
  for (const auto& p : (*plans)["items"].GetArray()) {
    out += (out.empty() ? "" : " ") + field(p, {"status", "phase"});
  }
  return out;
}

bool plansComplete(kube::Client& client, size_t count) {
  std::string phases = planPhases(client);
  size_t complete = 0;
  for (size_t at = phases.find("Complete"); at != std::string::npos;
       at = phases.find("Complete", at + 1)) {
    ++complete;
  }
  return complete == count && phases.find_first_not_of("Complete ") == std::string::npos;
}

std::string phaseOf(kube::Client& client, const std::string& csv) {
  auto got = client.get(testing::kCsvs, kNs, csv);
  if (!got.ok()) return "absent";
  return field(*got, {"status", "phase"}) + " (" + field(*got, {"status", "message"}) + ")";
}

// The rules of every (Cluster)Role bound to the ServiceAccount, canonical: what OLM granted.
std::multiset<std::string> grantedRules(kube::Client& client, bool cluster, const std::string& sa) {
  const auto& bindings =
      cluster ? kube::resources::kClusterRoleBindings : kube::resources::kRoleBindings;
  const auto& roles = cluster ? kube::resources::kClusterRoles : kube::resources::kRoles;
  std::multiset<std::string> out;
  auto list = client.listAll(bindings, cluster ? "" : kNs);
  REQUIRE(list.ok());
  for (const auto& b : (*list)["items"].GetArray()) {
    bool ours = false;
    if (const json::Value* subjects = json::arrayMember(b, "subjects")) {
      for (const auto& s : subjects->GetArray()) {
        ours = ours || (json::stringOr(s, "kind") == "ServiceAccount" &&
                        json::stringOr(s, "name") == sa && json::stringOr(s, "namespace") == kNs);
      }
    }
    std::string role(json::stringOr(*json::objectMember(b, "roleRef"), "name"));
    // OLM's own roles for the CSV carry its name; auth-delegator and the cert role are OLM's.
    if (!ours || role.rfind(kPackage + ".", 0) != 0) continue;
    auto r = client.get(roles, cluster ? "" : kNs, role);
    REQUIRE(r.ok());
    for (const auto& rule : (*r)["rules"].GetArray()) out.insert(canonical(rule));
  }
  return out;
}

// The rules of the webhook of config/webhook/manifests.yaml that calls `path`, canonical.
std::string configWebhookRules(const std::string& path) {
  for (const auto& config :
       testing::yamlDocuments(testing::sourceDir() + "/config/webhook/manifests.yaml")) {
    for (const auto& w : config["webhooks"].GetArray()) {
      if (field(w, {"clientConfig", "service", "path"}) == path) return canonical(w["rules"]);
    }
  }
  return "none";
}

// A second bundle: the CSV renamed to v0.2.0 replacing v0.1.0, and DeviceAttributes with an
// optional spec.comment.
void writeUpgradeBundle(const std::string& out) {
  std::filesystem::copy(bundleDir(), out, std::filesystem::copy_options::recursive);
  std::string csv_path = out + "/manifests/" + kPackage + ".clusterserviceversion.yaml";
  auto csv = testing::yamlDocuments(csv_path);
  auto& a = csv[0].GetAllocator();
  json::setString(csv[0]["metadata"], "name", kV2, a);
  json::setString(csv[0]["spec"], "version", "0.2.0", a);
  json::setString(csv[0]["spec"], "replaces", kV1, a);
  REQUIRE(writeFileAtomic(csv_path, jsonToYaml(csv[0])).isOk());
  std::string crd_path =
      out + "/manifests/sriovnetwork.k8snetworkplumbingwg.io_deviceattributes.yaml";
  auto crd = testing::yamlDocuments(crd_path);
  auto& ca = crd[0].GetAllocator();
  json::Value& spec_props = crd[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
                               ["spec"]["properties"];
  json::Value comment(rapidjson::kObjectType);
  json::setString(comment, "type", "string", ca);
  json::setString(comment, "description", "A note for people (added in 0.2.0).", ca);
  spec_props.AddMember("comment", comment, ca);
  REQUIRE(writeFileAtomic(crd_path, jsonToYaml(crd[0])).isOk());
}

}  // namespace

TEST_CASE("OLM installs the bundle from a catalog and upgrades it to the next version",
          "[olm][integration]") {
  testing::ControlPlaneOptions options;
  options.install_product_crds = false;  // OLM installs them from the bundle
  options.controller_manager = true;     // Deployments become ReplicaSets and pods
  auto cp = testing::ControlPlane::start(options);
  auto admin = cp->client();
  testing::TempDir dir;
  testing::Olm olm(*cp, dir.path());
  testing::Catalog catalog(dir.path(), kPackage, "alpha");
  catalog.addBundle(bundleDir(), kV1);
  catalog.serve();
  auto logs = [&] { return olm.logs(); };

  cp->applyYaml("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + kNs + "}\n");
  testing::PodReadiness kubelet(admin, kNs);
  cp->applyYaml(R"(apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: sriov-dra, namespace: olm}
spec: {sourceType: grpc, address: ")" +
                catalog.address() + R"(", displayName: sriov-dra tests}
---
apiVersion: operators.coreos.com/v1
kind: OperatorGroup
metadata: {name: sriov-dra, namespace: sriov-dra}
spec: {targetNamespaces: [sriov-dra]}
---
apiVersion: operators.coreos.com/v1alpha1
kind: Subscription
metadata: {name: sriov-dra-operator, namespace: sriov-dra}
spec: {channel: alpha, name: sriov-dra-operator, source: sriov-dra, sourceNamespace: olm,
       installPlanApproval: Automatic}
)");
  eventually(
      [&] { return phaseOf(*admin, kV1).starts_with("Succeeded") && plansComplete(*admin, 1); },
      180s,
      [&] {
        return "CSV " + kV1 + ": " + phaseOf(*admin, kV1) +
               "; InstallPlans: " + planPhases(*admin) + "\n" + logs();
      });

  // What OLM created is what the bundle (and so config/) declares.
  auto csv = admin->get(testing::kCsvs, kNs, kV1);
  REQUIRE(csv.ok());
  const json::Value& declared = (*json::at(*csv, {"spec", "install", "spec", "deployments"}))[0];
  auto deployment = admin->get(kDeployments, kNs, "sriov-dra-operator");
  REQUIRE(deployment.ok());
  const json::Value& pod_spec = *json::at(*deployment, {"spec", "template", "spec"});
  CHECK(json::stringOr(pod_spec, "serviceAccountName") == "sriov-dra-operator");
  const json::Value& running = (*json::at(pod_spec, {"containers"}))[0];
  CHECK(canonical(running["args"]) ==
        canonical((*json::at(declared, {"spec", "template", "spec", "containers"}))[0]["args"]));
  for (const char* sa : {"sriov-dra-operator", "sriov-dra-agent"}) {
    CHECK(admin->get(kube::resources::kServiceAccounts, kNs, sa).ok());
  }
  CHECK(grantedRules(*admin, false, "sriov-dra-operator") ==
        testing::configRules("Role", {"sriov-dra-operator", "sriov-dra-operator-leader-election",
                                      "sriov-dra-operator-agent-daemonset"}));
  CHECK(grantedRules(*admin, true, "sriov-dra-operator") ==
        testing::configRules("ClusterRole", {"sriov-dra-operator", "sriov-dra-metrics-auth"}));
  CHECK(grantedRules(*admin, true, "sriov-dra-agent") ==
        testing::configRules("ClusterRole", {"sriov-dra-agent", "sriov-dra-metrics-auth"}));
  for (const auto& e :
       std::filesystem::directory_iterator(testing::sourceDir() + "/config/crd/bases")) {
    auto crd = testing::yamlDocuments(e.path().string());
    std::string name(json::stringOr(*json::objectMember(crd[0], "metadata"), "name"));
    INFO(name);
    CHECK(admin->get(kube::resources::kCustomResourceDefinitions, "", name).ok());
  }

  // The webhooks OLM registered call our paths through its Service, with the CA it generated.
  std::string ca_bundle;
  std::set<std::string> paths;
  for (const auto* rt : {&kube::resources::kValidatingWebhookConfigurations,
                         &kube::resources::kMutatingWebhookConfigurations}) {
    auto list = admin->listAll(*rt, "");
    REQUIRE(list.ok());
    for (const auto& config : (*list)["items"].GetArray()) {
      for (const auto& w : config["webhooks"].GetArray()) {
        const json::Value* service = json::at(w, {"clientConfig", "service"});
        if (service == nullptr || json::stringOr(*service, "namespace") != kNs) continue;
        CHECK(json::stringOr(*service, "name") == "sriov-dra-operator-service");
        std::string path(json::stringOr(*service, "path"));
        paths.insert(path);
        // The rules are config/webhook's for that path (the API server adds scope: "*").
        json::Document served;
        served.CopyFrom(w["rules"], served.GetAllocator());
        for (auto& r : served.GetArray()) r.RemoveMember("scope");
        INFO(path);
        CHECK(canonical(served) == configWebhookRules(path));
        CHECK(json::stringOr(w, "failurePolicy") == "Ignore");
        auto decoded =
            base64Decode(json::stringOr(*json::objectMember(w, "clientConfig"), "caBundle"));
        REQUIRE(decoded.ok());
        ca_bundle = *decoded;
      }
    }
  }
  CHECK(paths == std::set<std::string>{"/mutating-custom-resource", "/validating-custom-resource"});
  REQUIRE_FALSE(ca_bundle.empty());

  // Our operator, as the kubelet would start it: the Deployment's arguments, its ServiceAccount
  // with exactly what OLM granted, the certificate OLM put in the mounted Secret.
  auto secret = admin->get(kube::resources::kSecrets, kNs, "sriov-dra-operator-service-cert");
  REQUIRE(secret.ok());
  std::string certs = dir.path() + "/webhook-certs";
  std::filesystem::create_directories(certs);
  for (const char* key : {"tls.crt", "tls.key"}) {
    auto value = base64Decode(json::stringOr(*json::objectMember(*secret, "data"), key));
    REQUIRE(value.ok());
    REQUIRE(writeFileAtomic(certs + "/" + key, *value, 0600).isOk());
  }
  auto agent_cm = admin->get(kube::resources::kConfigMaps, kNs, "sriov-dra-agent-daemonset");
  REQUIRE(agent_cm.ok());
  std::string agent_manifest = dir.path() + "/daemonset.yaml";
  REQUIRE(writeFileAtomic(agent_manifest,
                          json::stringOr(*json::objectMember(*agent_cm, "data"), "daemonset.yaml"))
              .isOk());
  int webhook_port = testing::freePort();
  std::vector<std::string> argv = {testing::binDir() + "/sriov-dra-operator"};
  for (const auto& arg : running["args"].GetArray()) {
    std::string a = arg.GetString();
    if (a.starts_with("--webhook-cert-dir=")) a = "--webhook-cert-dir=" + certs;
    if (a.starts_with("--webhook-port=")) a = "--webhook-port=" + std::to_string(webhook_port);
    if (a.starts_with("--agent-daemonset=")) a = "--agent-daemonset=" + agent_manifest;
    if (a.starts_with("--health-probe-bind-address=")) {
      a = "--health-probe-bind-address=127.0.0.1:" + std::to_string(testing::freePort());
    }
    if (a.starts_with("--metrics-bind-address=")) {
      a = "--metrics-bind-address=127.0.0.1:" + std::to_string(testing::freePort());
    }
    argv.push_back(a);
  }
  argv.push_back("--kubeconfig=" + cp->serviceAccountKubeconfig(kNs, "sriov-dra-operator"));
  argv.push_back("--namespace=" + kNs);
  ProcessSpec spec{.argv = argv,
                   .stdout_path = dir.path() + "/operator.log",
                   .stderr_path = dir.path() + "/operator.log",
                   .kill_with_parent = true};
  auto op = ChildProcess::spawn(spec);
  REQUIRE(op.ok());
  auto operatorLog = [&] { return readFile(dir.path() + "/operator.log").valueOr(""); };
  eventually(
      [&] {
        return testing::httpsGet(webhook_port, ca_bundle, "/healthz", "",
                                 "sriov-dra-operator-service.sriov-dra.svc")
            .ok();
      },
      60s, [&] { return "our webhook does not serve OLM's certificate:\n" + operatorLog(); });
  // With only OLM's permissions it leads and deploys the agent from the bundle's ConfigMap.
  eventually([&] { return admin->get(kDaemonSets, kNs, "sriov-dra-agent").ok(); }, 60s,
             operatorLog);
  op->stop(SIGTERM);

  // A custom resource created before the upgrade.
  cp->applyYamlFile(testing::sourceDir() + "/config/samples/deviceattributes-cx6-vfs-attrs.yaml",
                    kNs);
  auto before = admin->get(api::resources::kDeviceAttributes, kNs, "cx6-vfs-attrs");
  REQUIRE(before.ok());
  auto before_meta = kube::ObjectMeta::decode(*before);

  // The next version in the same catalog: the Subscription moves to it.
  writeUpgradeBundle(dir.path() + "/bundle-v0.2.0");
  catalog.addBundle(dir.path() + "/bundle-v0.2.0", kV2, kV1);
  catalog.serve();
  REQUIRE(admin
              ->patch(testing::kCatalogSources, "olm", "sriov-dra", kube::PatchType::kMerge,
                      R"({"metadata":{"annotations":{"sriov-dra.test/catalog":"v0.2.0"}}})")
              .ok());
  eventually(
      [&] {
        return phaseOf(*admin, kV2).starts_with("Succeeded") && phaseOf(*admin, kV1) == "absent";
      },
      240s,
      [&] {
        return "CSV " + kV2 + ": " + phaseOf(*admin, kV2) + "; " + kV1 + ": " +
               phaseOf(*admin, kV1) + "; InstallPlans: " + planPhases(*admin) + "\n" + logs();
      });
  auto sub = admin->get(testing::kSubscriptions, kNs, "sriov-dra-operator");
  REQUIRE(sub.ok());
  CHECK(field(*sub, {"status", "installedCSV"}) == kV2);
  // The resource is untouched and still served; the new field is accepted.
  auto after = admin->get(api::resources::kDeviceAttributes, kNs, "cx6-vfs-attrs");
  REQUIRE(after.ok());
  auto after_meta = kube::ObjectMeta::decode(*after);
  CHECK(after_meta.uid == before_meta.uid);
  CHECK(after_meta.resource_version == before_meta.resource_version);
  auto served_crd = admin->get(kube::resources::kCustomResourceDefinitions, "",
                               "deviceattributes.sriovnetwork.k8snetworkplumbingwg.io");
  REQUIRE(served_crd.ok());
  const json::Value* comment_schema =
      json::at((*served_crd)["spec"]["versions"][0],
               {"schema", "openAPIV3Schema", "properties", "spec", "properties", "comment"});
  CHECK(comment_schema != nullptr);
  auto commented = admin->patch(api::resources::kDeviceAttributes, kNs, "cx6-vfs-attrs",
                                kube::PatchType::kMerge, R"({"spec":{"comment":"upgraded"}})");
  REQUIRE(commented.ok());
  CHECK(field(*commented, {"spec", "comment"}) == "upgraded");
}
