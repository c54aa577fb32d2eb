// The agent's NRI plugin against containerd's own NRI implementation (tools/nri-runtime): it
// registers, is configured and synchronized, gets the pod events with the pods' network
// namespaces, fails a sandbox with its own message, and comes back after either side restarts.
#include <mutex>

#include <catch2/catch.hpp>

#include "nri/plugin.h"
#include "support/eventually.h"
#include "support/nri_runtime.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::eventually;
using sriovdra::testing::NriRuntime;
using sriovdra::testing::TempDir;

namespace {

// Records every event; fails RunPodSandbox and CreateContainer for pods named "refused".
class Recorder : public nri::PodHandler {
 public:
  Status synchronize(const std::vector<nri::Pod>& pods) override {
    std::lock_guard lock(mu_);
    syncs_.push_back(pods);
    return Status::ok();
  }
  Status runPodSandbox(const nri::Pod& pod) override {
    if (pod.name == "refused") {
      return Status(Code::kInvalidArgument, "CNI ADD for " + pod.name + " failed: no such NAD");
    }
    return record("run", pod);
  }
  Status stopPodSandbox(const nri::Pod& pod) override { return record("stop", pod); }
  Status removePodSandbox(const nri::Pod& pod) override { return record("remove", pod); }
  Status createContainer(const nri::Pod& pod, const std::string& container) override {
    if (pod.name == "refused") {
      return Status(Code::kUnavailable, "the VFs of " + pod.name + " are not attached yet");
    }
    return record("create " + container, pod);
  }

  std::vector<std::pair<std::string, nri::Pod>> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::vector<std::vector<nri::Pod>> syncs() const {
    std::lock_guard lock(mu_);
    return syncs_;
  }

 private:
  Status record(const std::string& what, const nri::Pod& pod) {
    std::lock_guard lock(mu_);
    events_.emplace_back(what, pod);
    return Status::ok();
  }
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, nri::Pod>> events_;
  std::vector<std::vector<nri::Pod>> syncs_;
};

nri::Pod pod(const std::string& name) {
  return {"sandbox-" + name, "uid-" + name, name, "apps", "/var/run/netns/cni-" + name};
}

}  // namespace

TEST_CASE("the NRI plugin registers with containerd's NRI and gets the pod events",
          "[nri][integration]") {
  TempDir dir;
  NriRuntime runtime(dir.path());
  Recorder recorder;
  nri::Plugin plugin({.socket_path = runtime.socket()}, recorder);
  plugin.start();
  REQUIRE(runtime.waitPlugins(1) == "");
  CHECK(plugin.synchronized());
  REQUIRE(recorder.syncs().size() == 1);
  CHECK(recorder.syncs()[0].empty());

  CHECK(runtime.runPodSandbox(pod("a")) == "");
  CHECK(runtime.createContainer(pod("a"), "app") == "");
  CHECK(runtime.stopPodSandbox(pod("a")) == "");
  CHECK(runtime.removePodSandbox(pod("a")) == "");
  auto events = recorder.events();
  REQUIRE(events.size() == 4);
  CHECK(events[0] == std::pair<std::string, nri::Pod>{"run", pod("a")});  // netns, uid, id intact
  CHECK(events[1] == std::pair<std::string, nri::Pod>{"create app", pod("a")});
  CHECK(events[2].first == "stop");
  CHECK(events[3].first == "remove");

  // The handler's error is what the runtime returns for the sandbox.
  std::string refused = runtime.runPodSandbox(pod("refused"));
  CHECK_THAT(refused, Catch::Contains("CNI ADD for refused failed: no such NAD"));
  // And for the container: containerd fails its creation with it (the kubelet tries again).
  CHECK_THAT(runtime.createContainer(pod("refused"), "app"),
             Catch::Contains("the VFs of refused are not attached yet"));

  SECTION("a restarted plugin is synchronized with the pods that exist") {
    CHECK(runtime.runPodSandbox(pod("b")) == "");
    plugin.stop();
    Recorder again;
    nri::Plugin restarted({.socket_path = runtime.socket()}, again);
    restarted.start();
    REQUIRE(runtime.waitPlugins(2) == "");
    REQUIRE(again.syncs().size() == 1);
    CHECK(again.syncs()[0] == std::vector<nri::Pod>{pod("b")});
    CHECK(runtime.stopPodSandbox(pod("b")) == "");
    CHECK(again.events().size() == 1);
  }
}

TEST_CASE("the NRI plugin waits for the runtime and reconnects when it restarts",
          "[nri][integration]") {
  TempDir dir;
  Recorder recorder;
  nri::Plugin plugin({.socket_path = dir.path() + "/nri.sock", .max_backoff = 200ms}, recorder);
  plugin.start();
  eventually([&] { return plugin.lastError().find("nri.sock") != std::string::npos; }, 10s,
             [&] { return "last error: " + plugin.lastError(); });
  CHECK_FALSE(plugin.synchronized());
  {
    NriRuntime runtime(dir.path() + "/first", dir.path() + "/nri.sock");
    REQUIRE(runtime.waitPlugins(1) == "");
    CHECK(runtime.runPodSandbox(pod("first")) == "");
  }
  // The runtime went away (and took its pods): the plugin says so and connects to the next one.
  eventually([&] { return !plugin.synchronized(); }, 10s, [] { return "still synchronized"; });
  NriRuntime next(dir.path() + "/second", dir.path() + "/nri.sock");
  REQUIRE(next.waitPlugins(1) == "");
  CHECK(next.runPodSandbox(pod("second")) == "");
  auto events = recorder.events();
  REQUIRE(events.size() == 2);
  CHECK(events[1].second.name == "second");
  CHECK(recorder.syncs().size() == 2);
}
