// Advertisement: SriovResourcePolicy filters and order, node selectors, DeviceAttributes merge.
#include <optional>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "api/selectors.h"
#include "base/pointers.h"
#include "policy/render.h"
#include "policy/resource_policies.h"
#include "support/policy_fixtures.h"

using namespace sriovdra;
using namespace sriovdra::testing::fixture;

namespace {

const std::string kRes(api::attr::kResourceName);

policy::RenderResult renderWith(const api::SriovNodeStateStatus& status,
                                const std::vector<api::SriovResourcePolicy>& rps,
                                const std::vector<api::DeviceAttributes>& das = {},
                                const std::vector<api::SriovNetworkNodePolicy>& nps = {},
                                const policy::RenderOptions& options = {},
                                const api::Node& n = node("n1", {{"zone", "a"}, {"cpus", "64"}})) {
  return policy::render({n, pointers(nps), pointers(rps), pointers(das), status, options});
}

std::vector<std::string> names(const policy::RenderResult& r) {
  std::vector<std::string> out;
  for (const auto& d : r.spec.devices) out.push_back(d.pci_address);
  return out;
}

}  // namespace

TEST_CASE("resource filters: fields ANDed, entries ORed, lists any-of", "[policy][srp][unit]") {
  auto status = e810Status(2);  // ens1f0: 0000:3b:02.0/.1, ens1f1: 0000:3b:04.0/.1
  struct Row {
    std::string name;
    std::vector<api::ResourceFilter> filters;
    std::vector<std::string> expected;
  };
  std::vector<Row> rows = {
      {"no filters: every VF",
       {},
       {"0000:3b:02.0", "0000:3b:02.1", "0000:3b:04.0", "0000:3b:04.1"}},
      {"vendor (PF vendor)",
       {{.vendors = {"8086"}}},
       {"0000:3b:02.0", "0000:3b:02.1", "0000:3b:04.0", "0000:3b:04.1"}},
      {"VF device id",
       {{.devices = {"1889"}}},
       {"0000:3b:02.0", "0000:3b:02.1", "0000:3b:04.0", "0000:3b:04.1"}},
      {"PF device id is not a VF device id", {{.devices = {"1593"}}}, {}},
      {"pciAddresses", {{.pci_addresses = {"0000:3b:04.1"}}}, {"0000:3b:04.1"}},
      {"pfNames", {{.pf_names = {"ens1f0"}}}, {"0000:3b:02.0", "0000:3b:02.1"}},
      {"pfNames by alternative name",
       {{.pf_names = {"enp59s0f1"}}},
       {"0000:3b:04.0", "0000:3b:04.1"}},
      {"pfPciAddresses",
       {{.pf_pci_addresses = {"0000:3b:00.1"}}},
       {"0000:3b:04.0", "0000:3b:04.1"}},
      {"drivers select nothing (the SR-IOV DRA driver's semantics): the bound one",
       {{.drivers = {"iavf"}}},
       {"0000:3b:02.0", "0000:3b:02.1", "0000:3b:04.0", "0000:3b:04.1"}},
      {"drivers select nothing: one a claim binds at prepare (the driver's README pattern)",
       {{.drivers = {"vfio-pci"}}},
       {"0000:3b:02.0", "0000:3b:02.1", "0000:3b:04.0", "0000:3b:04.1"}},
      {"linkType eth",
       {{.link_type = "eth"}},
       {"0000:3b:02.0", "0000:3b:02.1", "0000:3b:04.0", "0000:3b:04.1"}},
      {"linkType ethernet",
       {{.link_type = "ethernet"}},
       {"0000:3b:02.0", "0000:3b:02.1", "0000:3b:04.0", "0000:3b:04.1"}},
      {"linkType infiniband on Ethernet PFs", {{.link_type = "infiniband"}}, {}},
      {"fields ANDed", {{.pci_addresses = {"0000:3b:04.0"}, .pf_names = {"ens1f0"}}}, {}},
      {"filters ORed",
       {{.pci_addresses = {"0000:3b:02.1"}}, {.pci_addresses = {"0000:3b:04.0"}}},
       {"0000:3b:02.1", "0000:3b:04.0"}},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto out = renderWith(status, {ResourcePolicy("p").config(row.filters).get()});
    CHECK(names(out) == row.expected);
    for (const auto& d : out.spec.devices) CHECK(d.attributes.empty());
  }
}

TEST_CASE("a device carries the drivers of the first filter that matched it",
          "[policy][srp][unit]") {
  auto status = e810Status(2);
  auto out = renderWith(status, {ResourcePolicy("p")
                                     .config({{.pf_names = {"ens1f0"}, .drivers = {"vfio-pci"}},
                                              {.drivers = {"iavf", "vfio-pci"}},
                                              {.pf_names = {"ens1f1"}}})
                                     .get()});
  std::map<std::string, std::vector<std::string>> drivers;
  for (const auto& d : out.spec.devices) drivers[d.pci_address] = d.drivers;
  CHECK(drivers ==
        std::map<std::string, std::vector<std::string>>{{"0000:3b:02.0", {"vfio-pci"}},
                                                        {"0000:3b:02.1", {"vfio-pci"}},
                                                        {"0000:3b:04.0", {"iavf", "vfio-pci"}},
                                                        {"0000:3b:04.1", {"iavf", "vfio-pci"}}});
  auto none = renderWith(status, {ResourcePolicy("p").config({{.pf_names = {"ens1f1"}}}).get()});
  for (const auto& d : none.spec.devices) CHECK(d.drivers.empty());
}

TEST_CASE("the first policy by name, then the first config, wins a VF", "[policy][srp][unit]") {
  auto status = e810Status(2);
  auto b = ResourcePolicy("b-all").config({}, {{{"set", "b"}}}).get();
  auto a = ResourcePolicy("a-f0")
               .config({{.pf_names = {"ens1f0"}}}, {{{"set", "a1"}}})
               .config({}, {{{"set", "a2"}}})
               .get();
  std::vector<api::DeviceAttributes> das = {
      deviceAttributes("da-a1", {{"set", "a1"}},
                       {{"example.com/from", api::AttributeValue::ofString("a1")}}),
      deviceAttributes("da-a2", {{"set", "a2"}},
                       {{"example.com/from", api::AttributeValue::ofString("a2")}}),
      deviceAttributes("da-b", {{"set", "b"}},
                       {{"example.com/from", api::AttributeValue::ofString("b")}}),
  };
  auto out = renderWith(status, {b, a}, das);
  REQUIRE(out.spec.devices.size() == 4);
  CHECK(out.spec.devices[0].attributes.at("example.com/from").string_value == "a1");
  CHECK(out.spec.devices[2].attributes.at("example.com/from").string_value == "a2");
  CHECK(out.matches.at({policy::kResourcePolicyKind, "a-f0"}) == 4);
  CHECK(out.matches.at({policy::kResourcePolicyKind, "b-all"}) == 0);
  REQUIRE(out.conflicts.size() == 1);
  CHECK(out.conflicts[0].loser.name == "b-all");
  CHECK(out.conflicts[0].winner == "a-f0");
  CHECK_THAT(out.conflicts[0].target, Catch::StartsWith("4 VF(s)"));
}

TEST_CASE("DeviceAttributes merge in name order; built-ins are never overridden",
          "[policy][srp][unit]") {
  auto status = e810Status(1);
  auto rp = ResourcePolicy("p").config({}, {{{"pool", "x"}}}).get();
  std::vector<api::DeviceAttributes> das = {
      deviceAttributes("z-last", {{"pool", "x"}},
                       {{"example.com/speed", api::AttributeValue::ofInt(100)}}),
      deviceAttributes(
          "a-first", {{"pool", "x"}},
          {{"example.com/speed", api::AttributeValue::ofInt(25)},
           {"example.com/tier", api::AttributeValue::ofString("gold")},
           {std::string(api::attr::kPcieRoot), api::AttributeValue::ofString("pci9999:00")},
           {"vfID", api::AttributeValue::ofInt(7)}}),
      deviceAttributes("other", {{"pool", "y"}},
                       {{"example.com/no", api::AttributeValue::ofBool(true)}}),
  };
  auto out = renderWith(status, {rp}, das);
  REQUIRE(out.spec.devices.size() == 2);
  const auto& attrs = out.spec.devices[0].attributes;
  CHECK(attrs.at("example.com/speed") == api::AttributeValue::ofInt(100));
  CHECK(attrs.at("example.com/tier") == api::AttributeValue::ofString("gold"));
  CHECK(attrs.count(std::string(api::attr::kPcieRoot)) == 0);
  CHECK(attrs.count(std::string(api::attr::kVfId)) == 0);
  CHECK(attrs.count("example.com/no") == 0);
  REQUIRE(out.warnings.size() == 2);
  CHECK(out.warnings[0].policy.name == "a-first");
  CHECK_THAT(out.warnings[0].message, Catch::Contains("built-in"));
  CHECK(out.matches.count({policy::kDeviceAttributesKind, "other"}) == 0);
}

TEST_CASE("a config without a DeviceAttributes selector advertises without attributes",
          "[policy][srp][unit]") {
  auto out = renderWith(
      e810Status(1), {ResourcePolicy("p").config({}).get()},
      {deviceAttributes("d", {}, {{"example.com/a", api::AttributeValue::ofBool(true)}})});
  REQUIRE(out.spec.devices.size() == 2);
  CHECK(out.spec.devices[0].attributes.empty());
}

TEST_CASE("node policies and resource policies together", "[policy][srp][unit]") {
  auto status = e810Status(4);
  auto np = NodePolicy("np").pf("ens1f0#0-1").numVfs(4).resource("fast").get();
  SECTION("a node policy alone advertises nothing, as the SR-IOV DRA driver") {
    auto out = renderWith(status, {}, {}, {np});
    CHECK(out.spec.devices.empty());
    CHECK(out.spec.interfaces.size() == 1);  // its VFs are still configured
  }
  SECTION("with --advertise-node-policy-vfs it advertises its VF group with resourceName") {
    auto out = renderWith(status, {}, {}, {np}, {.advertise_node_policy_vfs = true});
    CHECK(names(out) == std::vector<std::string>{"0000:3b:02.0", "0000:3b:02.1"});
    REQUIRE(out.spec.devices.size() == 2);
    CHECK(out.spec.devices[0].attributes.at(kRes) == api::AttributeValue::ofString("fast"));
  }
  SECTION("a resource policy selecting the group's VFs advertises them with resourceName") {
    auto out = renderWith(status, {ResourcePolicy("rp").config({{.pf_names = {"ens1f0"}}}).get()},
                          {}, {np});
    CHECK(out.spec.devices.size() == 4);
    CHECK(out.spec.devices[0].attributes.at(kRes) == api::AttributeValue::ofString("fast"));
    CHECK(out.spec.devices[2].attributes.empty());  // outside the group: no resourceName
  }
  SECTION("a resource policy advertises VFs outside every group, and only those it selects") {
    auto out = renderWith(status, {ResourcePolicy("rp").config({{.pf_names = {"ens1f1"}}}).get()},
                          {}, {np});
    CHECK(out.spec.devices.size() == 4);
    for (const auto& d : out.spec.devices) CHECK(d.attributes.empty());
    auto both = renderWith(status, {ResourcePolicy("rp").config({{.pf_names = {"ens1f1"}}}).get()},
                           {}, {np}, {.advertise_node_policy_vfs = true});
    CHECK(both.spec.devices.size() == 6);
  }
  SECTION("DeviceAttributes win resourceName over the node policy, with a warning") {
    auto rp = ResourcePolicy("rp").config({}, {{{"p", "1"}}}).get();
    auto da = deviceAttributes("da", {{"p", "1"}}, {{kRes, api::AttributeValue::ofString("slow")}});
    auto out = renderWith(status, {rp}, {da}, {np});
    CHECK(out.spec.devices[0].attributes.at(kRes) == api::AttributeValue::ofString("slow"));
    REQUIRE_FALSE(out.warnings.empty());
    CHECK_THAT(out.warnings[0].message, Catch::Contains("overrides \"fast\""));
  }
  SECTION("a DeviceAttributes k8s.cni.cncf.io/resourceName the NADs do not carry is pointed out") {
    const std::string cni(api::attr::kCniResourceName);
    auto rp = ResourcePolicy("rp").config({{.pf_names = {"ens1f0"}}}, {{{"p", "1"}}}).get();
    auto other =
        deviceAttributes("da", {{"p", "1"}}, {{cni, api::AttributeValue::ofString("acme/fast")}});
    auto out = renderWith(status, {rp}, {other}, {np}, {.resource_prefix = "openshift.io"});
    CHECK(out.spec.devices[0].attributes.at(cni) == api::AttributeValue::ofString("acme/fast"));
    REQUIRE(out.warnings.size() == 1);  // once, not per VF
    CHECK_THAT(out.warnings[0].message,
               Catch::Contains("\"acme/fast\" from DeviceAttributes differs from "
                               "\"openshift.io/fast\"") &&
                   Catch::Contains("Multus matches the two"));
    auto same = deviceAttributes("da", {{"p", "1"}},
                                 {{cni, api::AttributeValue::ofString("openshift.io/fast")}});
    CHECK(renderWith(status, {rp}, {same}, {np}, {.resource_prefix = "openshift.io"})
              .warnings.empty());
    CHECK(renderWith(status, {rp}, {other}, {np}).warnings.empty());  // no prefix: no NAD name
  }
  SECTION("with a prefix, the Multus name follows the resourceName DeviceAttributes give") {
    const std::string cni(api::attr::kCniResourceName);
    auto slow =
        deviceAttributes("da", {{"p", "1"}}, {{kRes, api::AttributeValue::ofString("slow")}});
    // Outside every VF group: the resourceName is the DeviceAttributes' alone.
    auto outside = ResourcePolicy("rp").config({{.pf_names = {"ens1f1"}}}, {{{"p", "1"}}}).get();
    auto out = renderWith(status, {outside}, {slow}, {np}, {.resource_prefix = "openshift.io"});
    REQUIRE(out.spec.devices.size() == 4);
    for (const auto& d : out.spec.devices) {
      CHECK(d.attributes.at(cni) == api::AttributeValue::ofString("openshift.io/slow"));
    }
    CHECK(renderWith(status, {outside}, {slow}, {np}).spec.devices[0].attributes.count(cni) == 0);
    // In a group whose resourceName they override: the NADs of "slow" carry openshift.io/slow.
    auto inside = ResourcePolicy("rp").config({{.pf_names = {"ens1f0"}}}, {{{"p", "1"}}}).get();
    auto over = renderWith(status, {inside}, {slow}, {np}, {.resource_prefix = "openshift.io"});
    CHECK(over.spec.devices[0].attributes.at(cni) ==
          api::AttributeValue::ofString("openshift.io/slow"));
    // A resourceName that is not a string names no NAD.
    auto number = deviceAttributes("da", {{"p", "1"}}, {{kRes, api::AttributeValue::ofInt(7)}});
    CHECK(renderWith(status, {outside}, {number}, {np}, {.resource_prefix = "openshift.io"})
              .spec.devices[0]
              .attributes.count(cni) == 0);
  }
}

TEST_CASE("core NodeSelector semantics, and the DRA driver's for resource policies",
          "[policy][selectors][unit]") {
  api::Labels labels = {{"zone", "a"}, {"cpus", "64"}};
  auto req = [](std::string key, std::string op, std::vector<std::string> values) {
    return api::SelectorRequirement{std::move(key), std::move(op), std::move(values)};
  };
  auto term = [](std::vector<api::SelectorRequirement> exprs,
                 std::vector<api::SelectorRequirement> fields = {}) {
    return api::NodeSelectorTerm{std::move(exprs), std::move(fields)};
  };
  struct Row {
    std::string name;
    api::NodeSelector selector;
    bool matches;                     // core Kubernetes
    std::optional<bool> driver = {};  // the SR-IOV DRA driver, where it differs
  };
  std::vector<Row> rows = {
      {"In", {{term({req("zone", "In", {"a", "b"})})}}, true},
      {"NotIn", {{term({req("zone", "NotIn", {"a"})})}}, false},
      {"NotIn on a missing label", {{term({req("rack", "NotIn", {"r1"})})}}, true},
      {"Exists", {{term({req("cpus", "Exists", {})})}}, true},
      {"DoesNotExist", {{term({req("cpus", "DoesNotExist", {})})}}, false},
      {"Gt", {{term({req("cpus", "Gt", {"32"})})}}, true},
      {"Lt", {{term({req("cpus", "Lt", {"32"})})}}, false},
      {"Gt on a non-number", {{term({req("zone", "Gt", {"1"})})}}, false},
      {"expressions ANDed", {{term({req("zone", "In", {"a"}), req("cpus", "Lt", {"8"})})}}, false},
      {"terms ORed", {{term({req("zone", "In", {"b"})}), term({req("cpus", "Gt", {"8"})})}}, true},
      {"an empty term matches nothing (the driver: everything)", {{term({})}}, false, true},
      {"no terms match nothing (the driver: everything)", {{}}, false, true},
      {"an empty term beside one that does not match",
       {{term({req("zone", "In", {"b"})}), term({})}},
       false,
       true},
      {"matchFields metadata.name", {{term({}, {req("metadata.name", "In", {"n1"})})}}, true},
      {"matchFields another node", {{term({}, {req("metadata.name", "In", {"n2"})})}}, false},
      {"unknown operator", {{term({req("zone", "Like", {"a"})})}}, false},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    CHECK(api::matchesNodeSelector(row.selector, "n1", labels) == row.matches);
    auto out = renderWith(e810Status(1),
                          {ResourcePolicy("p").config({}).nodeSelector(row.selector).get()});
    CHECK(out.spec.devices.empty() == !row.driver.value_or(row.matches));
  }
}

TEST_CASE("label selectors for DeviceAttributes", "[policy][selectors][unit]") {
  api::Labels labels = {{"pool", "cx6"}, {"tier", "gold"}};
  struct Row {
    std::string name;
    api::LabelSelector selector;
    bool matches;                     // core Kubernetes
    std::optional<bool> driver = {};  // the SR-IOV DRA driver, where it differs
  };
  std::vector<Row> rows = {
      {"empty selects everything", {}, true},
      {"matchLabels", {{{"pool", "cx6"}}, {}}, true},
      {"matchLabels mismatch", {{{"pool", "e810"}}, {}}, false},
      {"expression In", {{}, {{"tier", "In", {"gold", "silver"}}}}, true},
      {"expression DoesNotExist", {{}, {{"tier", "DoesNotExist", {}}}}, false},
      {"Gt is not a label selector operator", {{}, {{"tier", "Gt", {"1"}}}}, false},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    CHECK(api::matchesLabelSelector(row.selector, labels) == row.matches);
  }
}
