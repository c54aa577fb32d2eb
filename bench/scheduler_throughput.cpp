// How fast the real kube-scheduler places pods with GPU+VF claims over our ResourceSlices: the
// control plane's kube-scheduler and kube-controller-manager (its resourceclaim controller makes
// each pod's claim from the template), kubelet-less nodes, each an a100-reference server with 8
// GPUs (slices shaped as the NVIDIA driver publishes them) and 64 VFs (our slices, as the agent
// writes them), pods created at a fixed rate. Three workloads, each on fresh pods:
//   aligned    the reference template: a GPU and a VF with matchAttribute pcieRoot;
//   unaligned  the same GPU and VF without the constraint;
//   no claims  plain pods (what the scheduler costs without DRA).
// Per workload: pods per second (first create to last bind) and the p50/p99 time from create to
// the binding the bench's watch sees. Figures: aligned beside unaligned (the cost of the
// constraint over our slices, goal 1.25) and unaligned beside no claims (the cost of DRA here).
// Usage: scheduler_throughput [nodes=500] [pods=200] [pods_per_second=20]
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/names.h"
#include "api/policies.h"
#include "base/parallel.h"
#include "base/yaml.h"
#include "dra/slices.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "kube/informer.h"
#include "node/agent/agent.h"
#include "policy/device_classes.h"
#include "support/dra_objects.h"
#include "support/figures.h"
#include "support/fixtures.h"
#include "support/floor.h"
#include "support/operator_env.h"
#include "support/render.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;

namespace {

constexpr int kWorkers = 8;

// 8 VFs on each of the eight ConnectX-6 PFs, advertised: 64 per node.
const char* kPolicy = R"(apiVersion: sriovnetwork.openshift.io/v1
kind: SriovNetworkNodePolicy
metadata: {name: cx6-vfs}
spec:
  resourceName: cx6_vfs
  numVfs: 8
  deviceType: netdevice
  linkType: ib
  isRdma: true
  nodeSelector: {dra-sriov-cx6: "true"}
  nicSelector:
    vendor: "15b3"
    pfNames: [ibp14s0, ibp17s0, ibp82s0, ibp83s0, ibp139s0, ibp142s0, ibp199s0, ibp202s0]
---
apiVersion: sriovnetwork.k8snetworkplumbingwg.io/v1alpha1
kind: SriovResourcePolicy
metadata: {name: cx6-advertise-vfs}
spec:
  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions: [{key: dra-sriov-cx6, operator: In, values: ["true"]}]
  configs:
  - resourceFilters: [{vendors: ["15b3"], linkType: ib}]
)";

std::string templateYaml(const std::string& name, bool aligned) {
  std::string y =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: " + name +
      "}\nspec:\n  spec:\n    devices:\n      requests:\n"
      "      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 1}}\n"
      "      - {name: vf, exactly: {deviceClassName: cx6-vfs.sriovnetwork.k8snetworkplumbingwg.io,"
      " count: 1}}\n";
  if (aligned) {
    y += "      constraints:\n      - {requests: [gpu, vf], matchAttribute: "
         "resource.kubernetes.io/pcieRoot}\n";
  }
  return y;
}

json::Document podOf(const std::string& ns, const std::string& name, const std::string& tmpl) {
  std::string y = "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", namespace: " + ns +
                  "}\nspec:\n  nodeSelector: {dra-sriov-cx6: \"true\"}\n"
                  "  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n";
  if (!tmpl.empty()) {
    y += "    resources: {claims: [{name: gpu-nic}]}\n  resourceClaims:\n"
         "  - {name: gpu-nic, resourceClaimTemplateName: " +
         tmpl + "}\n";
  }
  auto docs = yamlToJson(y);
  if (!docs.ok() || docs->size() != 1) {
    std::fprintf(stderr, "bench: pod YAML: %s\n", docs.status().toString().c_str());
    std::exit(2);
  }
  return std::move((*docs)[0]);
}

// A pod as the bench watches it: only whether and where it is bound.
struct Binding {
  kube::ObjectMeta metadata;
  std::string node;
  static Result<Binding> decode(const json::Value& v) {
    Binding b;
    b.metadata = kube::ObjectMeta::decode(v);
    const json::Value* spec = json::objectMember(v, "spec");
    if (spec != nullptr) b.node = std::string(json::stringOr(*spec, "nodeName"));
    return b;
  }
};

struct Outcome {
  double seconds_per_pod = 0;  // first create to last bind, over the pods
  double p50 = 0, p99 = 0;     // create to bind
  int bound = 0;
};

// Creates `pods` pods at `rate` per second, each from `tmpl` ("" = no claim), and waits until the
// watch saw each bound (at most 5 minutes).
Outcome run(kube::Client& admin, const std::string& ns, const std::string& prefix,
            const std::string& tmpl, int pods, double rate) {
  std::mutex mu;
  std::map<std::string, Steady::time_point> created, bound;
  kube::Informer<Binding> watch(std::shared_ptr<kube::Client>(&admin, [](kube::Client*) {}),
                                kube::resources::kPods, {.namespace_ = ns});
  auto seen = [&](const std::shared_ptr<const Binding>& p) {
    if (p->node.empty() || p->metadata.name.rfind(prefix, 0) != 0) return;
    std::lock_guard lock(mu);
    bound.emplace(p->metadata.name, Steady::now());
  };
  watch.addHandlers({.on_add = seen, .on_update = [&](const auto&, const auto& n) { seen(n); }});
  watch.start();
  watch.waitForSync(std::chrono::minutes(1));
  const auto start = Steady::now();
  const auto interval = std::chrono::duration<double>(1.0 / rate);
  for (int i = 0; i < pods; ++i) {
    std::this_thread::sleep_until(start +
                                  std::chrono::duration_cast<Steady::duration>(interval * i));
    std::string name = prefix + std::to_string(i);
    {
      std::lock_guard lock(mu);
      created[name] = Steady::now();
    }
    bench::mustBeOk(admin.create(kube::resources::kPods, ns, podOf(ns, name, tmpl)).status(),
                    "creating pod " + name);
  }
  auto deadline = Steady::now() + std::chrono::minutes(5);
  while (Steady::now() < deadline) {
    {
      std::lock_guard lock(mu);
      if (static_cast<int>(bound.size()) >= pods) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  watch.stop();
  std::lock_guard lock(mu);
  Outcome out;
  std::vector<double> latencies;
  Steady::time_point last = start;
  for (const auto& [name, at] : bound) {
    latencies.push_back(std::chrono::duration<double>(at - created[name]).count());
    last = std::max(last, at);
  }
  out.bound = static_cast<int>(bound.size());
  out.seconds_per_pod = std::chrono::duration<double>(last - start).count() / pods;
  out.p50 = bench::percentile(latencies, 0.50);
  out.p99 = bench::percentile(latencies, 0.99);
  return out;
}

constexpr const char* kUsage =
    "usage: scheduler_throughput [nodes>=1] [pods>=1, 2.5*pods <= 8*nodes] [pods_per_second>0]\n";

// argv[i] as a number, `fallback` when it is not given; the usage and exit 2 when it is no number.
template <typename T>
T argument(int argc, char** argv, int i, T fallback) {
  if (argc <= i) return fallback;
  std::string_view text(argv[i]);
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    std::fputs(kUsage, stderr);
    std::exit(2);
  }
  return value;
}

}  // namespace

// Long on purpose: the bench as a reader checks it, set-up, each measurement, then the report
// in the order it prints them; every step is a few lines of its own.
// NOLINTNEXTLINE(readability-function-size)
int main(int argc, char** argv) {
  const int n = argument(argc, argv, 1, 500);
  const int pods = argument(argc, argv, 2, 200);
  const double rate = argument(argc, argv, 3, 20.0);
  // Every claim pod holds a GPU to the end: two claim workloads and their warm-ups must fit.
  const int gpu_pods = 2 * (pods + std::max(1, pods / 4));
  if (n < 1 || pods < 1 || rate <= 0 || gpu_pods > n * 8) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  bench::Report report("kube-scheduler over our ResourceSlices: " + std::to_string(n) +
                       " nodes x 8 GPUs + 64 VFs, " + std::to_string(pods) +
                       " pods per workload at " + bench::formatValue(rate, bench::Unit::kCount) +
                       " pods/s");

  // What one server's agent publishes and its GPUs, from the fixture on the simulated kernel.
  testing::TempDir root;
  bench::mustBeOk(host::writeFixture("a100-reference", root.path()), "writing the fixture");
  host::SimulatedKernel kernel(root.path());
  auto before = host::discover(kernel, kernel);
  bench::mustBeOk(before.status(), "discovering the fixture");
  for (const auto& pf : before->pfs) {
    if (pf.vendor == "15b3") {
      bench::mustBeOk(kernel.write("sys/bus/pci/devices/" + pf.pci_address + "/sriov_numvfs", "8"),
                      "creating VFs");
    }
  }
  auto topology = host::discover(kernel, kernel);
  bench::mustBeOk(topology.status(), "discovering the VFs");
  api::SriovNodeStateStatus status;
  status.interfaces = topology->pfs;
  status.gpus = topology->gpus;

  auto options = testing::OperatorEnv::controlPlaneOptions();
  options.controller_manager = true;
  options.scheduler = true;
  auto cp = testing::ControlPlane::start(options);
  testing::OperatorEnv env("sched", *cp);
  auto& admin = env.admin();
  const std::string& ns = env.ns();

  std::vector<std::string> names(n);
  for (int i = 0; i < n; ++i) names[i] = "a100-" + std::to_string(i);
  api::Node shape;
  shape.metadata.name = names[0];
  shape.metadata.labels = {{"dra-sriov-cx6", "true"}};
  auto spec = bench::renderFromYaml(shape, kPolicy, status);
  if (spec.devices.size() != 64 || status.gpus.size() != 8) {
    std::fprintf(stderr, "bench: %zu VFs and %zu GPUs per node, not 64 and 8\n",
                 spec.devices.size(), status.gpus.size());
    return 2;
  }

  // The classes the operator makes of the policy, and the GPU driver's.
  auto policy = yamlToJson(kPolicy);
  bench::mustBeOk(policy.status(), "decoding the policy");
  auto node_policy = api::SriovNetworkNodePolicy::decode(policy->front());
  bench::mustBeOk(node_policy.status(), "decoding the policy");
  for (const auto& c : policy::renderDeviceClasses({&*node_policy}, {}, "")) {
    json::Document doc = kube::newObject(api::resources::kDeviceClasses, "", c.name);
    c.spec.encode(api::Writer(doc, doc.GetAllocator()).object("spec"));
    bench::mustBeOk(admin.create(api::resources::kDeviceClasses, "", doc).status(),
                    "creating DeviceClass " + c.name);
  }
  testing::createGpuDeviceClass(admin);
  cp->applyYaml(templateYaml("aligned", true) + "---\n" + templateYaml("unaligned", false), ns);

  auto setup_start = Steady::now();
  forEachConcurrently(n, kWorkers, [&](size_t i) {
    cp->createNode(names[i], {{"dra-sriov-cx6", "true"}});
    auto node = admin.get(kube::resources::kNodes, "", names[i]);
    bench::mustBeOk(node.status(), "reading node");
    std::string uid = kube::ObjectMeta::decode(*node).uid;
    for (const auto& s : dra::buildSlices(names[i], spec.devices, status.interfaces, {}).slices) {
      bench::mustBeOk(
          admin
              .apply(api::resources::kResourceSlices, "", agent::sliceDocument(names[i], uid, s),
                     {.field_manager = api::kAgentFieldManager, .force = true})
              .status(),
          "publishing a node's slice");
    }
    testing::publishGpuSlice(admin, names[i], status.gpus);
  });
  report.note("setup: " + std::to_string(n) + " nodes and their slices in " +
              bench::formatValue(std::chrono::duration<double>(Steady::now() - setup_start).count(),
                                 bench::Unit::kSeconds));

  struct Workload {
    const char* name;
    std::string tmpl;
    Outcome out;
  };
  std::vector<Workload> workloads = {
      {"aligned", "aligned", {}}, {"unaligned", "unaligned", {}}, {"no claims", "", {}}};
  // Unmeasured first: the scheduler's caches of the new nodes, slices and classes warm up, and
  // no workload pays for it alone.
  for (auto& w : workloads) {
    run(admin, ns, "warm-" + std::string(w.tmpl.empty() ? "plain" : w.tmpl) + "-", w.tmpl,
        std::max(1, pods / 4), rate);
  }
  for (auto& w : workloads) {
    w.out =
        run(admin, ns, std::string(w.tmpl.empty() ? "plain" : w.tmpl) + "-", w.tmpl, pods, rate);
    report.note(
        std::string(w.name) + ": " + std::to_string(w.out.bound) + " of " + std::to_string(pods) +
        " bound, " +
        bench::formatValue(1.0 / std::max(w.out.seconds_per_pod, 1e-9), bench::Unit::kCount) +
        " pods/s, p50 " + bench::formatValue(w.out.p50, bench::Unit::kSeconds) + ", p99 " +
        bench::formatValue(w.out.p99, bench::Unit::kSeconds));
  }
  const auto& a = workloads[0].out;
  const auto& b = workloads[1].out;
  const auto& c = workloads[2].out;
  report.add({"scheduler_aligned_per_pod", "aligned GPU+VF claims: time per pod, create to bind",
              a.seconds_per_pod, b.seconds_per_pod, bench::Unit::kSeconds,
              "the same GPU+VF claims without matchAttribute", 1.25});
  report.add({"scheduler_aligned_p50", "aligned: p50 create to bind", a.p50, b.p50,
              bench::Unit::kSeconds, "unaligned p50", 1.25});
  report.add({"scheduler_aligned_p99", "aligned: p99 create to bind", a.p99, b.p99,
              bench::Unit::kSeconds, "unaligned p99", 1.25});
  report.add({"scheduler_dra_per_pod", "unaligned GPU+VF claims: time per pod", b.seconds_per_pod,
              c.seconds_per_pod, bench::Unit::kSeconds, "pods without claims", 0});
  report.add({"scheduler_dra_p99", "unaligned: p99 create to bind", b.p99, c.p99,
              bench::Unit::kSeconds, "pods without claims, p99", 0});
  bool all_bound = a.bound == pods && b.bound == pods && c.bound == pods;
  if (!all_bound) report.note("NOT ALL PODS WERE BOUND: the figures are of those that were");
  return report.print() && all_bound ? 0 : 1;
}
