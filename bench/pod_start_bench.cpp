// What a VF costs a pod's start, on the real node (support/product_on_node.h: the product as pods
// under a real kubelet and containerd). Ours: a pod from the reference gpu-nic-aligned template,
// from its create request until it is Ready, which takes the scheduler's allocation, the kubelet's
// NodePrepareResources (GPU stand-in and our plugin), our NRI plugin's CNI ADD in RunPodSandbox
// and containerd's CDI edits. Floor: the same pod without a claim, on the same node, in the same
// run. The pods start one after the other, each deleted (and its VF given back) before the next,
// so every start finds the node as the first did.
//   figure pod_start_vf ours=<p50 s> floor=<p50 s>  (p99 beside it)
// Usage: pod_start_bench [pods=20]   (as root, with scripts/test.sh's environment)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "api/names.h"
#include "base/json.h"
#include "support/figures.h"
#include "support/product_on_node.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;
using sriovdra::testing::ProductOnNode;

namespace {

bool ready(kube::Client& client, const std::string& pod) {
  auto got = client.get(kube::resources::kPods, ProductOnNode::kWorkloads, pod);
  if (!got.ok()) return false;
  const json::Value* conditions = json::at(*got, {"status", "conditions"});
  if (conditions == nullptr || !conditions->IsArray()) return false;
  for (const auto& c : conditions->GetArray()) {
    if (json::stringOr(c, "type") == "Ready") return json::stringOr(c, "status") == "True";
  }
  return false;
}

// Seconds from the create request to Ready, polled every 10 ms; the pod is deleted afterwards and
// waited for.
double startOnce(ProductOnNode& p, kube::Client& client, const std::string& name, bool with_vf) {
  std::string yaml = p.podYaml(name, with_vf);
  auto start = Steady::now();
  p.cp().applyYaml(yaml);
  auto deadline = start + std::chrono::seconds(120);
  while (!ready(client, name)) {
    if (Steady::now() > deadline) {
      throw std::runtime_error("pod " + name + " was not Ready within 120 s\n" + p.diagnostics());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  double seconds = std::chrono::duration<double>(Steady::now() - start).count();
  p.kubectl(
      {"delete", "-n", ProductOnNode::kWorkloads, "pod", name, "--wait=true", "--timeout=120s"});
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  auto count = bench::countArgument(argc, argv, 20, 2, 1000);
  if (!count) {
    std::fprintf(stderr, "usage: pod_start_bench [pods: 2 to 1000]\n");
    return 2;
  }
  const long pods = *count;
  try {
    auto product = ProductOnNode::install();
    auto client = product->cp().client();
    // One of each first: images unpacked, caches and connections warm.
    startOnce(*product, *client, "warm-plain", false);
    startOnce(*product, *client, "warm-vf", true);
    std::vector<double> floor, ours;
    for (long i = 0; i < pods; ++i) {
      floor.push_back(startOnce(*product, *client, "plain-" + std::to_string(i), false));
      ours.push_back(startOnce(*product, *client, "vf-" + std::to_string(i), true));
    }
    bench::Report report("pod start on a real node (kubelet, containerd, " + std::to_string(pods) +
                         " pods each, one at a time)");
    report.addMedianAndP99("pod_start_vf",
                           "create -> Ready, GPU+VF claim from gpu-nic-aligned, VF attached",
                           "the same pod without a claim", ours, floor);
    report.note(
        "each pod is deleted (its VF back on the host) before the next starts; pods "
        "alternate with and without a claim");
    return report.print() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pod_start_bench: %s\n", e.what());
    return 1;
  }
}
