// The Helm chart (deployment/sriov-dra-operator) against what it packages: its generated
// templates are what scripts/render-manifests.sh makes of config/; with default values it
// renders install.yaml's objects (but the Namespace, which `helm install --create-namespace`
// makes) plus the webhook's certificate; each value changes what it says; helm (built from its
// Go module by scripts/build-helm.sh, $SRIOV_DRA_HELM) installs, upgrades and uninstalls it on
// a real API server.
#include "support/helm.h"

#include <filesystem>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "base/files.h"
#include "base/json.h"
#include "base/process.h"
#include "base/yaml.h"
#include "support/control_plane.h"
#include "support/eventually.h"
#include "support/olm.h"
#include "support/skip.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using sriovdra::testing::ControlPlane;

namespace {

std::string source(const std::string& relative) { return testing::sourceDir() + "/" + relative; }

const std::string kChart = "deployment/sriov-dra-operator";

// $SRIOV_DRA_HELM/bin/helm, or "" (the test is skipped) when the variable is unset.
std::string helmBinary() {
  std::string helm = testing::helmBinary();
  if (helm.empty()) {
    testing::skip(
        "SRIOV_DRA_HELM is not set: run scripts/test.sh, or scripts/build-helm.sh and set "
        "SRIOV_DRA_HELM to the directory it printed");
  }
  return helm;
}

ProcessOutput helm(const std::string& home, const std::vector<std::string>& args,
                   const std::string& kubeconfig = "") {
  auto run = testing::runHelm(home, args, kubeconfig);
  REQUIRE(run.ok());
  return std::move(*run);
}

std::string keyOf(const json::Value& o) {
  const json::Value* meta = json::objectMember(o, "metadata");
  REQUIRE(meta != nullptr);
  return std::string(json::stringOr(o, "kind")) + " " +
         std::string(json::stringOr(*meta, "namespace")) + "/" +
         std::string(json::stringOr(*meta, "name"));
}

// `helm template` of the chart with these --set/--set-string arguments, by kind ns/name.
std::map<std::string, json::Document> rendered(const std::string& home,
                                               const std::vector<std::string>& values = {}) {
  std::vector<std::string> args = {"template", "sriov-dra", source(kChart), "-n", "sriov-dra"};
  args.insert(args.end(), values.begin(), values.end());
  auto out = helm(home, args);
  INFO(out.err);
  REQUIRE(out.exit_code == 0);
  auto docs = yamlToJson(out.out);
  REQUIRE(docs.ok());
  std::map<std::string, json::Document> objects;
  for (auto& d : *docs) {
    auto key = keyOf(d);
    INFO(key);
    bool fresh = objects.emplace(key, std::move(d)).second;
    CHECK(fresh);
  }
  return objects;
}

std::vector<std::string> argsOf(const json::Value& workload) {
  std::vector<std::string> out;
  const json::Value* args = json::at(workload, {"spec", "template", "spec", "containers"});
  REQUIRE(args != nullptr);
  for (const auto& a : (*args)[0]["args"].GetArray()) out.emplace_back(a.GetString());
  return out;
}

std::string containerField(const json::Value& workload, const std::string& field) {
  const json::Value* c = json::at(workload, {"spec", "template", "spec", "containers"});
  REQUIRE(c != nullptr);
  const json::Value* v = json::member((*c)[0], field);
  return v == nullptr ? "" : testing::canonical(*v);
}

std::set<std::string> volumeNames(const json::Value& workload) {
  std::set<std::string> out;
  const json::Value* v = json::at(workload, {"spec", "template", "spec", "volumes"});
  REQUIRE(v != nullptr);
  for (const auto& vol : v->GetArray()) out.emplace(json::stringOr(vol, "name"));
  return out;
}

// Writes PEM text to dir/name and returns the path.
std::string pemFile(const std::string& dir, const std::string& name, const std::string& b64) {
  auto pem = base64Decode(b64);
  REQUIRE(pem.ok());
  std::string path = dir + "/" + name;
  REQUIRE(writeFileAtomic(path, *pem, 0600).isOk());
  return path;
}

// The chart's webhook certificate is valid for the webhook Service of `ns` under `ca`.
void checkServingCertificate(const std::string& ca_b64, const std::string& crt_b64,
                             const std::string& ns) {
  testing::TempDir dir;
  auto ca = pemFile(dir.path(), "ca.crt", ca_b64);
  auto crt = pemFile(dir.path(), "tls.crt", crt_b64);
  auto verify =
      runProcess({.argv = {"openssl", "verify", "-purpose", "sslserver", "-CAfile", ca, crt}},
                 std::chrono::seconds(30));
  REQUIRE(verify.ok());
  INFO(verify->out << verify->err);
  CHECK(verify->exit_code == 0);
  auto names =
      runProcess({.argv = {"openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", crt}},
                 std::chrono::seconds(30));
  REQUIRE(names.ok());
  CHECK_THAT(names->out,
             Catch::Contains("DNS:sriov-dra-webhook-service." + ns + ".svc,") &&
                 Catch::Contains("DNS:sriov-dra-webhook-service." + ns + ".svc.cluster.local"));
}

// Removes obj[path...][key] and returns it canonical ("" when absent).
std::string take(json::Value& obj, std::initializer_list<std::string_view> path,
                 std::string_view key) {
  json::Value* at = &obj;
  for (auto p : path) {
    if (!at->IsObject() || !at->HasMember(json::Value(rapidjson::StringRef(p.data(), p.size())))) {
      return "";
    }
    at = &(*at)[json::Value(rapidjson::StringRef(p.data(), p.size()))];
  }
  json::Value k(rapidjson::StringRef(key.data(), key.size()));
  if (!at->IsObject() || !at->HasMember(k)) return "";
  std::string out = testing::canonical((*at)[k]);
  at->RemoveMember(k);
  return out;
}

}  // namespace

TEST_CASE("the chart's templates of config/ are rendered from it", "[helm][install][integration]") {
  testing::TempDir dir;
  ProcessSpec spec;
  spec.argv = {source("scripts/render-manifests.sh"), "--chart-templates", dir.path()};
  auto run = runProcess(spec, std::chrono::seconds(60));
  REQUIRE(run.ok());
  INFO(run->out << run->err);
  REQUIRE(run->exit_code == 0);
  INFO(kChart +
       "/templates/config is stale: run scripts/render-manifests.sh and commit the result");
  std::set<std::string> fresh;
  std::set<std::string> committed;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    fresh.insert(e.path().filename());
  }
  const std::string committed_dir = source(kChart + "/templates/config");
  for (const auto& e : std::filesystem::directory_iterator(committed_dir)) {
    committed.insert(e.path().filename());
  }
  REQUIRE(fresh == committed);
  for (const auto& name : fresh) {
    INFO(name);
    std::string rendered_file = dir.path() + "/" + name;
    std::string committed_file = committed_dir;
    committed_file.append("/").append(name);
    CHECK(readFile(rendered_file).valueOr("a") == readFile(committed_file).valueOr("b"));
  }
}

TEST_CASE("with default values the chart renders install.yaml's objects and a webhook certificate",
          "[helm][install][integration]") {
  if (helmBinary().empty()) return;
  testing::TempDir home;
  auto lint = helm(home.path(), {"lint", "--strict", source(kChart)});
  INFO(lint.out << lint.err);
  CHECK(lint.exit_code == 0);

  auto chart = rendered(home.path());
  std::map<std::string, json::Document> install;
  for (auto& d : testing::yamlDocuments(source("manifests/install.yaml"))) {
    auto key = keyOf(d);
    install.emplace(key, std::move(d));
  }
  // What only one side has: the Namespace (helm install --create-namespace) and the certificate.
  REQUIRE(install.erase("Namespace /sriov-dra") == 1);
  auto secret = chart.extract("Secret sriov-dra/sriov-dra-webhook-server-cert");
  REQUIRE(!secret.empty());
  const json::Value& data = secret.mapped()["data"];
  checkServingCertificate(data["ca.crt"].GetString(), data["tls.crt"].GetString(), "sriov-dra");
  // Its CA is each webhook's caBundle, and every CRD is kept on uninstall.
  std::string ca = data["ca.crt"].GetString();
  for (auto& [key, object] : chart) {
    INFO(key);
    if (key.starts_with("MutatingWebhookConfiguration") ||
        key.starts_with("ValidatingWebhookConfiguration")) {
      for (auto& w : object["webhooks"].GetArray()) {
        CHECK(take(w, {"clientConfig"}, "caBundle") ==
              json::dump(json::Value(rapidjson::StringRef(ca.c_str()))));
      }
    }
    if (key.starts_with("CustomResourceDefinition")) {
      CHECK(take(object, {"metadata", "annotations"}, "helm.sh/resource-policy") == "\"keep\"");
      take(object, {"metadata"}, "annotations");
    }
  }
  std::set<std::string> chart_keys;
  std::set<std::string> install_keys;
  for (const auto& [k, v] : chart) chart_keys.insert(k);
  for (const auto& [k, v] : install) install_keys.insert(k);
  REQUIRE(chart_keys == install_keys);
  for (const auto& [key, object] : install) {
    INFO(key);
    CHECK(testing::canonical(chart.at(key)) == testing::canonical(object));
  }
}

TEST_CASE("each value of the chart changes what it says; values outside the schema are refused",
          "[helm][install][integration]") {
  if (helmBinary().empty()) return;
  testing::TempDir home;
  const std::string deployment = "Deployment sriov-dra/sriov-dra-operator";
  const std::string daemonset = "DaemonSet sriov-dra/sriov-dra-agent";

  auto custom = rendered(
      home.path(),
      {"--set",        "images.operator.repository=registry.example/op",
       "--set",        "images.agent.tag=v9",
       "--set",        "images.pullPolicy=Always",
       "--set",        "images.pullSecrets={pull}",
       "--set",        "operator.replicas=3",
       "--set",        "operator.resourcePrefix=acme.io",
       "--set",        "operator.maxUnavailable=4",
       "--set",        "operator.upstreamNamespace=sriov-network-operator",
       "--set",        "operator.extraArgs={--workers=8}",
       "--set",        "operator.resources.limits.memory=2Gi",
       "--set-string", "agent.nodeSelector.feature\\.node\\.kubernetes\\.io/sriov-capable=true",
       "--set",        "agent.cniBinDir=/usr/libexec/cni",
       "--set",        "agent.extraArgs={--resync-period=1m}",
       "--set",        "agent.deviceMetadata=true",
       "--set",        "agent.hostPaths.kubeletPlugins=/var/lib/k0s/kubelet/plugins",
       "--set",        "agent.hostPaths.cdi=/etc/cdi",
       "--set",        "agent.extraVolumes[0].name=extra",
       "--set",        "agent.extraVolumes[0].hostPath.path=/opt/extra",
       "--set",        "agent.extraVolumeMounts[0].name=extra",
       "--set",        "agent.extraVolumeMounts[0].mountPath=/extra"});
  const auto& op = custom.at(deployment);
  const auto& agent = custom.at(daemonset);
  CHECK(containerField(op, "image") == "\"registry.example/op:v0.1.0\"");
  CHECK(containerField(agent, "image") == "\"quay.io/sriov-dra/sriov-dra-agent:v9\"");
  CHECK(containerField(agent, "imagePullPolicy") == "\"Always\"");
  CHECK(testing::canonical(*json::at(op, {"spec", "template", "spec", "imagePullSecrets"})) ==
        "[{name:\"pull\"}]");
  CHECK(json::intOr(op["spec"], "replicas", 0) == 3);
  auto op_args = argsOf(op);
  for (const char* a :
       {"--max-unavailable=4", "--upstream-namespace=sriov-network-operator", "--workers=8"}) {
    CHECK(std::find(op_args.begin(), op_args.end(), a) != op_args.end());
  }
  auto prefix = [&](const std::vector<std::string>& args) {
    auto flag = std::find(args.begin(), args.end(), "--resource-prefix");
    return flag == args.end() || flag + 1 == args.end() ? "(none)" : *(flag + 1);
  };
  CHECK(prefix(op_args) == "acme.io");
  CHECK(prefix(argsOf(rendered(home.path()).at(deployment))) == "openshift.io");
  CHECK(prefix(argsOf(
            rendered(home.path(), {"--set", "operator.resourcePrefix="}).at(deployment))) == "");
  CHECK_THAT(containerField(op, "resources"), Catch::Contains("memory:\"2Gi\""));
  CHECK(testing::canonical(*json::at(agent, {"spec", "template", "spec", "nodeSelector"})) ==
        "{feature.node.kubernetes.io/sriov-capable:\"true\",kubernetes.io/os:\"linux\"}");
  CHECK_THAT(testing::canonical(*json::at(agent, {"spec", "template", "spec", "volumes"})),
             Catch::Contains("{hostPath:{path:\"/usr/libexec/cni\",type:\"DirectoryOrCreate\"},"
                             "name:\"cni-bin\"}"));
  auto agent_args = argsOf(agent);
  CHECK(std::find(agent_args.begin(), agent_args.end(), "--resync-period=1m") != agent_args.end());
  CHECK(std::find(agent_args.begin(), agent_args.end(), "--enable-device-metadata") !=
        agent_args.end());
  // A kubelet elsewhere: its plugin directory is mounted at its host path, and the agent told.
  CHECK(std::find(agent_args.begin(), agent_args.end(),
                  "--plugins-dir=/var/lib/k0s/kubelet/plugins") != agent_args.end());
  CHECK_THAT(containerField(agent, "volumeMounts"),
             Catch::Contains("{mountPath:\"/var/lib/k0s/kubelet/plugins\",name:\"plugins\"}") &&
                 Catch::Contains("{mountPath:\"/extra\",name:\"extra\"}"));
  auto volumes = testing::canonical(*json::at(agent, {"spec", "template", "spec", "volumes"}));
  CHECK_THAT(volumes,
             Catch::Contains("{hostPath:{path:\"/var/lib/k0s/kubelet/plugins\",type:"
                             "\"DirectoryOrCreate\"},name:\"plugins\"}") &&
                 Catch::Contains("{hostPath:{path:\"/etc/cdi\",type:\"DirectoryOrCreate\"},"
                                 "name:\"cdi\"}") &&
                 Catch::Contains("{hostPath:{path:\"/opt/extra\"},name:\"extra\"}"));
  auto default_args = argsOf(rendered(home.path()).at(daemonset));
  CHECK(std::none_of(default_args.begin(), default_args.end(),
                     [](const std::string& a) { return a.starts_with("--plugins-dir"); }));

  // Multus mode, as the DRA driver's chart spells it: no SYS_ADMIN or NET_RAW, no NRI, netns or
  // CNI state mounts; the CNI bin directory stays for the init container, which installs the
  // plugins for Multus, unless agent.installCniPlugins is false.
  auto multus = rendered(home.path(), {"--set", "agent.configurationMode=MULTUS"});
  const auto& m = multus.at(daemonset);
  auto m_args = argsOf(m);
  CHECK(std::find(m_args.begin(), m_args.end(), "--configuration-mode=multus") != m_args.end());
  CHECK_THAT(containerField(m, "securityContext"), Catch::Contains("add:[\"NET_ADMIN\"]"));
  CHECK(volumeNames(m) == std::set<std::string>{"cdi", "cni-bin", "devinfo", "ib-guids",
                                                "metrics-cert", "modprobe", "plugins",
                                                "plugins-registry", "state", "sys", "tmp"});
  CHECK_THAT(testing::canonical(*json::at(m, {"spec", "template", "spec", "initContainers"})),
             Catch::Contains("args:[\"install-cni-plugins\",\"--to=/host/cni-bin\"]"));
  auto bare = rendered(
      home.path(), {"--set", "agent.configurationMode=MULTUS", "--set",
                    "agent.installCniPlugins=false", "--set", "agent.cniBinDir=/usr/libexec/cni"});
  CHECK(volumeNames(bare.at(daemonset)).count("cni-bin") == 0);
  CHECK(json::at(bare.at(daemonset), {"spec", "template", "spec", "initContainers"}) == nullptr);
  auto moved = rendered(home.path(), {"--set", "agent.cniBinDir=/usr/libexec/cni"});
  CHECK_THAT(
      testing::canonical(*json::at(moved.at(daemonset), {"spec", "template", "spec", "volumes"})),
      Catch::Contains("{hostPath:{path:\"/usr/libexec/cni\",type:\"DirectoryOrCreate\"},"
                      "name:\"cni-bin\"}"));
  CHECK(volumeNames(rendered(home.path()).at(daemonset)).count("nri") == 1);

  // cert-manager issues the certificate and injects its CA: no Secret, no caBundle from the chart.
  auto cm = rendered(home.path(), {"--set", "webhook.certificates=certManager"});
  CHECK(cm.count("Secret sriov-dra/sriov-dra-webhook-server-cert") == 0);
  CHECK(cm.count("Issuer sriov-dra/sriov-dra-selfsigned-issuer") == 1);
  CHECK_THAT(testing::canonical(cm.at("Certificate sriov-dra/sriov-dra-serving-cert")),
             Catch::Contains("secretName:\"sriov-dra-webhook-server-cert\""));
  const auto& vwc =
      cm.at("ValidatingWebhookConfiguration /sriov-dra-validating-webhook-configuration");
  CHECK(testing::canonical(vwc["metadata"]) ==
        "{annotations:{cert-manager.io/inject-ca-from:\"sriov-dra/sriov-dra-serving-cert\"},"
        "name:\"sriov-dra-validating-webhook-configuration\"}");
  CHECK(json::member(vwc["webhooks"][0]["clientConfig"], "caBundle") == nullptr);
  // A Secret of your own: its CA as given.
  auto own = rendered(home.path(),
                      {"--set", "webhook.certificates=secret", "--set", "webhook.caBundle=Q0E="});
  CHECK(own.count("Secret sriov-dra/sriov-dra-webhook-server-cert") == 0);
  CHECK(json::stringOr(
            own.at("MutatingWebhookConfiguration /sriov-dra-mutating-webhook-configuration")
                ["webhooks"][0]["clientConfig"],
            "caBundle") == "Q0E=");

  // The opt-in groups of config/, each behind its value; CRDs without the keep policy.
  auto optional = rendered(home.path(), {"--set", "metrics.serviceMonitor.enabled=true", "--set",
                                         "metrics.prometheusRule.enabled=true", "--set",
                                         "networkPolicy.enabled=true", "--set", "crds.keep=false"});
  for (const char* key :
       {"ServiceMonitor sriov-dra/sriov-dra-operator", "ServiceMonitor sriov-dra/sriov-dra-agent",
        "PrometheusRule sriov-dra/sriov-dra",
        "NetworkPolicy sriov-dra/sriov-dra-allow-webhook-traffic"}) {
    INFO(key);
    CHECK(optional.count(key) == 1);
    CHECK(rendered(home.path()).count(key) == 0);
  }
  // Prometheus' own template braces survive Helm's.
  CHECK_THAT(testing::canonical(optional.at("PrometheusRule sriov-dra/sriov-dra")),
             Catch::Contains("{{ $labels.controller }} keeps failing"));
  const auto& crd =
      optional.at("CustomResourceDefinition /sriovnetworknodepolicies.sriovnetwork.openshift.io");
  CHECK(json::member(crd["metadata"], "annotations") == nullptr);

  // The schema refuses what the chart would not apply, naming the value.
  for (const auto& [set, says] : std::vector<std::pair<std::string, std::string>>{
           {"agent.configurationMode=systemd", "configurationMode"},
           {"webhook.certificates=none", "certificates"},
           {"operator.replicas=0", "replicas"},
           {"operator.resourcePrefix=acme.io/x", "resourcePrefix"},
           {"operator.extraArgs={workers}", "extraArgs"},
           {"agent.nodeSlector.a=b", "nodeSlector"},
           {"agent.hostPaths.cdi=var/run/cdi", "cdi"},
           {"agent.hostPaths.kubletPlugins=/x", "kubletPlugins"}}) {
    INFO(set);
    auto out = helm(home.path(), {"template", "sriov-dra", source(kChart), "--set", set});
    CHECK(out.exit_code != 0);
    CHECK_THAT(out.err, Catch::Contains(says));
  }
}

TEST_CASE("helm installs, upgrades and uninstalls the chart on a real API server",
          "[helm][install][integration]") {
  if (helmBinary().empty()) return;
  testing::ControlPlaneOptions options;
  options.install_product_crds = false;  // the chart brings them
  auto cp = ControlPlane::start(options);
  testing::TempDir home;
  auto kubeconfig = cp->kubeconfig();
  auto run = [&](const std::vector<std::string>& args) {
    auto out = helm(home.path(), args, kubeconfig);
    INFO(out.out << out.err);
    REQUIRE(out.exit_code == 0);
    return out.out;
  };
  auto get = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "get");
    return cp->kubectl(args);
  };
  auto secretField = [&](const std::string& key) {
    auto out = get({"secret", "-n", "apps-sriov", "sriov-dra-webhook-server-cert", "-o",
                    "jsonpath={.data." + key + "}"});
    REQUIRE(out.exit_code == 0);
    return out.out;
  };

  // A namespace other than sriov-dra: every reference follows the release's.
  CHECK_THAT(
      run({"install", "sriov-dra", source(kChart), "-n", "apps-sriov", "--create-namespace"}),
      Catch::Contains("STATUS: deployed"));
  REQUIRE(cp->kubectl({"wait", "--for", "condition=established", "--timeout=60s", "crd", "--all"})
              .exit_code == 0);
  auto service =
      get({"validatingwebhookconfiguration", "sriov-dra-validating-webhook-configuration", "-o",
           "jsonpath={.webhooks[0].clientConfig.service.namespace}"});
  CHECK(service.out == "apps-sriov");
  auto binding =
      get({"clusterrolebinding", "sriov-dra-operator", "-o", "jsonpath={.subjects[0].namespace}"});
  CHECK(binding.out == "apps-sriov");
  std::string ca = secretField("ca\\.crt");
  std::string crt = secretField("tls\\.crt");
  checkServingCertificate(ca, crt, "apps-sriov");
  auto bundle = get({"mutatingwebhookconfiguration", "sriov-dra-mutating-webhook-configuration",
                     "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}"});
  CHECK(bundle.out == ca);

  // A user's policy: uninstalling the chart keeps it (the CRDs stay).
  REQUIRE(cp->kubectl({"apply", "-n", "apps-sriov", "-f",
                       source("config/samples/sriovnetworknodepolicy-cx6-vfs.yaml")})
              .exit_code == 0);

  // An upgrade applies the new values and keeps the certificate.
  CHECK_THAT(run({"upgrade", "sriov-dra", source(kChart), "-n", "apps-sriov", "--set",
                  "operator.resourcePrefix=acme.io", "--set", "networkPolicy.enabled=true"}),
             Catch::Contains("REVISION: 2"));
  auto args = get({"deployment", "-n", "apps-sriov", "sriov-dra-operator", "-o",
                   "jsonpath={.spec.template.spec.containers[0].args}"});
  CHECK_THAT(args.out, Catch::Contains("\"--resource-prefix\",\"acme.io\""));
  CHECK(get({"networkpolicy", "-n", "apps-sriov", "sriov-dra-allow-webhook-traffic"}).exit_code ==
        0);
  CHECK(secretField("tls\\.crt") == crt);

  // Uninstall: nothing of the chart's is left but the CRDs it keeps, and the policy with them.
  auto manifest = run({"get", "manifest", "sriov-dra", "-n", "apps-sriov"});
  auto objects = yamlToJson(manifest);
  REQUIRE(objects.ok());
  run({"uninstall", "sriov-dra", "-n", "apps-sriov", "--wait"});
  for (const auto& o : *objects) {
    std::string kind(json::stringOr(o, "kind"));
    const json::Value& meta = o["metadata"];
    std::vector<std::string> args = {kind, std::string(json::stringOr(meta, "name"))};
    if (meta.HasMember("namespace")) args.insert(args.end(), {"-n", meta["namespace"].GetString()});
    INFO(kind << " " << args[1]);
    auto left = get(args);
    CHECK(left.exit_code == (kind == "CustomResourceDefinition" ? 0 : 1));
  }
  CHECK(get({"sriovnetworknodepolicy", "-n", "apps-sriov", "cx6-vfs"}).exit_code == 0);

  // Installing again adopts the kept CRDs; with crds.keep=false an uninstall removes them too.
  run({"install", "sriov-dra", source(kChart), "-n", "apps-sriov", "--set", "crds.keep=false"});
  run({"uninstall", "sriov-dra", "-n", "apps-sriov", "--wait"});
  testing::eventually(
      [&] {
        return cp->kubectl({"get", "crd", "-o", "name"}).out.find("sriovnetwork") ==
               std::string::npos;
      },
      std::chrono::seconds(60),
      [&] {
        return cp->kubectl({"get", "crd", "-o", "name"}).out;
      });
}
