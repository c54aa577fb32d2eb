#pragma once
// What the CNI plugins' host tests share (sriov_cni_test.cpp, ib_sriov_cni_test.cpp): a fixture
// server on the simulated kernel whose VFs' netdevs are real (veth stand-ins of the fixture's
// names, moved into pod namespaces for real), all inside a network namespace of the bench's own,
// and the runtime's arguments of a command. Root only (namespaces, netdevs).
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include "base/process.h"
#include "cni/skel.h"
#include "host/fixtures.h"
#include "host/netdev.h"
#include "host/netns.h"
#include "host/simulated_kernel.h"
#include "node/cni/ib_sriov_plugin.h"
#include "node/cni/sriov_plugin.h"
#include "support/skip.h"
#include "support/temp_dir.h"

namespace sriovdra::testing {
// The exit code of a short command (-1 when it could not run).
inline int exitCodeOf(const std::vector<std::string>& argv) {
  auto out = runProcess({.argv = argv}, std::chrono::seconds(10));
  return out.ok() ? out->exit_code : -1;
}

// A VF netdev's stand-in: one end of a veth pair (ifb takes no MAC), its peer beside it.
inline int addStandIn(const std::string& name) {
  static int peers = 0;
  return exitCodeOf({"ip", "link", "add", name, "type", "veth", "peer", "name",
                     "peer" + std::to_string(peers++)});
}

// The fixture with 4 VFs on ens1f0, their netdevs as veth interfaces, and pod namespaces bound
// under the temporary directory; everything inside a network namespace of its own, entered by
// the thread that calls inside().
class Bench {
 public:
  // 4 VFs on the PF `pf` (its netdev) at `pf_address` of the fixture.
  explicit Bench(const std::string& fixture = "e810-ethernet",
                 const std::string& pf_address = "0000:3b:00.0", std::string pf = "ens1f0")
      : pf_(std::move(pf)) {
    REQUIRE(host::writeFixture(fixture, dir_.path()).isOk());
    kernel_ = std::make_unique<host::SimulatedKernel>(dir_.path());
    REQUIRE(kernel_->write("sys/bus/pci/devices/" + pf_address + "/sriov_numvfs", "4").isOk());
  }
  ~Bench() {
    for (const auto& p : pods_) {
      ::umount2(p.c_str(), MNT_DETACH);
      ::unlink(p.c_str());
    }
  }

  // Runs `fn` on a thread in the bench's own network namespace (made on first use).
  void inside(const std::function<void()>& fn) {
    std::thread([&] {
      if (!netns_) {
        REQUIRE(::unshare(CLONE_NEWNET) == 0);
        netns_.emplace(host::NetNamespace::current().value());
        for (int i = 0; i < 4; ++i) {
          REQUIRE(addStandIn(vfNetdev(i)) == 0);
        }
      } else {
        REQUIRE(::setns(netns_->fd(), CLONE_NEWNET) == 0);
      }
      fn();
    }).join();
  }

  std::string vfAddress(int i) const {
    return host::baseName(
        kernel_->readLink("sys/class/net/" + pf_ + "/device/virtfn" + std::to_string(i)).value());
  }
  std::string vfNetdev(int i) const {
    return kernel_->list("sys/bus/pci/devices/" + vfAddress(i) + "/net").value().front();
  }
  // A new pod namespace, bound at a path (as a runtime makes one).
  std::string pod(const std::string& name) {
    std::string path = dir_.path() + "/netns-" + name;
    std::ofstream(path).flush();
    std::thread([&] {
      REQUIRE(::unshare(CLONE_NEWNET) == 0);
      REQUIRE(::mount("/proc/thread-self/ns/net", path.c_str(), nullptr, MS_BIND, nullptr) == 0);
    }).join();
    pods_.push_back(path);
    return path;
  }
  void removePod(const std::string& path) {
    ::umount2(path.c_str(), MNT_DETACH);
    ::unlink(path.c_str());
  }

  cni_plugin::SriovPlugin plugin() {
    return cni_plugin::SriovPlugin(
        {.sysfs = kernel_.get(),
         .netlink = kernel_.get(),
         .state_dir = stateDir(),
         .lock_timeout = std::chrono::milliseconds(200),
         .log = [this](std::string_view l) { log_ += std::string(l) + "\n"; }});
  }
  // The ib-sriov plugin on the bench's kernel (sysfs, netlink, RDMA), its state under stateDir().
  cni_plugin::IbSriovPlugin ibPlugin() {
    return cni_plugin::IbSriovPlugin({.sysfs = kernel_.get(),
                                      .netlink = kernel_.get(),
                                      .rdma = kernel_.get(),
                                      .state_dir = stateDir() + "/ib",
                                      .lock_timeout = std::chrono::milliseconds(200)});
  }
  std::string stateDir() const { return dir_.path() + "/cni-state"; }
  host::SimulatedKernel& kernel() { return *kernel_; }
  const std::string& log() const { return log_; }

  host::VfInfo vf(int i) {
    auto vfs = kernel_->vfs(pf_);
    REQUIRE(vfs.ok());
    for (const auto& v : *vfs) {
      if (v.vf == i) return v;
    }
    FAIL("no VF " << i);
    return {};
  }
  static bool inPod(const std::string& netns, const std::string& if_name) {
    bool found = false;
    (void)host::NetNamespace::open(netns).value().run([&] {
      found = host::Netdevs().link(if_name).ok();
      return Status::ok();
    });
    return found;
  }

 private:
  testing::TempDir dir_;
  std::string pf_;
  std::unique_ptr<host::SimulatedKernel> kernel_;
  std::optional<host::NetNamespace> netns_;
  std::vector<std::string> pods_;
  std::string log_;
};

inline cni::CmdArgs args(const std::string& netns, const std::string& config,
                         std::string cid = "pod-a", std::string if_name = "net1") {
  cni::CmdArgs a;
  a.container_id = std::move(cid);
  a.netns = netns;
  a.if_name = std::move(if_name);
  a.path = "/usr/lib/cni";
  a.stdin_data = config;
  a.cni_version = "1.0.0";
  return a;
}

inline bool root() { return testing::rootOr("the CNI plugins' checks"); }

}  // namespace sriovdra::testing
