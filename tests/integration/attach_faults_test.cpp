// Standalone mode when things go wrong (attach_env.h): a pod's end never reported, a new sandbox
// while an earlier one holds the VF, an agent killed during CNI ADD, a DEL that never succeeds,
// a stale record, and a CNI plugin slower than the runtime's budget.
#include <csignal>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "attach_env.h"
#include "base/files.h"
#include "base/json.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using namespace sriovdra::testing::attach;
using sriovdra::testing::eventually;
using sriovdra::testing::KubeletClaim;
using sriovdra::testing::KubeletClient;
using sriovdra::testing::NriRuntime;
using sriovdra::testing::OperatorEnv;

TEST_CASE(
    "a pod whose end the runtime never reports gives its VF back when its claim is unprepared",
    "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  auto [claim, pod] =
      a.runWithVf("unreported", "6f1c5b0e-9d0a-4d49-9a53-000000000301", "10.9.0.11/24", net);
  INFO(a.agent->logs());

  // containerd, restarted since the pod started, sends no StopPodSandbox; the kubelet still
  // unprepares the claim once the pod is gone.
  auto undone = KubeletClient::unprepare(a.endpoint, "v1", {claim});
  REQUIRE(undone.ok());
  CHECK(undone->at(claim.uid) == "");
  CHECK(net.vfOnHost());
  CHECK(net.inPod("vfnet0").empty());
  CHECK_THAT(a.agent->logs(), Catch::Contains("never said its sandbox stopped"));
  // The runtime's late StopPodSandbox, if it comes, finds nothing left to do.
  CHECK(a.runtime.stopPodSandbox(pod) == "");
  CHECK(net.vfOnHost());
}

TEST_CASE("a pod's new sandbox takes its VF from an earlier one the runtime never stopped",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000401";
  a.runWithVf("resandboxed", uid, "10.9.0.12/24", net);
  INFO(a.agent->logs());

  // The pod's next sandbox (after a reboot or a runtime restart, no StopPodSandbox came).
  const std::string next_ns = "sdra-attach-next-" + std::to_string(::getpid());
  REQUIRE(testing::ip({"netns", "add", next_ns}).exit_code == 0);
  struct Gone {
    std::string ns;
    ~Gone() { testing::ip({"netns", "del", ns}); }
  } gone{next_ns};
  nri::Pod next{"sandbox-resandboxed-2", uid, "pod-resandboxed", a.env.ns(),
                "/var/run/netns/" + next_ns};
  REQUIRE(a.runtime.runPodSandbox(next) == "");
  CHECK(net.inPod("vfnet0").empty());
  CHECK_THAT(testing::ip({"-n", next_ns, "-br", "addr", "show", "vfnet0"}).out,
             Catch::Contains("10.9.0.12/24"));
  CHECK_THAT(a.agent->logs(), Catch::Contains("gets a new sandbox while its earlier one"));
  REQUIRE(a.runtime.stopPodSandbox(next) == "");
  CHECK(net.vfOnHost());
}

TEST_CASE("an agent killed during CNI ADD deletes and adds again after its restart",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a({"--nri-attach-timeout=60"});  // the hanging ADD outlives the agent
  HostNetwork net;
  // A CNI plugin that records its pid and hangs on ADD (DEL succeeds): the agent dies mid-ADD.
  std::string marker = a.kubelet.path() + "/hang.pid";
  std::string deleted = a.kubelet.path() + "/hang.deleted";
  std::filesystem::create_directories(a.kubelet.path() + "/cni");
  REQUIRE(
      writeFileAtomic(a.kubelet.path() + "/cni/hang",
                      "#!/bin/sh\ncat >/dev/null\nif [ \"$CNI_COMMAND\" = ADD ]; then echo $$ > " +
                          marker + "; exec sleep 300; fi\ntouch " + deleted +
                          "\necho '{\"cniVersion\":\"1.0.0\"}'\n",
                      0755)
          .isOk());
  a.createNad("flaky-net", R"({"cniVersion":"1.0.0","name":"flaky-net","type":"hang"})");
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000201";
  a.prepare("flaky", uid, R"("netAttachDefName":"flaky-net")");
  auto pod = a.pod("flaky", uid, net);
  std::string record = a.env.stateDir(a.node) + "/attach/" + pod.id + ".json";

  std::thread run([&] { (void)a.runtime.runPodSandbox(pod); });
  eventually([&] { return std::filesystem::exists(marker); }, 30s, [&] { return a.agent->logs(); });
  CHECK_THAT(readFile(record).valueOr(""), Catch::Contains("\"state\":\"Adding\""));
  a.agent->stop(SIGKILL);
  run.join();  // the runtime dropped the dead plugin and went on: the pod runs, unattached
  // The hung plugin outlived the agent; stop it as a person would.
  ::kill(std::stoi(readFile(marker).valueOr("0")), SIGKILL);

  // The NAD is fixed meanwhile. The restarted agent registers at once (the synchronization's CNI
  // work runs after the answer), deletes the half-done ADD with the configuration it ran with,
  // and attaches with the NAD as it is now.
  a.createNad("flaky-net", hostDevice("10.9.0.9/24"));
  a.agent = a.startAgent();
  REQUIRE(a.runtime.waitPlugins(2) == "");
  // The interface appears in the pod before its address (host-device moves it, then IPAM runs)
  // and the record says Attached once ADD returned: both are waited for.
  eventually([&] { return net.inPod("vfnet0").find("10.9.0.9/24") != std::string::npos; }, 30s,
             [&] { return net.inPod("vfnet0") + a.agent->logs(); });
  CHECK(std::filesystem::exists(deleted));
  eventually(
      [&] {
        return readFile(record).valueOr("").find("\"state\":\"Attached\"") != std::string::npos;
      },
      30s, [&] { return readFile(record).valueOr("(no record)"); });
  eventually(
      [&] {
        auto s = a.status("flaky");
        return s && s->network_data && !s->network_data->ips.empty();
      },
      30s, [&] { return a.agent->logs(); });
  REQUIRE(a.runtime.stopPodSandbox(pod) == "");
  CHECK(net.vfOnHost());
}

TEST_CASE("a DEL that keeps failing is given up with a Warning Event", "[attach][integration]") {
  if (!root()) return;
  AttachEnv a({"--cni-del-give-up-after=0"});
  HostNetwork net;
  // A plugin whose ADD succeeds and whose DEL never does (its state lost, say).
  std::filesystem::create_directories(a.kubelet.path() + "/cni");
  REQUIRE(writeFileAtomic(a.kubelet.path() + "/cni/del-fails",
                          "#!/bin/sh\ncat >/dev/null\nif [ \"$CNI_COMMAND\" = DEL ]; then echo "
                          "'{\"code\":11,\"msg\":\"no state left\"}'; exit 1; fi\necho "
                          "'{\"cniVersion\":\"1.0.0\"}'\n",
                          0755)
              .isOk());
  a.createNad("dead-end", R"({"cniVersion":"1.0.0","name":"dead-end","type":"del-fails"})");
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000601";
  a.prepare("dead-end", uid, R"("netAttachDefName":"dead-end")");
  auto pod = a.pod("dead-end", uid, net);
  const std::string record = a.env.stateDir(a.node) + "/attach/" + pod.id + ".json";
  INFO(a.agent->logs());
  REQUIRE(a.runtime.runPodSandbox(pod) == "");
  REQUIRE(std::filesystem::exists(record));
  // The runtime, the kubelet's unprepare and the pod's next sandbox would each try again: here
  // the runtime, nine times refused with the plugin's message, the tenth given up.
  for (int i = 1; i < 10; ++i) {
    CHECK_THAT(a.runtime.stopPodSandbox(pod), Catch::Contains("no state left"));
  }
  CHECK(a.runtime.stopPodSandbox(pod) == "");
  CHECK_FALSE(std::filesystem::exists(record));
  // On the node's SriovNodeState: the one object the agent may record Events about.
  std::optional<std::string> message;
  eventually(
      [&] { return (message = a.env.findEvent("DetachAbandoned", "Warning", a.node)).has_value(); },
      30s, [&] { return a.agent->logs(); });
  CHECK_THAT(*message, Catch::Contains("pod " + a.env.ns() +
                                       "/pod-dead-end: CNI DEL of vfnet0 "
                                       "(VF 0000:11:00.1) failed 10 times") &&
                           Catch::Contains("no state left") && Catch::Contains("IPAM lease"));
}

TEST_CASE("a stale record never takes a VF from the claim that holds it now",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;
  HostNetwork net;
  const std::string second_uid = "6f1c5b0e-9d0a-4d49-9a53-000000000702";
  auto [first, first_pod] =
      a.runWithVf("first", "6f1c5b0e-9d0a-4d49-9a53-000000000701", "10.9.0.14/24", net);
  INFO(a.agent->logs());
  const std::string record = a.env.stateDir(a.node) + "/attach/" + first_pod.id + ".json";
  auto stale = readFile(record);
  REQUIRE(stale.ok());
  REQUIRE(a.runtime.stopPodSandbox(first_pod) == "");
  auto undone = KubeletClient::unprepare(a.endpoint, "v1", {first});
  REQUIRE(undone.ok());
  REQUIRE(undone->at(first.uid) == "");
  // The VF goes to the next pod's claim; the first pod's record comes back (a restored backup).
  a.prepare("second", second_uid, R"("netAttachDefName":"vf-net")");
  auto second_pod = a.pod("second", second_uid, net);
  REQUIRE(a.runtime.runPodSandbox(second_pod) == "");
  REQUIRE(writeFileAtomic(record, *stale, 0600).isOk());
  CHECK(a.runtime.stopPodSandbox(first_pod) == "");
  CHECK_THAT(net.inPod("vfnet0"), Catch::Contains("10.9.0.14/24"));  // no DEL took it
  CHECK_THAT(a.agent->logs(),
             Catch::Contains("is attached to pod " + a.env.ns() +
                             "/pod-second now; its stale attachment is forgotten"));
  CHECK_FALSE(std::filesystem::exists(record));
  REQUIRE(a.runtime.stopPodSandbox(second_pod) == "");
  CHECK(net.vfOnHost());
}

TEST_CASE("a CNI plugin slower than the runtime's budget fails its sandbox in time, no other",
          "[attach][integration]") {
  if (!root()) return;
  AttachEnv a;  // --nri-attach-timeout 1.5 s; the runtime drops a plugin silent for 10 s
  HostNetwork net;
  std::filesystem::create_directories(a.kubelet.path() + "/cni");
  REQUIRE(writeFileAtomic(a.kubelet.path() + "/cni/slow",
                          "#!/bin/sh\ncat >/dev/null\n[ \"$CNI_COMMAND\" = ADD ] && exec sleep 30\n"
                          "echo '{\"cniVersion\":\"1.0.0\"}'\n",
                          0755)
              .isOk());
  a.createNad("slow-net", R"({"cniVersion":"1.0.0","name":"slow-net","type":"slow"})");
  const std::string slow_uid = "6f1c5b0e-9d0a-4d49-9a53-000000000401";
  auto slow = a.prepare("slow", slow_uid, R"("netAttachDefName":"slow-net")");
  std::string error = a.runtime.runPodSandbox(a.pod("slow", slow_uid, net));
  CHECK_THAT(error, Catch::Contains("CNI plugin slow: ") && Catch::Contains("did not finish") &&
                        Catch::Contains("within 1500 ms, --nri-attach-timeout"));
  CHECK(net.vfOnHost());
  auto undone = KubeletClient::unprepare(a.endpoint, "v1", {slow});
  REQUIRE(undone.ok());
  testing::releaseClaim(a.env.admin(), a.env.ns(), "slow");

  // The runtime kept the plugin: the next pod is attached without a new registration.
  a.createNad("vf-net", hostDevice("10.9.0.8/24"));
  const std::string uid = "6f1c5b0e-9d0a-4d49-9a53-000000000402";
  a.prepare("next", uid, R"("netAttachDefName":"vf-net")");
  auto next = a.pod("next", uid, net);
  INFO(a.runtime.logs());
  REQUIRE(a.runtime.runPodSandbox(next) == "");
  CHECK_THAT(net.inPod("vfnet0"), Catch::Contains("10.9.0.8/24"));
  CHECK(a.runtime.waitPlugins(2, std::chrono::seconds(1)) != "");  // still the first connection
  REQUIRE(a.runtime.stopPodSandbox(next) == "");
}
