// SriovOperatorConfig and SriovNetworkPoolConfig as users keep them in Git: decoded, checked
// (honoured or refused, saying why), and turned into what the operator applies.
#include "policy/operator_config.h"

#include <catch2/catch.hpp>

#include "base/yaml.h"

using namespace sriovdra;

namespace {

template <typename T>
T fromYaml(const std::string& yaml) {
  auto docs = yamlToJson(yaml);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  auto decoded = T::decode(docs->front());
  INFO(decoded.status().toString());
  REQUIRE(decoded.ok());
  return *decoded;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

api::SriovOperatorConfig config(const std::string& spec, const std::string& name = "default",
                                const std::string& ns = "sriov-dra") {
  return fromYaml<api::SriovOperatorConfig>(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovOperatorConfig\nmetadata: {name: " +
      name + ", namespace: " + ns + "}\nspec: " + spec + "\n");
}

api::SriovNetworkPoolConfig pool(const std::string& name, const std::string& spec) {
  return fromYaml<api::SriovNetworkPoolConfig>(
      "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetworkPoolConfig\nmetadata: {name: " +
      name + ", namespace: sriov-dra}\nspec: " + spec + "\n");
}

}  // namespace

TEST_CASE("an operator config is honoured or refused field by field", "[policy][config][unit]") {
  struct Row {
    std::string name;
    api::SriovOperatorConfig cfg;
    std::string error;    // a phrase of the only error, "" = admitted
    std::string warning;  // a phrase of the only warning, "" = none
  };
  std::vector<Row> rows = {
      {"upstream's default object with the admission controllers off",
       config("{enableInjector: false, enableOperatorWebhook: true, configDaemonNodeSelector: {}, "
              "logLevel: 2, disableDrain: false, configurationMode: daemon}"),
       "", ""},
      {"another name", config("{}", "mine"), "only default SriovOperatorConfig in sriov-dra", ""},
      {"another namespace", config("{}", "default", "kube-system"),
       "only default SriovOperatorConfig in sriov-dra namespace is used", ""},
      {"the injector", config("{enableInjector: true}"), "pods ask for VFs with ResourceClaims",
       ""},
      {"the webhook off", config("{enableOperatorWebhook: false}"), "cannot be switched off here",
       ""},
      {"OVS offload", config("{enableOvsOffload: true}"), "OVS hardware offload", ""},
      {"systemd mode", config("{configurationMode: systemd}"), "DaemonSet only", ""},
      {"daemon environment", config("{configDaemonEnvVars: {A: b}}"), "flags of its DaemonSet", ""},
      {"software bridges", config("{featureGates: {manageSoftwareBridges: true}}"),
       "OVS software bridges", ""},
      {"known gates off",
       config("{featureGates: {parallelNicConfig: false, metricsExporter: "
              "false, mellanoxFirmwareReset: false}}"),
       "", ""},
      {"a known gate on", config("{featureGates: {metricsExporter: true}}"), "",
       "spec.featureGates.metricsExporter: has no effect here: no exporter DaemonSet is "
       "deployed: every agent's /metrics serves the exporter's per-VF families"},
      {"another known gate on", config("{featureGates: {parallelNicConfig: true}}"), "",
       "one after another"},
      {"an unknown gate", config("{featureGates: {fasterPlease: true}}"), "",
       "\"fasterPlease\" is not a feature gate"},
      {"the mellanox plugin off", config("{disablePlugins: [mellanox]}"), "", ""},
      {"no CDI", config("{useCDI: false}"), "", "always hands VFs to containers through CDI"},
      {"no drain", config("{disableDrain: true}"), "", "nodes are not drained"},
      {"log level out of range", config("{logLevel: 5}"), "logLevel must be 0, 1 or 2", ""},
  };
  for (const auto& row : rows) {
    SECTION(row.name) {
      auto f = policy::validateOperatorConfig(row.cfg, "sriov-dra");
      INFO(joined(f.errors) << joined(f.warnings));
      if (row.error.empty()) {
        CHECK(f.errors.empty());
      } else {
        REQUIRE(f.errors.size() == 1);
        CHECK_THAT(f.errors[0], Catch::Contains(row.error));
      }
      if (row.warning.empty()) {
        CHECK(f.warnings.empty());
      } else {
        REQUIRE(f.warnings.size() == 1);
        CHECK_THAT(f.warnings[0], Catch::Contains(row.warning));
      }
    }
  }
}

TEST_CASE("a feature gate that is not true or false does not decode", "[policy][config][unit]") {
  auto docs = yamlToJson("metadata: {name: default}\nspec: {featureGates: {parallelNicConfig: 1}}");
  REQUIRE(docs.ok());
  auto decoded = api::SriovOperatorConfig::decode(docs->front());
  REQUIRE_FALSE(decoded.ok());
  CHECK_THAT(decoded.status().message(), Catch::Contains("featureGates.parallelNicConfig"));
}

TEST_CASE("disableDrain may not turn on while a node is being reconfigured",
          "[policy][config][unit]") {
  auto draining = config("{disableDrain: false}");
  auto not_draining = config("{disableDrain: true}");
  CHECK_THAT(
      policy::refuseDrainDisable(&draining, not_draining, {"worker-3"}),
      Catch::Contains("can't set Spec.DisableDrain = true while node[worker-3] is updating"));
  CHECK(policy::refuseDrainDisable(&draining, not_draining, {}).empty());
  CHECK(policy::refuseDrainDisable(nullptr, not_draining, {"worker-3"}).empty());
  CHECK(policy::refuseDrainDisable(&not_draining, not_draining, {"worker-3"}).empty());
  CHECK(policy::refuseDrainDisable(&not_draining, draining, {"worker-3"}).empty());
}

TEST_CASE("the operator's settings come from the config, else from its flags",
          "[policy][config][unit]") {
  api::LabelSelector flag{{{"sriov", "yes"}}, {}};
  auto none = policy::operatorSettings(nullptr, flag);
  CHECK(none.agent_node_selector == flag);
  CHECK_FALSE(none.log_level);
  CHECK_FALSE(none.drain);

  auto empty = config("{}");
  auto defaults = policy::operatorSettings(&empty, flag);
  CHECK(defaults.agent_node_selector == flag);  // an empty selector keeps the flag's
  CHECK(defaults.drain);                        // upstream's default: drain

  auto set = config("{configDaemonNodeSelector: {gpu: a100}, logLevel: 2, disableDrain: true}");
  auto applied = policy::operatorSettings(&set, flag);
  CHECK(applied.agent_node_selector == api::LabelSelector{{{"gpu", "a100"}, {"sriov", "yes"}}, {}});
  auto other = config("{configDaemonNodeSelector: {sriov: no}}");
  auto both = policy::operatorSettings(&other, flag).agent_node_selector;  // selects nothing
  CHECK_FALSE(api::matchesLabelSelector(both, {{"sriov", "yes"}}));
  CHECK_FALSE(api::matchesLabelSelector(both, {{"sriov", "no"}}));
  CHECK(applied.log_level == 2);
  CHECK_FALSE(applied.drain);

  // Agents change Mellanox firmware unless the mellanox plugin is disabled.
  CHECK(none.firmware);
  CHECK(applied.firmware);
  auto no_mellanox = config("{disablePlugins: [mellanox]}");
  CHECK_FALSE(policy::operatorSettings(&no_mellanox, flag).firmware);
}

TEST_CASE("maxUnavailable is computed as upstream computes it", "[policy][config][unit]") {
  struct Row {
    std::optional<api::IntOrString> value;
    int nodes;
    int expected;            // -1 = no limit
    std::string error = {};  // a phrase, "" = valid
  };
  auto n = [](int64_t v) { return api::IntOrString{.int_value = v}; };
  auto s = [](std::string v) {
    return api::IntOrString{.is_string = true, .string_value = std::move(v)};
  };
  std::vector<Row> rows = {
      {std::nullopt, 10, -1},
      {n(1), 10, 1},
      {n(0), 10, 0},
      {n(20), 10, 20},
      {s("33%"), 10, 3},
      {s("100%"), 7, 7},
      {s("30%"), 1, 0},  // rounded down: nothing in this pool is reconfigured
      {n(-1), 10, 0, "negative number is not allowed"},
      {s("bla"), 10, 0, "strings needs to be a percentage"},
      {s("10000%"), 10, 0, "between 1 and 100"},
      {s("0%"), 10, 0, "between 1 and 100"},
      {s("1.5%"), 10, 0, "not a whole percentage"},
  };
  for (const auto& row : rows) {
    auto got = policy::maxUnavailable(row.value, row.nodes);
    INFO((row.value ? row.value->toString() : "unset") << " of " << row.nodes);
    if (row.error.empty()) {
      REQUIRE(got.ok());
      CHECK(*got == row.expected);
    } else {
      REQUIRE_FALSE(got.ok());
      CHECK_THAT(got.status().message(), Catch::Contains(row.error));
    }
  }
}

TEST_CASE("pool configs are checked and select nodes by label", "[policy][config][unit]") {
  auto gpu = pool("gpu", "{nodeSelector: {matchLabels: {gpu: a100}}, maxUnavailable: 2}");
  auto all = pool("all", "{maxUnavailable: 30%}");
  auto ovs = pool("ovs", "{ovsHardwareOffloadConfig: {name: worker}}");
  CHECK(policy::validatePoolConfig(gpu).ok());
  CHECK(policy::validatePoolConfig(all).ok());
  auto refused = policy::validatePoolConfig(ovs);
  REQUIRE(refused.errors.size() == 1);
  CHECK_THAT(refused.errors[0], Catch::Contains("OVS hardware offload"));
  CHECK(policy::validatePoolConfig(pool("r", "{rdmaMode: exclusive}")).ok());
  CHECK(policy::validatePoolConfig(pool("r", "{rdmaMode: shared}")).ok());
  auto rdma = policy::validatePoolConfig(pool("r", "{rdmaMode: both}"));
  REQUIRE(rdma.errors.size() == 1);
  CHECK_THAT(rdma.errors[0], Catch::Contains("neither shared nor exclusive"));
  // A node's RDMA mode: its pools' when they agree; when they differ, the one it has (keeping
  // isolation through a relabel), said in a conflict.
  auto exclusive = pool("iso", "{rdmaMode: exclusive}");
  auto exclusive2 = pool("iso2", "{rdmaMode: exclusive}");
  auto shared = pool("shared", "{rdmaMode: shared}");
  CHECK(policy::rdmaModeFor({}, "exclusive").mode == "");
  CHECK(policy::rdmaModeFor({&exclusive}, "").mode == "exclusive");
  CHECK(policy::rdmaModeFor({&exclusive, &exclusive2}, "").conflict.empty());
  CHECK(policy::rdmaModeFor({&exclusive, &exclusive2}, "").mode == "exclusive");
  auto split = policy::rdmaModeFor({&shared, &exclusive, &all}, "exclusive");
  CHECK(split.mode == "exclusive");
  CHECK(split.conflict ==
        "the node is in the SriovNetworkPoolConfigs all (none), iso (exclusive), shared (shared) "
        "whose rdmaMode differ: it keeps exclusive until their nodeSelectors put it in pools that "
        "agree");
  auto bad = policy::validatePoolConfig(pool("b", "{maxUnavailable: \"-\"}"));
  REQUIRE(bad.errors.size() == 1);
  CHECK_THAT(bad.errors[0],
             Catch::Contains("SriovNetworkPoolConfig invalid maxUnavailable: invalid type"));
  auto bad_selector = policy::validatePoolConfig(
      pool("s", "{nodeSelector: {matchExpressions: [{key: gpu, operator: Near}]}}"));
  CHECK_FALSE(bad_selector.ok());

  std::vector<const api::SriovNetworkPoolConfig*> pools = {&gpu, &ovs};
  CHECK(policy::poolsOf({{"gpu", "a100"}}, pools) ==
        std::vector<const api::SriovNetworkPoolConfig*>{&gpu});
  CHECK(policy::poolsOf({{"gpu", "h100"}}, pools).empty());  // the OVS pool is skipped
  pools.push_back(&all);
  CHECK(policy::poolsOf({{"gpu", "a100"}}, pools).size() == 2);
}
