// The CNI executor with Debian's real CNI plugins (containernetworking-plugins, /usr/lib/cni)
// on this machine's kernel: an ifb interface stands in for a VF's netdev, moved into a network
// namespace the test creates and back.
#include <filesystem>

#include <catch2/catch.hpp>
#include <unistd.h>

#include "base/json.h"
#include "cni/exec.h"
#include "support/pod_network.h"

using namespace sriovdra;

namespace {

const std::vector<std::string> kBinDirs = {"/usr/lib/cni"};

// The pod's namespace and a host interface, with the CNI arguments for them.
struct Pod : testing::PodNetwork {
  Pod()
      : PodNetwork("sdra-cni-" + std::to_string(::getpid()),
                   "sdracni" + std::to_string(::getpid() % 100000)) {}
  cni::RuntimeArgs args(const std::string& ifname = "net1") const {
    return {"sandbox-1", path(), ifname, "apps", "web-0", "uid-1", kBinDirs};
  }
};

bool root() { return testing::rootOr("the CNI checks"); }

}  // namespace

TEST_CASE("host-device with static IPAM moves the interface into the pod and back", "[host][cni]") {
  if (!root()) return;
  Pod pod;
  auto config = cni::parseNetworkConfig(
      R"({"cniVersion":"1.0.0","name":"vf-net","type":"host-device","device":")" + pod.device() +
      R"(","ipam":{"type":"static","addresses":[{"address":"10.9.0.5/24"}]}})");
  REQUIRE(config.ok());
  cni::Executor cni;
  auto result = cni.add(*config, pod.args());
  INFO((result.ok() ? *result : result.status().message()));
  REQUIRE(result.ok());
  CHECK_THAT(pod.inPod("net1"), Catch::Contains("10.9.0.5/24"));
  CHECK_FALSE(pod.deviceOnHost());
  auto data = cni::networkDataOf(*result, "net1");
  REQUIRE(data.ok());
  CHECK(data->interface_name == "net1");
  CHECK(data->ips == std::vector<std::string>{"10.9.0.5/24"});
  CHECK(data->hardware_address.size() == 17);

  REQUIRE(cni.del(*config, pod.args(), *result).isOk());
  CHECK(pod.inPod("net1").empty());
  CHECK(pod.deviceOnHost());
}

TEST_CASE("a list runs in order with prevResult; a failing plugin undoes the ones before",
          "[host][cni]") {
  if (!root()) return;
  Pod pod;
  cni::Executor cni;
  std::string host_device =
      R"({"type":"host-device","device":")" + pod.device() +
      R"(","ipam":{"type":"static","addresses":[{"address":"10.9.0.6/24"}]}})";
  auto chain = cni::parseNetworkConfig(R"({"cniVersion":"1.0.0","name":"chain","plugins":[)" +
                                       host_device + R"(,{"type":"tuning","mtu":1400}]})");
  REQUIRE(chain.ok());
  auto added = cni.add(*chain, pod.args());
  INFO((added.ok() ? *added : added.status().message()));
  REQUIRE(added.ok());
  CHECK_THAT(pod.inPod("net1"), Catch::Contains("10.9.0.6/24"));
  auto mtu = testing::ip({"netns", "exec", pod.netns(), "cat", "/sys/class/net/net1/mtu"});
  CHECK(mtu.out == "1400\n");
  REQUIRE(cni.del(*chain, pod.args(), *added).isOk());
  CHECK(pod.deviceOnHost());

  // The second plugin fails (a sysctl that does not exist): the first is deleted again.
  auto broken = cni::parseNetworkConfig(
      R"({"cniVersion":"1.0.0","name":"chain","plugins":[)" + host_device +
      R"(,{"type":"tuning","sysctl":{"net.ipv4.conf.IFNAME.no_such_knob":"1"}}]})");
  REQUIRE(broken.ok());
  auto failed = cni.add(*broken, pod.args());
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.status().message(), Catch::StartsWith("CNI plugin tuning: "));
  CHECK(pod.inPod("net1").empty());
  CHECK(pod.deviceOnHost());
}

TEST_CASE("a plugin that is not installed or fails says so, and nothing is attached",
          "[host][cni]") {
  if (!root()) return;
  Pod pod;
  cni::Executor cni;
  auto missing = cni::parseNetworkConfig(R"({"cniVersion":"1.0.0","name":"n","type":"sriov"})");
  REQUIRE(missing.ok());
  auto none = cni.add(*missing, pod.args());
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == Code::kNotFound);
  CHECK_THAT(none.status().message(),
             Catch::Contains("CNI plugin sriov is not installed (looked in /usr/lib/cni"));
  auto bad_ip = cni::parseNetworkConfig(
      R"({"cniVersion":"1.0.0","name":"n","type":"host-device","device":")" + pod.device() +
      R"(","ipam":{"type":"static","addresses":[{"address":"not-an-ip"}]}})");
  REQUIRE(bad_ip.ok());
  auto failed = cni.add(*bad_ip, pod.args());
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.status().message(), Catch::StartsWith("CNI plugin host-device: "));
  CHECK(pod.deviceOnHost());
}

TEST_CASE("names libcni refuses never reach a plugin", "[host][cni]") {
  if (!root()) return;
  Pod pod;
  cni::Executor cni;
  auto config = [&](const std::string& name) {
    return *cni::parseNetworkConfig(R"({"cniVersion":"1.0.0","name":")" + name +
                                    R"(","type":"host-device","device":")" + pod.device() +
                                    R"(","ipam":{"type":"host-local","ranges":[[{"subnet":)"
                                    R"("10.9.3.0/24"}]],"dataDir":"/tmp/sdra-cni-names"}})");
  };
  struct Row {
    std::string network, container, ifname, error;
  };
  std::vector<Row> rows = {
      {"../../..", "sandbox-1", "net1", "CNI: invalid characters found in network name: ../../.."},
      {"", "sandbox-1", "net1", "CNI: missing network name"},
      {"n", "../sandbox", "net1", "CNI: invalid characters in containerID: ../sandbox"},
      {"n", "sandbox-1", "a/b", "CNI: interface name contains / or : or whitespace characters"},
      {"n", "sandbox-1", "..", "CNI: interface name is . or .."},
      {"n", "sandbox\r\n1", "net1", R"(CNI: invalid characters in containerID: sandbox\r\n1)"},
  };
  for (const auto& row : rows) {
    INFO(row.error);
    auto args = pod.args(row.ifname);
    args.container_id = row.container;
    auto added = cni.add(config(row.network), args);
    REQUIRE_FALSE(added.ok());
    CHECK(added.status().code() == Code::kInvalidArgument);
    CHECK(added.status().message() == row.error);
    CHECK(cni.del(config(row.network), args, "").message() == row.error);
    CHECK(pod.deviceOnHost());  // no plugin ran
  }
  CHECK_FALSE(std::filesystem::exists("/tmp/sdra-cni-names"));
}
