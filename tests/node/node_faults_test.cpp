// The kill matrix on the real node: the product installed as a user installs it
// (support/product_on_node.h), a pod's life stopped at each fault point of the agent and our CNI
// plugins (base/fault_point.h), and there the agent's container, containerd or the kubelet killed
// (SIGKILL; the daemons then started again as systemd would, the agent by its DaemonSet). After
// recovery the node must reach the end state of its row, checked from the API server and the host
// (ProductOnNode::leaks): a pod being started runs with its VF's interface and address; a pod
// being deleted is gone and its VF is back on the host, reset, advertised, its claim gone; VFs
// being recreated are there in the new count; and nothing is left that no pod explains.
//
// Each row is a point and what is killed there: the agent's container, containerd, the kubelet,
// or the whole node (a reboot: every node process, the runtime's tmpfs state, the simulated
// kernel's VFs and boot id). Every cell runs; SRIOV_DRA_FAULT_MATRIX=attach:containerd,cni-del:node
// runs those named (docs/operations.md, "Faults on a node").
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "base/files.h"
#include "base/strings.h"
#include "host/simulated_kernel.h"
#include "support/eventually.h"
#include "support/product_on_node.h"
#include "support/skip.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::ProductOnNode;
using sriovdra::testing::RealNode;

namespace {

const std::string kWorkloads = ProductOnNode::kWorkloads;

enum class Kill { kAgent, kContainerd, kKubelet, kNode };

// Each Kill: how SRIOV_DRA_FAULT_MATRIX names it, and how failures do.
struct KillName {
  Kill kill;
  const char* key;
  const char* name;
};
constexpr KillName kKills[] = {{Kill::kAgent, "agent", "the agent's container"},
                               {Kill::kContainerd, "containerd", "containerd"},
                               {Kill::kKubelet, "kubelet", "the kubelet"},
                               {Kill::kNode, "node", "the whole node (a reboot)"}};

// What the point interrupts, and so what the row does and the end state it expects.
enum class Operation {
  kPodStart,  // a pod with a VF created: it must run with its VF
  kPodEnd,    // a running pod deleted: it must be gone and its VF free
  kRecreate,  // the policy's numVfs changed: the VFs must be there in the new count
};

struct Cell {
  std::string point;
  Operation operation;
  Kill kill;
};

// Every cell, or those SRIOV_DRA_FAULT_MATRIX names (POINT:KILL,...).
std::vector<Cell> matrix() {
  const std::vector<std::pair<std::string, Operation>> points = {
      {"prepare", Operation::kPodStart}, {"attach", Operation::kPodStart},
      {"cni-add", Operation::kPodStart}, {"cni-del", Operation::kPodEnd},
      {"unprepare", Operation::kPodEnd}, {"vfs-removed", Operation::kRecreate}};
  const char* env = std::getenv("SRIOV_DRA_FAULT_MATRIX");
  const std::string chosen = env != nullptr ? env : "";
  std::set<std::string> wanted;
  for (const auto& w : splitList(chosen, ',')) wanted.insert(w);
  std::vector<Cell> cells;
  for (const auto& [point, op] : points) {
    for (const auto& k : kKills) {
      const std::string cell = point + ":" + k.key;
      if (chosen.empty() || wanted.erase(cell) != 0) cells.push_back({point, op, k.kill});
    }
  }
  if (cells.empty() || !wanted.empty()) {
    FAIL("SRIOV_DRA_FAULT_MATRIX=" << chosen << ": no such cell " << join(wanted, ", ")
                                   << " (POINT:agent|containerd|kubelet|node,... with POINT one "
                                      "of prepare, attach, cni-add, cni-del, unprepare, "
                                      "vfs-removed)");
  }
  return cells;
}

void kill(ProductOnNode& p, Kill k) {
  switch (k) {
    case Kill::kAgent:
      // The agent is its container's first process: the CNI plugin it runs goes with it.
      REQUIRE(RealNode::killContainerProcesses("sriov-dra-agent") > 0);
      return;
    case Kill::kContainerd:
      p.node().restartContainerd();
      return;
    case Kill::kKubelet:
      p.node().restartKubelet();
      return;
    case Kill::kNode:
      p.node().reboot([] {
        Status st = host::SimulatedKernel(ProductOnNode::fixtureRoot()).reboot();
        REQUIRE(st.isOk());
      });
      return;
  }
}

// Our driver's devices that the node's slices publish.
size_t advertisedVfs(ProductOnNode& p) {
  std::string names =
      p.jsonpath("", {"resourceslices"},
                 "{range .items[?(@.spec.driver==\"" + std::string(api::kDriverName) +
                     "\")]}{.spec.devices[*].name}{\" \"}{end}");
  return splitList(names, ' ').size();
}

class Row {
 public:
  Row(ProductOnNode& p, const Cell& cell, int n, const std::vector<ProductOnNode::PfVf>& free_vfs)
      : p_(p), cell_(cell), pod_("chaos-" + std::to_string(n)), free_(free_vfs) {}

  void run() {
    consistent();  // what an earlier row left is not this row's
    const int refunds = p_.netnsRefunds();
    operate();
    // A pod's namespace may go with its VF still in it only where the runtime tears the sandbox
    // down before any DEL can run: containerd gone, a reboot, or a RunPodSandbox held at the
    // point past containerd's NRI request timeout (2 s), which fails that sandbox and tears it
    // down while the held ADD may still finish into its namespace. Everywhere else DEL must run
    // first.
    const bool in_flight = cell_.point == "attach" || cell_.point == "cni-add";
    if ((cell_.kill == Kill::kKubelet || cell_.kill == Kill::kAgent) && !in_flight) {
      CHECK(p_.netnsRefunds() == refunds);
    }
  }

 private:
  void operate() {
    switch (cell_.operation) {
      case Operation::kPodStart:
        p_.armFault(cell_.point);
        p_.cp().applyYaml(p_.podYaml(pod_, true, requirement()));
        interrupt();
        runs();
        ends();
        return;
      case Operation::kPodEnd:
        p_.cp().applyYaml(p_.podYaml(pod_, true, requirement()));
        runs();
        p_.armFault(cell_.point);
        p_.kubectl({"delete", "pod", "-n", kWorkloads, pod_, "--wait=false"});
        interrupt();
        p_.kubectl({"wait", "-n", kWorkloads, "--for=delete", "pod/" + pod_, "--timeout=180s"});
        consistent();
        return;
      case Operation::kRecreate:
        p_.armFault(cell_.point);
        numVfs(2);
        interrupt();
        vfsAdvertised(16);
        // Back to the reference's count, with which the stand-ins' netdevs go; then a pod.
        numVfs(1);
        vfsAdvertised(8);
        consistent();  // the VFs made again as they were: GUIDs, drivers, settings
        p_.cp().applyYaml(p_.podYaml(pod_, true, requirement()));
        runs();
        ends();
        return;
    }
  }

  // Waits for the point, kills, and releases whoever survived.
  void interrupt() {
    p_.waitAtFault(cell_.point);
    kill(p_, cell_.kill);
    p_.releaseFault(cell_.point);
  }

  void runs() {
    p_.kubectl(
        {"wait", "-n", kWorkloads, "--for=condition=Ready", "pod/" + pod_, "--timeout=180s"});
    // An agent killed inside RunPodSandbox lets containerd start the sandbox without the VF.
    // A pod that requires the agent's plugin has its container created only once the agent is
    // back, which attaches the VF first (Attacher::createContainer): net1 is there at once.
    // Otherwise the container may start first, and the restarted agent attaches the VF late.
    std::string net1;
    auto addressed = [&] {
      net1 = p_.exec(pod_, {"ip", "addr", "show", "dev", "net1"});
      return net1.find("10.56.217.") != std::string::npos &&
             net1.find("fd00:10:56::") != std::string::npos;
    };
    if (requirement() == ProductOnNode::Plugin::kRequired) {
      const bool at_once = addressed();
      INFO("the pod's net1: " << net1);
      CHECK(at_once);
    } else {
      eventually(addressed, 60s, [&] { return "the pod's net1: " + net1; });
    }
    consistent();
  }

  void ends() {
    p_.kubectl({"delete", "pod", "-n", kWorkloads, pod_, "--wait=true", "--timeout=180s"});
    consistent();
  }

  void consistent() {
    std::string problems;
    eventually(
        [&] {
          problems = p_.leaks(free_);
          return problems.empty();
        },
        180s,
        [&] {
          // The agent's whole log (and its previous container's): what it did since the kill.
          std::string agent;
          for (const char* previous : {"--previous=true", "--previous=false"}) {
            agent += p_.cp()
                         .kubectl({"logs", "-n", "sriov-dra", "daemonset/sriov-dra-agent",
                                   "--tail=-1", previous})
                         .out;
          }
          return "the node does not match its pods:\n" + problems + "\n" + p_.diagnostics() +
                 "\nthe agent's log:\n" + agent;
        });
  }

  // Every pod requires the agent's NRI plugin (docs/attach.md) but in the cell that kills the
  // agent inside our CNI ADD, which shows what a pod without that annotation sees.
  ProductOnNode::Plugin requirement() const {
    return cell_.point == "cni-add" && cell_.kill == Kill::kAgent
               ? ProductOnNode::Plugin::kOptional
               : ProductOnNode::Plugin::kRequired;
  }

  void numVfs(int n) {
    p_.kubectl({"patch", "-n", "sriov-dra", "sriovnetworknodepolicy", "cx6-vfs", "--type=merge",
                "-p", R"({"spec":{"numVfs":)" + std::to_string(n) + "}}"});
  }

  void vfsAdvertised(size_t n) {
    eventually([&] { return advertisedVfs(p_) == n; }, 180s,
               [&] {
                 return "the node advertises " + std::to_string(advertisedVfs(p_)) + " VFs, not " +
                        std::to_string(n) + "\n" + p_.diagnostics();
               });
  }

  ProductOnNode& p_;
  const Cell& cell_;
  std::string pod_;
  const std::vector<ProductOnNode::PfVf>& free_;  // the VFs' settings before any pod
};

}  // namespace

TEST_CASE("killed at each step of a pod's life, the node recovers and leaks nothing",
          "[node][faults]") {
  if (!sriovdra::testing::rootOr("the real node")) return;
  auto product = ProductOnNode::install();
  auto& p = *product;
  const auto free_vfs = ProductOnNode::hostVfs();
  int n = 0;
  for (const auto& cell : matrix()) {
    INFO("fault point " << cell.point << ", " << kKills[static_cast<size_t>(cell.kill)].name
                        << " killed");
    Row(p, cell, n++, free_vfs).run();
  }
}
