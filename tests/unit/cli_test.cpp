// The offline commands, through their functions (no process): render and validate.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "base/yaml.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/terminal_safe.h"
#include "support/control_plane.h"
#include "support/temp_dir.h"

using namespace sriovdra;

namespace {

std::string fixture(const std::string& rel) {
  return testing::sourceDir() + "/tests/fixtures/" + rel;
}

struct Run {
  int code;
  std::string out;
  std::string err;
};

Run render(const cli::RenderArgs& args) {
  std::istringstream in;
  std::ostringstream out, err;
  int code = cli::runRender(args, {in, out, err});
  return {code, out.str(), err.str()};
}

cli::RenderArgs referenceArgs() {
  cli::RenderArgs a;
  a.node_file = fixture("cluster/node-a100-04.yaml");
  a.state_file = fixture("cluster/nodestate-a100-04.yaml");
  a.policy_files = {fixture("reference/sriovnetworknodepolicy-cx6-vfs.yaml"),
                    fixture("reference/sriovresourcepolicy-cx6-advertise-vfs.yaml"),
                    fixture("reference/deviceattributes-cx6-vfs-attrs.yaml")};
  return a;
}

}  // namespace

TEST_CASE("sriov-dra render prints the reference node's spec", "[cli][unit]") {
  auto run = render(referenceArgs());
  REQUIRE(run.code == 0);
  auto docs = yamlToJson(run.out);
  REQUIRE(docs.ok());
  const auto& doc = docs->at(0);
  const json::Value* spec = json::at(doc, {"nodeState", "spec"});
  REQUIRE(spec != nullptr);
  CHECK((*spec)["interfaces"].Size() == 8);
  CHECK((*spec)["devices"].Size() == 8);
  CHECK(json::stringOr((*spec)["devices"][6], "name") == "0000-c7-00-1");
  CHECK(doc["conflicts"].Size() == 0);
  CHECK(doc["invalid"].Size() == 0);

  auto as_json = referenceArgs();
  as_json.output = "json";
  auto j = render(as_json);
  REQUIRE(j.code == 0);
  auto parsed = json::parse(j.out);
  REQUIRE(parsed.ok());
  CHECK(json::dump(*parsed) == json::dump(doc));  // same content in both formats
}

TEST_CASE("sriov-dra render shows who lost an overlapping range and why", "[cli][unit]") {
  auto args = referenceArgs();
  args.policy_files = {fixture("policies/overlapping.yaml")};
  auto run = render(args);
  REQUIRE(run.code == 0);
  auto doc = yamlToJson(run.out);
  REQUIRE(doc.ok());
  const auto& conflicts = doc->at(0)["conflicts"];
  REQUIRE(conflicts.Size() == 1);
  CHECK(json::stringOr(conflicts[0]["loser"], "name") == "low");
  CHECK(json::stringOr(conflicts[0], "winner") == "high");
  CHECK_THAT(std::string(json::stringOr(conflicts[0], "reason")),
             Catch::Contains("higher priority (10 beats 50"));
}

TEST_CASE("sriov-dra render leaves invalid policies out and says why", "[cli][unit]") {
  auto args = referenceArgs();
  args.policy_files.push_back(fixture("policies/invalid.yaml"));
  auto run = render(args);
  REQUIRE(run.code == 0);
  auto doc = yamlToJson(run.out);
  REQUIRE(doc.ok());
  CHECK(doc->at(0)["invalid"].Size() == 2);  // the third, a built-in attribute, is skipped
  CHECK(json::at(doc->at(0), {"nodeState", "spec"})->operator[]("devices").Size() == 8);
}

TEST_CASE("sriov-dra render explains unreadable input", "[cli][unit]") {
  auto args = referenceArgs();
  args.node_file = fixture("reference/aligned-resourceclaimtemplate.yaml");
  auto run = render(args);
  CHECK(run.code == 1);
  CHECK_THAT(run.err, Catch::Contains("--node must hold exactly one Node"));
}

TEST_CASE("sriov-dra validate applies the webhook's rules", "[cli][unit]") {
  std::istringstream in;
  std::ostringstream out, err;
  int code = cli::runValidate({{fixture("policies/invalid.yaml")}, "text"}, {in, out, err});
  CHECK(code == 1);
  std::string text = out.str();
  CHECK_THAT(text,
             Catch::Contains("SriovNetworkNodePolicy/bad-range: error: spec.nicSelector.pfNames "
                             "entry \"ibp14s0#2-9\": the range ends at VF 9 but numVfs is 4"));
  CHECK_THAT(text, Catch::Contains("SriovNetworkNodePolicy/vfio-rdma: error: spec.isRdma: "
                                   "'deviceType: vfio-pci' conflicts with 'isRdma: true'"));
  CHECK_THAT(text, Catch::Contains("DeviceAttributes/overrides-builtin: warning"));
  CHECK_THAT(text, Catch::Contains("3 object(s) checked, 2 error(s), 1 warning(s)"));

  std::ostringstream ok_out;
  int ok = cli::runValidate({{fixture("reference/sriovnetworknodepolicy-cx6-vfs.yaml"),
                              fixture("reference/sriovresourcepolicy-cx6-advertise-vfs.yaml"),
                              fixture("reference/deviceattributes-cx6-vfs-attrs.yaml")},
                             "text"},
                            {in, ok_out, err});
  CHECK(ok == 0);
  CHECK_THAT(ok_out.str(), Catch::Contains("3 object(s) checked, 0 error(s)"));
}

TEST_CASE("sriov-dra validate checks operator and pool configs", "[cli][unit]") {
  testing::TempDir dir;
  std::string file = dir.write("configs.yaml", R"(
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovOperatorConfig
metadata: {name: default}
spec: {enableInjector: true, logLevel: 2}
---
apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkPoolConfig
metadata: {name: workers}
spec: {maxUnavailable: 10%}
)");
  std::istringstream in;
  std::ostringstream out, err;
  int code = cli::runValidate({{file}, "text"}, {in, out, err});
  CHECK(code == 1);
  CHECK_THAT(out.str(), Catch::Contains("SriovOperatorConfig/default: error: spec.enableInjector"));
  CHECK_THAT(out.str(), Catch::Contains("2 object(s) checked, 1 error(s)"));
  CHECK(err.str().empty());
}

TEST_CASE("sriov-dra validate checks policies against node reports and networks, as the webhook",
          "[cli][unit]") {
  std::istringstream in;
  std::ostringstream out, err;
  cli::ValidateArgs args{
      {fixture("policies/against-cluster.yaml"), fixture("cluster/node-a100-04.yaml"),
       fixture("cluster/nodestate-a100-04.yaml")},
      "text"};
  int code = cli::runValidate(args, {in, out, err});
  CHECK(code == 1);
  std::string text = out.str();
  CHECK_THAT(text, Catch::Contains("SriovNetworkNodePolicy/too-many: error: numVfs(200) in CR "
                                   "too-many exceed the maximum allowed value(128) "
                                   "interface(ibp14s0) node(a100-04)"));
  CHECK_THAT(text, Catch::Contains("SriovNetworkNodePolicy/external-mtu: error: MTU(9000) in CR "
                                   "external-mtu is higher than the MTU for the PF externally "
                                   "value(4092)"));
  CHECK_THAT(text,
             Catch::Contains("SriovNetwork/bad-ipam: error: ipam must be a valid JSON object"));
  CHECK_THAT(text, Catch::Contains("SriovIBNetwork/elsewhere: error: .Spec.NetworkNamespace field "
                                   "can't be specified if the resource is not in the sriov-dra "
                                   "namespace"));
  CHECK_THAT(text, Catch::Contains("5 object(s) checked, 4 error(s)"));
  CHECK(text.find("cx6-vf") == std::string::npos);

  // The operator's namespace is a flag: there, networkNamespace is allowed.
  std::ostringstream moved;
  args.namespace_ = "apps";
  cli::runValidate(args, {in, moved, err});
  CHECK(moved.str().find("SriovIBNetwork/elsewhere") == std::string::npos);
}

TEST_CASE("JSON input is read as JSON: trailing garbage and invalid UTF-8 are refused",
          "[cli][unit]") {
  const std::string policy =
      R"({"apiVersion":"sriovnetwork.openshift.io/v1","kind":"SriovNetworkNodePolicy",)"
      R"("metadata":{"name":"p"},"spec":{"resourceName":"r","numVfs":1,"nodeSelector":{},)"
      R"("nicSelector":{"pfNames":["ibp14s0"]}}})";
  struct Row {
    std::string name;
    std::string text;
    std::string error;  // "" = valid
  };
  const std::vector<Row> rows = {
      {"a policy", policy, ""},
      {"trailing garbage", policy + " }]junk", "must not be followed by other values"},
      {"invalid UTF-8", "{\"kind\":\"SriovNetworkNodePolicy\",\"metadata\":{\"name\":\"\xff\"}}",
       "Invalid encoding in string"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    std::istringstream in(row.text);  // stdin: JSON as its first character says
    std::ostringstream out, err;
    int code = cli::runValidate({{"-"}, "text"}, {in, out, err});
    if (row.error.empty()) {
      CHECK(code == 0);
      continue;
    }
    CHECK(code != 0);
    CHECK_THAT(err.str() + out.str(), Catch::Contains(row.error));
  }
}

TEST_CASE("what sriov-dra prints cannot drive the terminal", "[cli][unit]") {
  struct Row {
    std::string in, out;
  };
  std::vector<Row> rows = {
      {"plain text\n\tindented", "plain text\n\tindented"},
      {"\x1b]0;pwned\x07title", R"(\x1b]0;pwned\x07title)"},
      {"progress\rover", R"(progress\x0dover)"},
      {std::string("nul\0!", 5), R"(nul\x00!)"},
      {"del\x7f", R"(del\x7f)"},
      {"\xc2\x9b"
       "31m",
       R"(\xc2\x9b31m)"},                                  // C1 CSI
      {"caf\xc3\xa9 \xc2\xb5s", "caf\xc3\xa9 \xc2\xb5s"},  // UTF-8 passes, C2 B5 included
      {"\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 root", "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 root"},
      {"ends in \xc2", "ends in \xc2"},
      {"raw \x9b"
       "31m csi",
       R"(raw \x9b31m csi)"},                      // 8-bit C1, no UTF-8 lead
      {"\xe2\x9b\x94 ok", "\xe2\x9b\x94 ok"},      // U+26D4: 9B continues it
      {"\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!"},  // U+1F600
      {"\xe2\x94\x9b\x9b",
       "\xe2\x94\x9b"
       R"(\x9b)"},  // U+251B, then a stray 9B
  };
  for (const auto& row : rows) {
    INFO(row.out);
    std::ostringstream sink;
    {
      cli::TerminalSafeBuf buf(sink);
      std::ostream out(&buf);
      out << row.in;
    }
    CHECK(sink.str() == row.out);
  }

  // Every subcommand writes through it: a name with an escape sequence in a file given to
  // `sriov-dra validate` is shown, not obeyed.
  testing::TempDir dir;
  std::string file = dir.path() + "/network.yaml";
  {
    std::ofstream f(file);
    f << "apiVersion: sriovnetwork.openshift.io/v1\nkind: SriovNetwork\nmetadata:\n"
         "  name: \"evil\\u001b[2J\\u001b]0;owned\\u0007\"\n  namespace: sriov-dra\n"
         "spec:\n  resourceName: cx6_vfs\n  capabilities: 'not json'\n";
  }
  CLI::App app;
  cli::CommandLine command_line(app);
  std::vector<std::string> argv = {"sriov-dra", "validate", "-f", file};
  std::vector<char*> args;
  args.reserve(argv.size());
  for (auto& a : argv) args.push_back(a.data());
  app.parse(static_cast<int>(args.size()), args.data());
  std::istringstream in;
  std::ostringstream out, err;
  CHECK(command_line.run({in, out, err}) == 1);
  CHECK_THAT(out.str(), Catch::Contains(R"(SriovNetwork/evil\x1b[2J\x1b]0;owned\x07: error)"));
  CHECK(out.str().find('\x1b') == std::string::npos);
}
