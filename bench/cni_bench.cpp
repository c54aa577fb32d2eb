// What our `sriov` CNI plugin costs a pod's start: ADD then DEL of one VF, on the simulated
// kernel's E810 (the PF's side: VF settings through the simulated netlink) with a real netdev
// standing in for the VF's (a veth interface of its name), moved into a real pod namespace and
// back, all inside a network namespace of the bench's own. Floor: the same requests issued
// directly, no plugin: the VF's VLAN set and reset through the same simulated PF, the netdev
// moved into the pod, renamed and brought up, then down, renamed back and moved home.
//   figure cni_add ours=<p50 s> floor=<p50 s>  (p99 beside it)
// Usage: cni_bench [rounds=100]   (as root: network namespaces)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include "base/process.h"
#include "host/fixtures.h"
#include "host/netdev.h"
#include "host/netns.h"
#include "host/simulated_kernel.h"
#include "node/cni/sriov_plugin.h"
#include "support/figures.h"
#include "support/floor.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;

namespace {

const std::string kPf = "ens1f0";
constexpr int kVlan = 100;

double since(Steady::time_point start) {
  return std::chrono::duration<double>(Steady::now() - start).count();
}

// A pod's network namespace, bound at `path` as a runtime binds one.
void makePodNamespace(const std::string& path) {
  std::ofstream(path).flush();
  Status st;
  std::thread([&] {
    if (::unshare(CLONE_NEWNET) != 0) {
      st = Status::fromErrno(errno, "unshare");
    } else if (::mount("/proc/thread-self/ns/net", path.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      st = Status::fromErrno(errno, "binding the pod namespace at " + path);
    }
  }).join();
  bench::mustBeOk(st, "making the pod's network namespace");
}

// The plugin's netdev steps without the plugin: into the pod as net1 and up, then back.
Status directRound(host::SimulatedKernel& kernel, const std::string& netdev,
                   const host::NetNamespace& pod, const host::NetNamespace& home) {
  host::Netdevs nd;
  SDRA_RETURN_IF_ERROR(
      kernel.setVf(kPf, {.kind = host::VfSetting::Kind::kVlan, .vf = 1, .vlan = kVlan}));
  auto link = nd.link(netdev);
  if (!link.ok()) return link.status();
  SDRA_RETURN_IF_ERROR(nd.moveTo(link->index, pod));
  SDRA_RETURN_IF_ERROR(pod.run([&] {
    auto in_pod = nd.link(netdev);
    if (!in_pod.ok()) return in_pod.status();
    SDRA_RETURN_IF_ERROR(nd.rename(in_pod->index, "net1"));
    SDRA_RETURN_IF_ERROR(nd.setUp(in_pod->index, true));
    SDRA_RETURN_IF_ERROR(nd.setUp(in_pod->index, false));
    SDRA_RETURN_IF_ERROR(nd.rename(in_pod->index, netdev));
    return nd.moveTo(in_pod->index, home);
  }));
  return kernel.setVf(kPf, {.kind = host::VfSetting::Kind::kVlan, .vf = 1, .vlan = 0});
}

}  // namespace

int main(int argc, char** argv) {
  auto count = bench::countArgument(argc, argv, 100, 2, 100000);
  if (!count) {
    std::fprintf(stderr, "usage: cni_bench [rounds: 2 to 100000]\n");
    return 2;
  }
  const long rounds = *count;
  if (::geteuid() != 0) {
    std::fprintf(stderr, "cni_bench needs root (it makes network namespaces)\n");
    return 2;
  }
  testing::TempDir dir;
  bench::mustBeOk(host::writeFixture("e810-ethernet", dir.path()), "writing the fixture");
  host::SimulatedKernel kernel(dir.path());
  bench::mustBeOk(kernel.write("sys/bus/pci/devices/0000:3b:00.0/sriov_numvfs", "4"),
                  "creating VFs");
  std::string vf =
      host::baseName(kernel.readLink("sys/class/net/" + kPf + "/device/virtfn1").value());
  std::string netdev = kernel.list("sys/bus/pci/devices/" + vf + "/net").value().front();

  // Everything below runs in the bench's own network namespace, on this thread.
  bench::mustBeOk(::unshare(CLONE_NEWNET) == 0 ? Status::ok() : Status::fromErrno(errno, "unshare"),
                  "entering a network namespace of the bench's own");
  auto made =
      runProcess({.argv = {"ip", "link", "add", netdev, "type", "veth", "peer", "name", "peer0"}},
                 std::chrono::seconds(10));
  bench::mustBeOk(made.ok() && made->exit_code == 0 ? Status::ok()
                                                    : Status(Code::kInternal, "ip link add failed"),
                  "adding the VF's stand-in netdev " + netdev);
  auto home = host::NetNamespace::current().value();
  const std::string pod_path = dir.path() + "/netns-pod";
  makePodNamespace(pod_path);
  auto pod = host::NetNamespace::open(pod_path).value();

  cni_plugin::SriovPlugin plugin({.sysfs = &kernel,
                                  .netlink = &kernel,
                                  .state_dir = dir.path() + "/cni-state",
                                  .lock_timeout = std::chrono::seconds(5)});
  cni::CmdArgs args;
  args.container_id = "bench";
  args.netns = pod_path;
  args.if_name = "net1";
  args.path = "/usr/lib/cni";
  args.cni_version = "1.0.0";
  args.stdin_data = R"({"cniVersion":"1.0.0","name":"vf-net","type":"sriov","deviceID":")" + vf +
                    R"(","vlan":)" + std::to_string(kVlan) + "}";
  auto ourRound = [&] {
    auto added = plugin.add(args);
    bench::mustBeOk(added.status(), "CNI ADD");
    bench::mustBeOk(plugin.del(args), "CNI DEL");
  };

  // One of each first (files created, caches warm), then in turns.
  ourRound();
  bench::mustBeOk(directRound(kernel, netdev, pod, home), "the direct requests");
  std::vector<double> ours, floor;
  for (long i = 0; i < rounds; ++i) {
    auto start = Steady::now();
    ourRound();
    ours.push_back(since(start));
    start = Steady::now();
    bench::mustBeOk(directRound(kernel, netdev, pod, home), "the direct requests");
    floor.push_back(since(start));
  }
  ::umount2(pod_path.c_str(), MNT_DETACH);

  bench::Report report("our sriov CNI plugin: ADD + DEL of one VF, " + std::to_string(rounds) +
                       " rounds");
  report.addMedianAndP99("cni_add", "ADD + DEL of one VF with a VLAN",
                         "the same netdev moves and VF settings, issued directly", ours, floor);
  report.note(
      "the PF's side is the simulated kernel (files), the netdev moves are the real "
      "kernel's rtnetlink; the plugin also reads sysfs, takes its lock and writes its cache "
      "and allocation files");
  return report.print() ? 0 : 1;
}
