// `sriov-dra explain|report|topology` against the real API server: two a100-reference nodes with
// the operator and agents publishing VFs, GPU ResourceSlices shaped like the observed NVIDIA
// slice, the aligned claim template of the reference experiment, and allocations that use up
// some roots.
#include <array>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "base/files.h"
#include "cli/commands.h"
#include "metrics/registry.h"
#include "support/dra_objects.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/metrics_text.h"
#include "support/operator_env.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::OperatorEnv;

namespace {

const std::string kVfDriver(api::kDriverName);
const std::string kRoot(api::attr::kPcieRoot);

struct Run {
  int code;
  std::string out;
  std::string err;
};

template <typename Args, typename F>
Run run(F f, Args args) {
  std::istringstream in;
  std::ostringstream out, err;
  int code = f(args, cli::Streams{in, out, err});
  return {code, out.str(), err.str()};
}

std::string attr(const api::SliceDevice& d, const std::string& name) {
  auto it = d.attributes.find(name);
  return it == d.attributes.end() ? "" : it->second.string_value;
}

struct ToolsEnv {
  ToolsEnv() : env("tools") {
    op = env.startOperator();
    for (const char* suffix : {"a", "b"}) {
      std::string n = env.createNode(suffix, {{"dra-sriov-cx6", "true"}});
      nodes.push_back(n);
      agents.push_back(env.startAgent(n, "a100-reference"));
    }
    env.applyReferencePolicies();
    for (size_t i = 0; i < nodes.size(); ++i) {
      eventually(
          [&] {
            auto s = env.nodeState(nodes[i]);
            return env.deviceCount(nodes[i]) == 8 && s && s->status.gpus.size() == 8;
          },
          90s, [&] { return agents[i]->logs(); });
    }
    testing::createGpuDeviceClass(env.admin());
    args.kubeconfig = env.cp().kubeconfig();
  }

  // The NVIDIA driver's slice for a node with the GPUs the agent found (only those on `roots`,
  // when given).
  void publishGpus(const std::string& node, const std::set<std::string>& roots = {}) {
    auto state = env.nodeState(node);
    REQUIRE(state);
    for (const auto& g : testing::publishGpuSlice(env.admin(), node, state->status.gpus, roots)) {
      gpu_names[node + "/" + g.pcie_root].push_back(g.device);
    }
  }

  // The VFs the agent publishes on `node` under `root`.
  std::vector<std::string> vfsOn(const std::string& node, const std::string& root) const {
    std::vector<std::string> out;
    for (const auto& s : env.slicesOf(node)) {
      for (const auto& d : s.spec.devices) {
        if (attr(d, kRoot) == root) out.push_back(d.name);
      }
    }
    return out;
  }

  // An allocated claim holding `results` (request, driver, device) on `node`, for a pod.
  void allocate(const std::string& name, const std::string& node,
                const std::vector<testing::DeviceResult>& results) {
    testing::createAllocatedClaim(env.admin(), {.ns = env.ns(),
                                                .name = name,
                                                .node = node,
                                                .results = results,
                                                .pod_name = "pod-" + name,
                                                .pod_uid = "uid-" + name});
  }

  json::Document explainJson(const std::string& file = testing::fixturePath(
                                 "reference/aligned-resourceclaimtemplate.yaml")) {
    cli::ExplainArgs e;
    static_cast<cli::ClusterArgs&>(e) = args;
    e.output = "json";
    e.file = file;
    auto r = run(cli::runExplain, e);
    INFO(r.err);
    auto doc = json::parse(r.out);
    REQUIRE(doc.ok());
    return std::move(*doc);
  }

  const json::Value& resultFor(const json::Document& doc, const std::string& node) {
    for (const auto& n : doc["nodeResults"].GetArray()) {
      if (n["node"].GetString() == node) return n;
    }
    FAIL("no result for node " << node);
    throw std::logic_error("unreachable");
  }

  OperatorEnv env;
  std::unique_ptr<testing::OperatorProcess> op;
  std::vector<std::string> nodes;
  std::vector<std::unique_ptr<testing::OperatorProcess>> agents;
  std::map<std::string, std::vector<std::string>> gpu_names;  // node/root -> GPU device names
  cli::ClusterArgs args;
};

std::vector<std::string> constrained(const json::Value& node_result) {
  std::vector<std::string> out;
  for (const auto& d : node_result["devices"].GetArray()) {
    out.push_back(std::string(d["request"].GetString()) + " " +
                  d["constrainedAttributes"].GetString());
  }
  return out;
}

}  // namespace

TEST_CASE("explain, report and topology answer from the live cluster", "[tools][integration]") {
  ToolsEnv t;
  const std::string a = t.nodes[0], b = t.nodes[1];
  t.publishGpus(a);
  // Node b: GPUs only on the NUMA 0 roots.
  t.publishGpus(b, {"pci0000:00", "pci0000:3a"});

  // The aligned template fits node a with a GPU and a VF on the first root.
  auto doc = t.explainJson();
  CHECK(constrained(t.resultFor(doc, a)) ==
        std::vector<std::string>{"gpu pcieRoot=pci0000:00", "vf pcieRoot=pci0000:00"});
  CHECK(t.resultFor(doc, a)["fits"].GetBool());
  // A user who may read everything explain reads except DeviceTaintRules gets the same answer
  // and a warning that says what is missing and how to get it.
  t.env.cp().applyYaml(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: "
      "explain-without-taint-rules}\nrules:\n- apiGroups: ['']\n  resources: [nodes]\n  verbs: "
      "[list]\n- apiGroups: [sriovnetwork.k8snetworkplumbingwg.io]\n  resources: "
      "[sriovnodestates]\n  verbs: [list]\n- apiGroups: [resource.k8s.io]\n  resources: "
      "[resourceslices, deviceclasses, resourceclaims, resourceclaimtemplates]\n  verbs: [get, "
      "list]\n");
  t.env.cp().bindRole("ClusterRole", "explain-without-taint-rules", "restricted", "");
  {
    cli::ExplainArgs e;
    static_cast<cli::ClusterArgs&>(e) = t.args;
    e.kubeconfig = t.env.cp().kubeconfig("restricted");
    e.file = testing::fixturePath("reference/aligned-resourceclaimtemplate.yaml");
    auto r = run(cli::runExplain, e);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("warning: skipped DeviceTaintRules: ") &&
                          Catch::Contains("cannot list resource \"devicetaintrules\"") &&
                          Catch::Contains("grant list on devicetaintrules.resource.k8s.io"));
  }
  // A constraint over the VF alone shows on the VF only.
  testing::TempDir dir;
  std::string text =
      readFile(testing::fixturePath("reference/aligned-resourceclaimtemplate.yaml")).value();
  text.replace(text.find("      config:"), 0,
               "        - requests: [vf]\n          matchAttribute: dra.net/numaNode\n");
  REQUIRE(writeFileAtomic(dir.path() + "/numa.yaml", text, 0644).isOk());
  CHECK(constrained(t.resultFor(t.explainJson(dir.path() + "/numa.yaml"), a)) ==
        std::vector<std::string>{"gpu pcieRoot=pci0000:00", "vf pcieRoot=pci0000:00, numaNode=0"});

  // A device with binding conditions (another driver's): explain says the pod is bound only once
  // the device reports them.
  t.env.cp().applyYaml(
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: attach.example.com}\n"
      "spec: {selectors: [{cel: {expression: \"device.driver == 'attach.example.com'\"}}]}\n---\n"
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: attach-" +
      a + "}\nspec: {driver: attach.example.com, nodeName: " + a + ", pool: {name: " + a +
      ", generation: 1, resourceSliceCount: 1}, devices: [{name: port-0, "
      "bindingConditions: [Attached], bindingFailureConditions: [AttachFailed]}]}\n");
  REQUIRE(writeFileAtomic(dir.path() + "/attach.yaml",
                          "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: "
                          "port}\nspec: {devices: {requests: [{name: port, exactly: "
                          "{deviceClassName: attach.example.com}}]}}\n",
                          0644)
              .isOk());
  auto attach = t.explainJson(dir.path() + "/attach.yaml");
  const auto& port = t.resultFor(attach, a)["devices"][0];
  CHECK(std::string(port["device"].GetString()) == "port-0");
  CHECK(std::string(port["bindingConditions"][0].GetString()) == "Attached");
  {
    cli::ExplainArgs e;
    static_cast<cli::ClusterArgs&>(e) = t.args;
    e.file = dir.path() + "/attach.yaml";
    CHECK_THAT(run(cli::runExplain, e).out,
               Catch::Contains("port: attach.example.com/" + a +
                               "/port-0; the pod is bound once the device reports Attached"));
  }

  // With the VFs of pci0000:00 on node a taken, it still fits there, on another root.
  auto root0 = t.vfsOn(a, "pci0000:00");
  REQUIRE(root0.size() == 2);
  t.allocate("vf-only-0", a, {{"vf", kVfDriver, root0[0]}});
  t.allocate("vf-only-1", a, {{"vf", kVfDriver, root0[1]}});
  // On node b, the VFs under the GPUs' roots are taken: free VFs sit only on NUMA 1.
  int n = 0;
  for (const char* root : {"pci0000:00", "pci0000:3a"}) {
    for (const auto& vf : t.vfsOn(b, root)) {
      t.allocate("b-vf-" + std::to_string(n++), b, {{"vf", kVfDriver, vf}});
    }
  }
  doc = t.explainJson();
  CHECK(constrained(t.resultFor(doc, a)) ==
        std::vector<std::string>{"gpu pcieRoot=pci0000:3a", "vf pcieRoot=pci0000:3a"});
  const auto& on_b = t.resultFor(doc, b);
  CHECK_FALSE(on_b["fits"].GetBool());
  REQUIRE(on_b["reasons"].Size() == 1);
  CHECK(std::string(on_b["reasons"][0].GetString()) ==
        "no gpu and vf with the same resource.kubernetes.io/pcieRoot: gpu free on pci0000:00, "
        "pci0000:3a; vf free on pci0000:80, pci0000:b9");

  SECTION("the table and the exit code") {
    cli::ExplainArgs e;
    static_cast<cli::ClusterArgs&>(e) = t.args;
    e.file = testing::fixturePath("reference/aligned-resourceclaimtemplate.yaml");
    auto r = run(cli::runExplain, e);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("ResourceClaimTemplate dra-sriov-test/gpu-nic-aligned: "
                                        "fits on "));
    CHECK_THAT(r.out, Catch::Contains(b + "   no "));
    // An existing claim by name; a claim no node can take exits 1.
    REQUIRE(
        t.env.admin()
            .create(api::resources::kResourceClaims, t.env.ns(),
                    testing::yamlObject(
                        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: "
                        "eight-vfs}\nspec: {devices: {requests: [{name: vf, exactly: "
                        "{deviceClassName: sriovnetwork.k8snetworkplumbingwg.io, count: 9}}]}}\n"))
            .ok());
    cli::ExplainArgs by_name;
    static_cast<cli::ClusterArgs&>(by_name) = t.args;
    by_name.claim = t.env.ns() + "/eight-vfs";
    auto none = run(cli::runExplain, by_name);
    CHECK(none.code == 1);
    CHECK_THAT(none.out, Catch::Contains("request vf: needs 9 device(s), "));
  }

  SECTION("a pod's extended resources, and admin access only where the namespace allows it") {
    // Node a has free GPUs and VFs: the claim the scheduler makes gives each container its own.
    REQUIRE(writeFileAtomic(
                dir.path() + "/pod.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: infer, namespace: " +
                    t.env.ns() +
                    "}\nspec: {template: {spec: {containers: [{name: app, resources: {limits: "
                    "{nvidia.com/gpu: 1}}}, {name: nic, resources: {limits: "
                    "{deviceclass.resource.kubernetes.io/sriovnetwork.k8snetworkplumbingwg.io: "
                    "1}}}]}}}\n",
                0644)
                .isOk());
    cli::ExplainArgs e;
    static_cast<cli::ClusterArgs&>(e) = t.args;
    e.file = dir.path() + "/pod.yaml";
    auto pod = run(cli::runExplain, e);
    CHECK(pod.code == 0);
    CHECK_THAT(
        pod.out,
        Catch::StartsWith("Deployment " + t.env.ns() + "/infer's extended resources: fits") &&
            Catch::Contains("container-0-request-0 (container app): gpu.nvidia.com/" + a) &&
            Catch::Contains("container-1-request-0 (container nic): " + kVfDriver + "/" + a));
    // A claim asking for admin access, in a namespace without the label: refused as the API
    // server refuses it; with the label it is explained.
    REQUIRE(writeFileAtomic(dir.path() + "/admin.yaml",
                            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: "
                            "{name: watch}\nspec: {devices: {requests: [{name: vf, exactly: "
                            "{deviceClassName: " +
                                kVfDriver + ", adminAccess: true}}]}}\n",
                            0644)
                .isOk());
    e.file = dir.path() + "/admin.yaml";
    e.namespace_ = t.env.ns();
    auto refused = run(cli::runExplain, e);
    CHECK(refused.code == 2);
    CHECK_THAT(refused.err,
               Catch::Contains("ResourceClaim watch: spec.devices.requests[0].adminAccess: "
                               "Forbidden: admin access to devices requires the "
                               "`resource.kubernetes.io/admin-access: true` label on the "
                               "containing namespace (the API server refuses it in namespace " +
                               t.env.ns() + ")"));
    REQUIRE(t.env.admin()
                .patch(kube::resources::kNamespaces, "", t.env.ns(), kube::PatchType::kMerge,
                       R"({"metadata":{"labels":{"resource.kubernetes.io/admin-access":"true"}}})")
                .ok());
    CHECK(run(cli::runExplain, e).code == 0);
  }

  SECTION("report classifies an aligned GPU/VF pair and one that is not") {
    const auto& gpus_root_b9 = t.gpu_names.at(a + "/pci0000:b9");
    const auto& gpus_root_80 = t.gpu_names.at(a + "/pci0000:80");
    auto vfs_b9 = t.vfsOn(a, "pci0000:b9");
    t.allocate("client-devices", a,
               {{"gpu", "gpu.nvidia.com", gpus_root_b9[0]}, {"vf", kVfDriver, vfs_b9[0]}});
    t.allocate("cross", a,
               {{"gpu", "gpu.nvidia.com", t.gpu_names.at(a + "/pci0000:00")[0]},
                {"vf", kVfDriver, vfs_b9[1]}});
    t.allocate("same-numa", a,
               {{"gpu", "gpu.nvidia.com", gpus_root_80[0]},
                {"vf", kVfDriver, t.vfsOn(a, "pci0000:3a")[0]}});
    cli::ClusterArgs r_args = t.args;
    r_args.namespace_ = t.env.ns();
    r_args.output = "json";
    auto r = run(cli::runReport, r_args);
    REQUIRE(r.code == 0);
    auto report = json::parse(r.out);
    REQUIRE(report.ok());
    std::map<std::string, std::string> alignment;
    for (const auto& c : (*report)["claims"].GetArray()) {
      if (c["pairs"].Size() == 1)
        alignment[c["name"].GetString()] = c["pairs"][0]["alignment"].GetString();
    }
    CHECK(alignment["client-devices"] == "same_switch");
    CHECK(alignment["cross"] == "cross_numa");
    CHECK(alignment["same-numa"] == "cross_numa");  // pci0000:80 is NUMA 1, pci0000:3a NUMA 0
    CHECK((*report)["summary"]["same_switch"].GetInt64() == 1);
    CHECK((*report)["summary"]["cross_numa"].GetInt64() == 2);
    r_args.output = "table";
    auto table = run(cli::runReport, r_args);
    CHECK_THAT(table.out, Catch::Contains("pod-client-devices"));
    CHECK_THAT(table.out, Catch::Contains("same switch"));
    CHECK_THAT(table.out, Catch::Contains("3 GPU/VF pair(s): 1 same switch, 0 same root"));
    // The operator (under its own RBAC) exports the same classification as a time series.
    std::string metrics;
    eventually(
        [&] {
          metrics = t.op->metrics();
          return testing::sampleValue(metrics,
                                      "sriov_dra_allocated_pairs{alignment=\"cross_numa\"}") == 2;
        },
        30s, [&] { return metrics + t.op->logs(); });
    CHECK(testing::sampleValue(metrics, "sriov_dra_allocated_pairs{alignment=\"same_switch\"}") ==
          1);
    CHECK(testing::sampleValue(metrics, "sriov_dra_claims_sharing_pf") == 0);
  }

  SECTION("topology draws the tree with what is allocated") {
    cli::TopologyArgs top;
    static_cast<cli::ClusterArgs&>(top) = t.args;
    top.node = a;
    auto r = run(cli::runTopology, top);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::StartsWith(a + "\n├── NUMA 0\n│   ├── pci0000:00\n"));
    CHECK_THAT(r.out, Catch::Contains("│       └── switch "));
    CHECK_THAT(r.out, Catch::Contains("GPU "));
    CHECK_THAT(r.out, Catch::Contains("1 VFs, 1 advertised, 1 allocated, 0 free"));
    CHECK_THAT(r.out, Catch::Contains(" (free)"));
    top.output = "dot";
    auto dot = run(cli::runTopology, top);
    CHECK_THAT(dot.out, Catch::StartsWith("digraph topology {"));
    top.output = "json";
    auto js = run(cli::runTopology, top);
    auto parsed = json::parse(js.out);
    REQUIRE(parsed.ok());
    CHECK((*parsed)[0]["numaNodes"].Size() == 2);
    top.node = "no-such-node";
    CHECK(run(cli::runTopology, top).code == 2);
  }
}
