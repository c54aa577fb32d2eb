// CEL for device selectors: every expression of the reference data and the NVIDIA class against
// the observed devices, CEL's error semantics, positioned syntax errors, the cost limit, and the
// Quantity / Semver values. Table-driven.
#include "scheduling/cel.h"

#include <catch2/catch.hpp>

#include "api/resource.h"
#include "scheduling/cel_parser.h"
#include "scheduling/quantity.h"
#include "support/fixtures.h"

using namespace sriovdra;
using scheduling::cel::Program;

namespace {

api::SliceDevice observed(const std::string& fixture) {
  auto doc = testing::loadFixtureObject(fixture);
  auto slice = api::ResourceSlice::decode(doc);
  REQUIRE(slice.ok());
  REQUIRE(!slice->spec.devices.empty());
  return slice->spec.devices[0];
}

Result<bool> eval(const std::string& expr, std::string_view driver, const api::SliceDevice& d,
                  int64_t limit = scheduling::cel::kDefaultCostLimit) {
  auto p = Program::compile(expr);
  if (!p.ok()) return p.status();
  return p->matches({driver, d}, limit);
}

const std::string kSriov = "sriovnetwork.k8snetworkplumbingwg.io";

struct Outcome {
  std::string expr;
  std::optional<bool> value;  // nullopt: an error containing `error`
  std::string error;
};

// Each expression evaluated against the VF `vf` gives its value, or fails naming `error`.
void checkOutcomes(const std::vector<Outcome>& rows, const api::SliceDevice& vf) {
  for (const auto& row : rows) {
    INFO(row.expr);
    auto r = eval(row.expr, kSriov, vf);
    if (row.value) {
      REQUIRE(r.ok());
      CHECK(*r == *row.value);
    } else {
      REQUIRE_FALSE(r.ok());
      CHECK_THAT(r.status().message(), Catch::Contains(row.error));
    }
  }
}
const std::string kGpu = "gpu.nvidia.com";

}  // namespace

TEST_CASE("reference expressions evaluate against the observed VF and GPU", "[cel][unit]") {
  auto vf = observed("reference/resourceslice-sriov-observed.json");
  auto gpu = observed("reference/resourceslice-gpu-observed.json");
  // What each device gives: true, false, or an error (a key the device does not have; a class
  // selector avoids it by testing device.driver first).
  enum Outcome { T, F, E };
  struct Row {
    std::string expr;
    Outcome on_vf;
    Outcome on_gpu;
  };
  const std::vector<Row> rows = {
      // aligned-resourceclaimtemplate.yaml, resourceclaim-aligned-observed.yaml
      {R"(device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].resourceName == "cx6_vfs")", T,
       E},
      {R"(device.attributes["resource.kubernetes.io"].pciBusID == "0000:c7:00.1")", T, F},
      {R"(device.attributes["resource.kubernetes.io"].pciBusID == "0000:c0:00.0")", F, T},
      // the NVIDIA GPU class and ours (as the operator renders them)
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", F,
       T},
      {"device.driver == 'sriovnetwork.k8snetworkplumbingwg.io'", T, F},
      {"device.driver == 'sriovnetwork.k8snetworkplumbingwg.io' && 'resourceName' in "
       "device.attributes['sriovnetwork.k8snetworkplumbingwg.io'] && "
       "device.attributes['sriovnetwork.k8snetworkplumbingwg.io'].resourceName == 'cx6_vfs'",
       T, F},
      // the shared root of the two samples
      {"device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:b9'", T, T},
      {"device.attributes['resource.kubernetes.io'].pcieRoot in ['pci0000:00', 'pci0000:b9']", T,
       T},
      // typed attributes, functions, capacity, versions
      {"device.attributes['dra.net'].numaNode == 1 && device.attributes['dra.net'].numaNode < 2", T,
       E},
      {"device.attributes['sriovnetwork.k8snetworkplumbingwg.io'].rdmaCapable", T, E},
      {"device.attributes['sriovnetwork.k8snetworkplumbingwg.io'].PFName.startsWith('ibp')", T, E},
      {"device.attributes['gpu.nvidia.com'].productName.contains('A100') && "
       "device.attributes['gpu.nvidia.com'].productName.lowerAscii().endsWith('80gb')",
       E, T},
      {"device.attributes['gpu.nvidia.com'].uuid.matches('^GPU-[0-9a-f-]+$')", E, T},
      {"size(device.attributes['gpu.nvidia.com'].brand) == 6", E, T},
      {"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) > 0", E, T},
      {"device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('80Gi'))", E, F},
      {"device.capacity['gpu.nvidia.com'].memory == quantity('85899345920')", E, T},
      {"device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))", E, T},
      {"device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('8.0.0')) == 0",
       E, T},
      {"device.attributes['gpu.nvidia.com'].driverVersion.major() >= 595", E, T},
      {"has(device.attributes['gpu.nvidia.com'].uuid)", F, T},
      {"'gpu.nvidia.com' in device.attributes", F, T},
      {"device.driver == 'gpu.nvidia.com' ? device.attributes['gpu.nvidia.com'].type == 'gpu' : "
       "device.attributes['sriovnetwork.k8snetworkplumbingwg.io'].linkType == 'infiniband'",
       T, T},
      {"!(device.driver in ['gpu.nvidia.com'])", T, F},
  };
  for (const auto& row : rows) {
    INFO(row.expr);
    auto on_vf = eval(row.expr, kSriov, vf);
    auto on_gpu = eval(row.expr, kGpu, gpu);
    auto outcome = [](const Result<bool>& r) { return !r.ok() ? E : (*r ? T : F); };
    CHECK(outcome(on_vf) == row.on_vf);
    CHECK(outcome(on_gpu) == row.on_gpu);
    for (const auto* r : {&on_vf, &on_gpu}) {
      if (!r->ok()) CHECK_THAT(r->status().message(), Catch::StartsWith("no such key: "));
    }
  }
}

TEST_CASE("unqualified attribute names belong to the device's driver", "[cel][unit]") {
  auto gpu = observed("reference/resourceslice-gpu-observed.json");
  // The GPU slice publishes "type"; it is gpu.nvidia.com/type, not a key of another domain.
  CHECK(eval("device.attributes['gpu.nvidia.com'].type == 'gpu'", kGpu, gpu).value());
  auto other = eval("device.attributes['example.com'].type == 'gpu'", kGpu, gpu);
  REQUIRE_FALSE(other.ok());
  CHECK(other.status().message() == "no such key: type");
  CHECK_FALSE(eval("'example.com' in device.attributes", kGpu, gpu).value());
}

TEST_CASE("device.allowMultipleAllocations is the device's flag, false when unset", "[cel][unit]") {
  auto gpu = observed("reference/resourceslice-gpu-observed.json");
  CHECK_FALSE(eval("device.allowMultipleAllocations", kGpu, gpu).value());
  CHECK(eval("has(device.allowMultipleAllocations)", kGpu, gpu).value());
  gpu.allow_multiple_allocations = true;
  CHECK(eval("device.allowMultipleAllocations", kGpu, gpu).value());
}

TEST_CASE("errors follow CEL: missing keys fail, && and || absorb them", "[cel][unit]") {
  auto vf = observed("reference/resourceslice-sriov-observed.json");
  const std::vector<Outcome> rows = {
      {"device.attributes['gpu.nvidia.com'].type == 'gpu'", std::nullopt, "no such key: type"},
      {"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
       false, ""},
      {"device.attributes['gpu.nvidia.com'].type == 'gpu' && device.driver == 'gpu.nvidia.com'",
       false, ""},
      {"device.attributes['gpu.nvidia.com'].type == 'gpu' || device.driver != ''", true, ""},
      {"device.attributes['gpu.nvidia.com'].type == 'gpu' || false", std::nullopt, "no such key"},
      {"device.attributes['dra.net'].numaNode == 'one'", false, ""},
      {"device.attributes['dra.net'].numaNode < 'one'", std::nullopt,
       "no such overload: _<_(int, string)"},
      {"device.attributes['dra.net'].numaNode == 1.0", true, ""},
      {"device.attributes['dra.net'].numaNode == 1u", true, ""},
      {"9223372036854775807 + 1 > 0", std::nullopt, "integer overflow"},
      {"1 / (device.attributes['dra.net'].numaNode - 1) == 0", std::nullopt, "division by zero"},
      {"device.driver", std::nullopt, "must evaluate to bool, not string"},
      {"[1, 2, 3][5] == 1", std::nullopt, "index out of range: 5"},
      {"{'a': 1}['a'] == 1 && {'a': 1}.a == 1 && size({'a': 1, 'b': 2}) == 2", true, ""},
      {"has(device.attributes['resource.kubernetes.io'].numaNode)", false, ""},
      {"quantity('1.5Gi') == quantity('1536Mi') && quantity('500m').isLessThan(quantity('1'))",
       true, ""},
      {"quantity('12x') == quantity('1')", std::nullopt, "unknown suffix \"x\""},
      {"semver('1.2.3-rc.1').isLessThan(semver('1.2.3'))", true, ""},
      {"semver('v1.2.3').major() == 1", std::nullopt, "not a semantic version"},
      {"'abc'.matches('[') ", std::nullopt, "invalid regular expression"},
      {"r'a\\b' == 'a\\\\b' && '\\x41\\u00e9' == 'Aé' && size('é') == 1", true, ""},
      {"-9223372036854775808 < 0 && 0x10 == 16 && 7 % 3 == 1 && 'a' + 'b' == 'ab'", true, ""},
  };
  checkOutcomes(rows, vf);
}

TEST_CASE("malformed expressions give positioned errors", "[cel][unit]") {
  struct Row {
    std::string expr;
    std::string message;
  };
  const std::vector<Row> rows = {
      {"device.driver == ", "syntax error at 1:18: expected an expression, found end of input"},
      {"device.driver == 'x", "syntax error at 1:18: unterminated string literal"},
      {"device.attributes['d'].x == 1 &&& true", "syntax error at 1:33: unexpected character '&'"},
      {"device.attributes['d'].x == 1 && || true",
       "syntax error at 1:34: expected an expression, found '||'"},
      {"device.drivr == 'x'", "syntax error at 1:7: undefined field 'drivr'"},
      {"dev.driver == 'x'", "syntax error at 1:1: undeclared reference to 'dev'"},
      {"device.driver.startswith('x')",
       "syntax error at 1:14: undeclared reference to function 'startswith'"},
      {"device.driver.startsWith()",
       "syntax error at 1:14: no matching overload for 'startsWith' with 0 argument(s)"},
      {"has(device)", "syntax error at 1:1: invalid argument to has() macro"},
      {"(device.driver == 'x'", "syntax error at 1:22: expected ')', found end of input"},
      {"device.driver == 'x' device", "syntax error at 1:22: expected an operator or end of input"},
      {"device.driver == 'x' # 1", "syntax error at 1:22: unexpected character '#'"},
      {"device.driver ==\n  'a' && )", "syntax error at 2:10: expected an expression, found ')'"},
  };
  for (const auto& row : rows) {
    INFO(row.expr);
    auto p = Program::compile(row.expr);
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(), Catch::StartsWith(row.message));
  }
  auto p = Program::compile("device.driver == ");
  CHECK_THAT(p.status().message(), Catch::EndsWith("  device.driver == \n                   ^"));
}

TEST_CASE("the cost limit stops runaway expressions", "[cel][unit]") {
  auto vf = observed("reference/resourceslice-sriov-observed.json");
  std::string big = "[";
  for (int i = 0; i < 400; ++i) big += (i ? ", " : "") + std::to_string(i);
  big += "]";
  std::string expr = "device.attributes['dra.net'].numaNode in " + big + " + " + big;
  CHECK(eval(expr, kSriov, vf).value());
  auto limited = eval(expr, kSriov, vf, 500);
  REQUIRE_FALSE(limited.ok());
  CHECK(limited.status().message() == "operation cancelled: actual cost limit exceeded");
  // An error absorbed by || does not hide that the budget ran out.
  auto absorbed = eval("true || (" + expr + ")", kSriov, vf, 500);
  CHECK(absorbed.value());
}

TEST_CASE("hostile nesting is a syntax error, not a stack overflow", "[cel][unit]") {
  auto vf = observed("reference/resourceslice-sriov-observed.json");
  auto nested = [](int depth, const std::string& open, const std::string& close) {
    std::string e;
    for (int i = 0; i < depth; ++i) e += open;
    e += "true";
    for (int i = 0; i < depth; ++i) e += close;
    return e;
  };
  const int limit = scheduling::cel::kMaxNesting;
  // At the limit (the whole expression is one level) everything still works.
  CHECK(eval(nested(limit - 1, "(", ")"), kSriov, vf).value());
  CHECK(eval(nested(limit - 2, "!", ""), kSriov, vf).value());  // an even count
  CHECK(eval(nested(limit - 2, "[", "]") + " != []", kSriov, vf).value());
  for (const auto& deep :
       {nested(limit, "(", ")"), nested(5100, "(", ")"), nested(limit + 1, "!", ""),
        nested(5100, "-", ""), nested(5100, "[", "]"), nested(1500, "size(", ")")}) {
    INFO(deep.substr(0, 20));
    auto p = Program::compile(deep);
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.status().message(),
               Catch::Contains("expression nests deeper than 250 levels (CEL's recursion limit)"));
  }
}

TEST_CASE("operator chains nest as CEL's compiler walks them: the API server's decisions",
          "[cel][unit]") {
  auto chain = [](int terms, const std::string& term, const std::string& op) {
    std::string e = term;
    for (int i = 1; i < terms; ++i) e += op + term;
    return e;
  };
  // Each row as kube-apiserver v1.37.2 decided a DeviceClass with this selector.
  struct Row {
    std::string expression;
    bool api_accepts;
  };
  const std::vector<Row> rows = {
      {chain(250, "1", "+") + " == 1", true},      {chain(251, "1", "+") + " == 1", false},
      {chain(5110, "1", "+") + " == 5110", false},  // the finding: 10,227 characters
      {chain(251, "1", "-") + " == 1", false},     {chain(260, "true", " == "), false},
      {chain(1000, "true", " || "), true},  // CEL balances && and ||
      {chain(1200, "true", " && "), true},
  };
  for (const auto& row : rows) {
    INFO(row.expression.substr(0, 40) << " (" << row.expression.size() << " characters)");
    auto p = Program::compile(row.expression);
    CHECK(p.ok() == row.api_accepts);
    if (!p.ok()) CHECK_THAT(p.status().message(), Catch::Contains("CEL's recursion limit"));
  }
}

TEST_CASE("matches() is RE2: CEL's dialect, in linear time", "[cel][unit]") {
  auto vf = observed("reference/resourceslice-sriov-observed.json");
  // Exponential for a backtracking engine (std::regex: seconds at 28 characters); linear here.
  std::string as(4096, 'a');
  CHECK_FALSE(eval("'" + as + "!'.matches('^(a+)+$')", kSriov, vf).value());
  CHECK(eval("'" + as + "'.matches('^(a+)+$')", kSriov, vf).value());
  const std::vector<Outcome> rows = {
      {R"('mlx5_core'.matches('^mlx5'))", true, ""},
      {R"('xmlx5'.matches('mlx5'))", true, ""},      // a search, not a full match
      {R"('abc'.matches('(?i)ABC'))", true, ""},     // RE2 flags
      {R"('ab12'.matches('\\pL+\\d+'))", true, ""},  // Unicode classes
      {R"('aaa'.matches('(a)\\1'))", std::nullopt, "invalid regular expression"},  // no backrefs
      {R"('abc'.matches('(?=a)'))", std::nullopt, "invalid regular expression"},   // no lookahead
  };
  checkOutcomes(rows, vf);
}

TEST_CASE("quantities and versions compare like Kubernetes", "[cel][unit]") {
  auto q = [](const char* s) { return scheduling::Quantity::parse(s).value(); };
  CHECK(q("80Gi") == q("85899345920"));
  CHECK(q("1k") == q("1000"));
  CHECK(q("1e3") == q("1k"));
  CHECK(q("100m") < q("1"));
  CHECK(q("-1") < q("0"));
  CHECK(q("1.5") == q("1500m"));
  CHECK(q("2Ei") > q("2E"));
  CHECK(q("1Gi").asInteger().value() == 1073741824);
  CHECK_FALSE(q("1500m").isInteger());
  CHECK_FALSE(scheduling::Quantity::parse("").ok());
  CHECK_FALSE(scheduling::Quantity::parse("Gi").ok());
  CHECK_FALSE(scheduling::Quantity::parse("1.2.3").ok());
  // Sums and differences, as shared counters are kept, in the largest unit that divides them.
  CHECK((q("80Gi") - q("30Gi")).text() == "50Gi");
  CHECK((q("80Gi") - q("30Gi")) == q("50Gi"));
  CHECK((q("1") - q("2")).text() == "-1");
  CHECK((q("1.5") + q("1")).text() == "2500m");
  CHECK((q("1k") + q("24")).text() == "1Ki");
  CHECK((q("40G") + q("10G")).text() == "50G");
  CHECK((q("1000Gi") + q("0")).text() == "1000Gi");
  CHECK((q("1n") + q("0")).text() == "1n");
  CHECK((q("0") + q("0")).text() == "0");
  auto v = [](const char* s) { return scheduling::Semver::parse(s).value(); };
  CHECK(v("1.2.3").compare(v("1.10.0")) < 0);
  CHECK(v("1.0.0-alpha").compare(v("1.0.0-alpha.1")) < 0);
  CHECK(v("1.0.0-alpha.1").compare(v("1.0.0-alpha.beta")) < 0);
  CHECK(v("1.0.0-rc.1").compare(v("1.0.0")) < 0);
  CHECK(v("1.0.0+build.5") == v("1.0.0"));
  CHECK(v("595.71.5").major() == 595);
  CHECK_FALSE(scheduling::Semver::parse("01.2.3").ok());
  CHECK_FALSE(scheduling::Semver::parse("1.2").ok());
}
