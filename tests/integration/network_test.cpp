// SriovNetwork and SriovIBNetwork against the real API server with Multus's
// NetworkAttachmentDefinition CRD: the operator process renders each network's NAD as the SR-IOV
// network operator does (the configs its controller tests expect), keeps it in sync, moves it,
// waits for its namespace, never takes over another network's NAD, and removes it with the
// network (finalizer in the operator namespace, ownerReference elsewhere).
#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/networks.h"
#include "base/json.h"
#include "support/eventually.h"
#include "support/operator_env.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::OperatorEnv;

namespace {

const auto& kNads = api::resources::kNetworkAttachmentDefinitions;
const auto& kNetworks = api::resources::kSriovNetworks;

constexpr const char* kHostLocal =
    R"({"type":"host-local","subnet":"10.56.217.0/24","rangeStart":"10.56.217.171",)"
    R"("rangeEnd":"10.56.217.181","routes":[{"dst":"0.0.0.0/0"}],"gateway":"10.56.217.1"})";

std::optional<api::NetworkAttachmentDefinition> nad(const OperatorEnv& env, const std::string& ns,
                                                    const std::string& name) {
  auto doc = env.admin().get(kNads, ns, name);
  if (!doc.ok()) return std::nullopt;
  return *api::NetworkAttachmentDefinition::decode(*doc);
}

std::optional<api::Network> network(const OperatorEnv& env, const kube::ResourceType& rt,
                                    const std::string& ns, const std::string& name) {
  auto doc = env.admin().get(rt, ns, name);
  if (!doc.ok()) return std::nullopt;
  if (rt.kind == "SriovNetwork") return *api::SriovNetwork::decode(*doc);
  return *api::SriovIBNetwork::decode(*doc);
}

std::string ready(const std::optional<api::Network>& n) {
  if (!n) return "no network";
  const api::Condition* c = api::findCondition(n->status.conditions, "Ready");
  return c == nullptr ? "no Ready condition" : c->status + " " + c->reason + ": " + c->message;
}

void createNetwork(OperatorEnv& env, const kube::ResourceType& rt, const std::string& ns,
                   const std::string& name, const std::string& spec_json) {
  auto spec = json::parse(spec_json);
  REQUIRE(spec.ok());
  auto doc = kube::newObject(rt, ns, name);
  doc.AddMember("spec", json::Value(*spec, doc.GetAllocator()), doc.GetAllocator());
  auto created = env.admin().create(rt, ns, doc);
  REQUIRE(created.ok());
}

void patchSpec(OperatorEnv& env, const std::string& ns, const std::string& name,
               const std::string& spec_json) {
  auto patched = env.admin().patch(kNetworks, ns, name, kube::PatchType::kMerge,
                                   R"({"spec":)" + spec_json + "}");
  REQUIRE(patched.ok());
}

std::string jsonString(std::string_view s) {
  return json::dump(json::Value(rapidjson::StringRef(s.data(), s.size())));
}

// The config upstream's controller test expects: its compact text, indented by four spaces.
std::string upstreamConfig(std::string_view compact) { return json::indentLikeGo(compact, "    "); }

}  // namespace

TEST_CASE("a SriovNetwork becomes upstream's NetworkAttachmentDefinition, kept and removed with it",
          "[operator][networks][integration]") {
  OperatorEnv env("net");
  std::string target = env.cp().newNamespace("net-target");
  std::string moved = env.cp().newNamespace("net-moved");
  auto op = env.startOperator();  // --resource-prefix openshift.io by default
  auto logs = [&] { return op->logs(); };

  createNetwork(env, kNetworks, env.ns(), "test-0",
                R"({"resourceName":"resource_1","networkNamespace":")" + target +
                    R"(","vlan":100,"ipam":)" + jsonString(kHostLocal) + "}");
  std::string expected = upstreamConfig(
      R"({ "cniVersion":"1.0.0", "name":"test-0","type":"sriov","vlan":100,"vlanQoS":0,)"
      R"("logLevel":"info","ipam":)" +
      std::string(kHostLocal) + " }");
  eventually([&] { return nad(env, target, "test-0").has_value(); }, 30s, logs);
  auto created = *nad(env, target, "test-0");
  CHECK(created.config == expected);
  CHECK(created.metadata.annotations.at("k8s.v1.cni.cncf.io/resourceName") ==
        "openshift.io/resource_1");
  CHECK(created.metadata.annotations.at("sriovnetwork.openshift.io/owner-ref") ==
        "SriovNetwork.sriovnetwork.openshift.io/" + env.ns() + "/test-0");
  eventually([&] { return ready(network(env, kNetworks, env.ns(), "test-0")).starts_with("True"); },
             30s, [&] { return ready(network(env, kNetworks, env.ns(), "test-0")); });
  auto n = *network(env, kNetworks, env.ns(), "test-0");
  CHECK(n.metadata.finalizers ==
        std::vector<std::string>{"netattdef.finalizers.sriovnetwork.openshift.io"});
  CHECK(n.metadata.annotations.at("operator.sriovnetwork.openshift.io/last-network-namespace") ==
        target);
  CHECK(ready(n) == "True NetworkReady: NetworkAttachmentDefinition " + target +
                        "/test-0 is provisioned and ready");

  SECTION("a spec change is rendered; a hand edit and a deletion of the NAD are undone") {
    patchSpec(env, env.ns(), "test-0", R"({"vlan":200,"ipam":"{\"type\":\"dhcp\"}"})");
    std::string updated = upstreamConfig(
        R"({ "cniVersion":"1.0.0", "name":"test-0","type":"sriov","vlan":200,"vlanQoS":0,)"
        R"("logLevel":"info","ipam":{"type":"dhcp"} })");
    eventually([&] { return nad(env, target, "test-0")->config == updated; }, 30s,
               [&] { return nad(env, target, "test-0")->config; });

    auto edited = env.admin().patch(kNads, target, "test-0", kube::PatchType::kMerge,
                                    R"({"spec":{"config":"{}"}})");
    REQUIRE(edited.ok());
    eventually([&] { return nad(env, target, "test-0")->config == updated; }, 30s,
               [&] { return nad(env, target, "test-0")->config; });

    REQUIRE(env.admin().remove(kNads, target, "test-0").isOk());
    eventually(
        [&] {
          auto again = nad(env, target, "test-0");
          return again && again->metadata.uid != created.metadata.uid && again->config == updated;
        },
        30s, logs);
  }

  SECTION("an edited last-network-namespace annotation sends no request and deletes no NAD") {
    // Another NAD the operator may delete, and an annotation that would end the operator's
    // request line and send a DELETE of it with the operator's credentials (issue 52).
    env.cp().applyYaml(
        "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\n"
        "metadata: {name: bystander, namespace: " +
        moved + "}\nspec:\n  config: '{}'\n");
    std::string smuggled =
        "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /apis/k8s.cni.cncf.io/v1/namespaces/" + moved +
        "/network-attachment-definitions/bystander?a=";
    auto patched = env.admin().patch(
        kNetworks, env.ns(), "test-0", kube::PatchType::kMerge,
        R"({"metadata":{"annotations":{"operator.sriovnetwork.openshift.io/last-network-namespace":)" +
            jsonString(smuggled) + "}}}");
    REQUIRE(patched.ok());
    // The operator puts the annotation back: it has reconciled the network.
    eventually(
        [&] {
          auto m = network(env, kNetworks, env.ns(), "test-0");
          return m->metadata.annotations.at(
                     "operator.sriovnetwork.openshift.io/last-network-namespace") == target;
        },
        30s, logs);
    CHECK(nad(env, moved, "bystander"));
    CHECK(nad(env, target, "test-0"));
    for (const auto& e : env.cp().auditEvents()) {
      INFO(e.verb << " " << e.resource << " " << e.namespace_ << "/" << e.name);
      CHECK_FALSE((e.user == "operator" && e.resource == "network-attachment-definitions" &&
                   e.verb == "delete"));
    }
    CHECK_THAT(
        op->logs(),
        Catch::Contains(R"(no NetworkAttachmentDefinition to delete in "x HTTP/1.1\r\nHost: a)"));
    CHECK(ready(network(env, kNetworks, env.ns(), "test-0")).starts_with("True"));
  }

  SECTION("moving networkNamespace moves the NAD; deleting the network deletes it") {
    patchSpec(env, env.ns(), "test-0", R"({"networkNamespace":")" + moved + R"("})");
    eventually([&] { return nad(env, moved, "test-0") && !nad(env, target, "test-0"); }, 30s, logs);
    eventually(
        [&] {
          auto m = network(env, kNetworks, env.ns(), "test-0");
          return m->metadata.annotations.at(
                     "operator.sriovnetwork.openshift.io/last-network-namespace") == moved;
        },
        30s, logs);

    REQUIRE(env.admin().remove(kNetworks, env.ns(), "test-0").isOk());
    eventually(
        [&] { return !nad(env, moved, "test-0") && !network(env, kNetworks, env.ns(), "test-0"); },
        30s, logs);
  }
}

TEST_CASE("a network waits for its namespace and never takes over another network's NAD",
          "[operator][networks][integration]") {
  OperatorEnv env("netwait");
  std::string shared = env.cp().newNamespace("net-shared");
  auto op = env.startOperator();
  auto logs = [&] { return op->logs(); };

  std::string later = env.ns() + "-later";
  createNetwork(env, kNetworks, env.ns(), "waits",
                R"({"resourceName":"r","networkNamespace":")" + later + R"("})");
  eventually(
      [&] {
        return ready(network(env, kNetworks, env.ns(), "waits"))
            .starts_with("False NamespaceNotFound");
      },
      30s, [&] { return ready(network(env, kNetworks, env.ns(), "waits")); });
  // The Event is recorded after the status write (the recorder batches): wait for it too.
  eventually([&] { return env.findEvent("NamespaceNotFound", "Warning", "waits").has_value(); },
             30s, logs);
  env.cp().applyYaml("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + later + "\n");
  eventually([&] { return nad(env, later, "waits").has_value(); }, 30s, logs);
  eventually([&] { return ready(network(env, kNetworks, env.ns(), "waits")).starts_with("True"); },
             30s, [&] { return ready(network(env, kNetworks, env.ns(), "waits")); });

  // A NAD another network rendered (its owner-ref annotation says so) keeps its config.
  std::string foreign_owner = "SriovNetwork.sriovnetwork.openshift.io/elsewhere/taken";
  env.cp().applyYaml(
      "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\n"
      "metadata:\n  name: taken\n  namespace: " +
      shared + "\n  annotations:\n    sriovnetwork.openshift.io/owner-ref: " + foreign_owner +
      "\nspec:\n  config: '{\"type\":\"macvlan\"}'\n");
  createNetwork(env, kNetworks, env.ns(), "taken",
                R"({"resourceName":"r","networkNamespace":")" + shared + R"("})");
  eventually(
      [&] {
        return ready(network(env, kNetworks, env.ns(), "taken"))
            .starts_with("False NetworkAttachmentDefinitionInvalid");
      },
      30s, [&] { return ready(network(env, kNetworks, env.ns(), "taken")); });
  CHECK_THAT(ready(network(env, kNetworks, env.ns(), "taken")),
             Catch::Contains("already exists and is owned by " + foreign_owner));
  REQUIRE(env.admin().remove(kNetworks, env.ns(), "taken").isOk());
  eventually([&] { return !network(env, kNetworks, env.ns(), "taken"); }, 30s, logs);
  CHECK(nad(env, shared, "taken")->config == R"({"type":"macvlan"})");

  // A spec that cannot be rendered says why, in upstream's words, and renders nothing.
  createNetwork(
      env, kNetworks, env.ns(), "broken",
      R"({"resourceName":"r","networkNamespace":")" + shared + R"(","ipam":"{type: dhcp}"})");
  eventually(
      [&] {
        return ready(network(env, kNetworks, env.ns(), "broken"))
            .starts_with("False NetworkAttachmentDefinitionInvalid");
      },
      30s, [&] { return ready(network(env, kNetworks, env.ns(), "broken")); });
  CHECK_THAT(ready(network(env, kNetworks, env.ns(), "broken")),
             Catch::Contains("ipam must be a valid JSON object"));
  eventually(
      [&] {
        return env.findEvent("NetworkAttachmentDefinitionInvalid", "Warning", "broken").has_value();
      },
      30s, [&] { return op->logs(); });
  CHECK_FALSE(nad(env, shared, "broken"));
}

TEST_CASE("a network outside the operator namespace renders into its own, owned by it",
          "[operator][networks][integration]") {
  OperatorEnv env("netown");
  std::string apps = env.cp().newNamespace("net-apps");
  auto op = env.startOperator({.extra_args = {"--resource-prefix", ""}});  // no Multus name
  auto logs = [&] { return op->logs(); };
  const auto& ib = api::resources::kSriovIBNetworks;

  createNetwork(env, ib, apps, "ib-net",
                R"({"resourceName":"ib_vfs","linkState":"enable",)"
                R"("capabilities":"{\"infinibandGUID\": true}"})");
  eventually([&] { return nad(env, apps, "ib-net").has_value(); }, 30s, logs);
  auto rendered = *nad(env, apps, "ib-net");
  CHECK(rendered.config ==
        upstreamConfig(
            R"({ "cniVersion":"1.0.0", "name":"ib-net","type":"ib-sriov",)"
            R"("capabilities":{"infinibandGUID": true},"link_state":"enable","ipam":{} })"));
  auto owner = *network(env, ib, apps, "ib-net");
  REQUIRE(rendered.metadata.owner_references.size() == 1);
  CHECK(rendered.metadata.owner_references[0].kind == "SriovIBNetwork");
  CHECK(rendered.metadata.owner_references[0].uid == owner.metadata.uid);
  CHECK(owner.metadata.finalizers.empty());
  CHECK(rendered.metadata.annotations.count("k8s.v1.cni.cncf.io/resourceName") == 0);

  // networkNamespace is for networks in the operator namespace only.
  createNetwork(env, kNetworks, apps, "elsewhere",
                R"({"resourceName":"r","networkNamespace":")" + env.ns() + R"("})");
  eventually(
      [&] {
        return ready(network(env, kNetworks, apps, "elsewhere"))
            .starts_with("False NetworkAttachmentDefinitionInvalid");
      },
      30s, [&] { return ready(network(env, kNetworks, apps, "elsewhere")); });
  CHECK_THAT(ready(network(env, kNetworks, apps, "elsewhere")),
             Catch::Contains(".Spec.NetworkNamespace field can't be specified if the resource is "
                             "not in the " +
                             env.ns() + " namespace"));
  CHECK_FALSE(nad(env, env.ns(), "elsewhere"));
  CHECK_FALSE(nad(env, apps, "elsewhere"));
}
