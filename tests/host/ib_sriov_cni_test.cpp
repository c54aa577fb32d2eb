// Our `ib-sriov` CNI plugin's commands (node/cni/ib_sriov_plugin.h) on the reference server's
// ConnectX-6 VFs of the simulated kernel with real netdevs (cni_bench.h): GUIDs, link state and
// rdmaIsolation (the RDMA device moved by the simulated kernel, which no VM here can give: QEMU
// emulates no InfiniBand).
#include <cerrno>
#include <filesystem>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "base/files.h"
#include "host/rdma.h"
#include "node/cni/vf_files.h"
#include "sriovcni/ib_netconf.h"
#include "support/cni_bench.h"

using namespace sriovdra;
using sriovdra::testing::args;
using sriovdra::testing::Bench;
using sriovdra::testing::root;

namespace {

namespace fs = std::filesystem;

// An ib-sriov network for the VF at `vf`, with `extra` keys (each starting with a comma).
std::string ibConfig(const std::string& vf, const std::string& extra = "") {
  return R"({"cniVersion":"1.0.0","name":"ib-net","type":"ib-sriov","deviceID":")" + vf + "\"" +
         extra + "}";
}

// The extra key of host-local addresses from 10.56.0.0/24, its leases under `dir`.
std::string hostLocal(const std::string& dir) {
  return R"(,"ipam":{"type":"host-local","dataDir":")" + dir +
         R"(","ranges":[[{"subnet":"10.56.0.0/24"}]]})";
}

}  // namespace

TEST_CASE("ib-sriov sets a VF's GUID and link state through its PF, and puts them back",
          "[host][cni]") {
  if (!root()) return;
  // A ConnectX-6 InfiniBand PF of the reference server: its VFs' GUIDs are 0 until set.
  Bench b("a100-reference", "0000:0e:00.0", "ibp14s0");
  std::string pod = b.pod("ib");
  const std::string vf = b.vfAddress(1);
  auto config = [&](const std::string& extra) { return ibConfig(vf, extra); };
  b.inside([&] {
    cni_plugin::IbSriovPlugin plugin = b.ibPlugin();
    // Without a GUID the VF's own must be valid: the agent assigns them, none here yet.
    auto no_guid = plugin.add(args(pod, config(R"(,"link_state":"enable")")));
    CHECK_THAT(no_guid.status().message(),
               Catch::Contains("VF " + b.vfNetdev(1) + " GUID is not valid"));
    CHECK(b.vf(1).link_state == 0);  // put back
    auto added = plugin.add(args(
        pod,
        config(
            R"(,"link_state":"enable","runtimeConfig":{"infinibandGUID":"02:00:00:00:00:00:00:05"})")));
    INFO((added.ok() ? *added : added.status().message()));
    REQUIRE(added.ok());
    CHECK(b.vf(1).port_guid == 0x0200000000000005u);
    CHECK(b.vf(1).node_guid == 0x0200000000000005u);
    CHECK(b.vf(1).link_state == 1);
    // The rebind made the VF's driver read it: its IPoIB address ends with it.
    CHECK_THAT(b.kernel()
                   .read("sys/bus/pci/devices/" + vf + "/net/" + b.vfNetdev(1) + "/address")
                   .valueOr(""),
               Catch::EndsWith("02:00:00:00:00:00:00:05"));
    CHECK(Bench::inPod(pod, "net1"));
    CHECK(plugin.del(args(pod, config(""))).isOk());
    CHECK(b.vf(1).link_state == 0);
    CHECK(b.vf(1).port_guid == 0xffffffffffffffffu);  // none before: all-F, as upstream
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK(host::Netdevs().link(b.vfNetdev(1)).ok());
    CHECK(plugin.del(args(pod, config(""))).isOk());  // again: nothing to do
  });
}

TEST_CASE("ib-sriov undoes a failed ADD, and a failed DEL keeps its cache until a retry finishes",
          "[host][cni]") {
  if (!root()) return;
  Bench b("a100-reference", "0000:0e:00.0", "ibp14s0");
  std::string pod = b.pod("ib");
  const std::string vf = b.vfAddress(1);
  const std::string ipam_dir = b.stateDir() + "/host-local";
  const std::string config = ibConfig(
      vf, R"(,"link_state":"enable","runtimeConfig":{"infinibandGUID":"02:00:00:00:00:00:00:07"})" +
              hostLocal(ipam_dir));
  const std::string cache = b.stateDir() + "/ib/pod-a-net1";
  auto withPath = [&](const std::string& netns, std::string path) {
    auto a = args(netns, config);
    a.path = std::move(path);
    return a;
  };
  b.inside([&] {
    cni_plugin::IbSriovPlugin plugin = b.ibPlugin();
    // IPAM cannot run: everything ADD did before is put back, the cache it wrote first is gone.
    auto failed = plugin.add(withPath(pod, "/nonexistent-cni-bin"));
    REQUIRE_FALSE(failed.ok());
    CHECK_THAT(failed.status().message(),
               Catch::StartsWith("failed to set up IPAM plugin type \"host-local\"") &&
                   Catch::Contains("failed to find plugin \"host-local\" in path "
                                   "[/nonexistent-cni-bin]"));
    CHECK(b.vf(1).link_state == 0);
    CHECK(b.vf(1).port_guid == 0xffffffffffffffffu);
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK(host::Netdevs().link(b.vfNetdev(1)).ok());
    CHECK_FALSE(fs::exists(cache));

    auto added = plugin.add(withPath(pod, "/usr/lib/cni"));
    INFO((added.ok() ? *added : added.status().message()));
    REQUIRE(added.ok());
    CHECK_THAT(*added, Catch::Contains("10.56.0."));
    CHECK(b.vf(1).link_state == 1);

    // IPAM's DEL fails: so does ours, and the cache stays for the runtime's retry.
    auto del = plugin.del(withPath(pod, "/nonexistent-cni-bin"));
    CHECK_THAT(del.message(), Catch::Contains("failed to find plugin \"host-local\""));
    CHECK(fs::exists(cache));
    CHECK(b.vf(1).link_state == 1);

    // The retry, with the pod's namespace gone as the runtime says it (CNI_NETNS empty), still
    // releases the address and resets the VF.
    CHECK(plugin.del(withPath("", "/usr/lib/cni")).isOk());
    CHECK_FALSE(fs::exists(cache));
    CHECK(b.vf(1).link_state == 0);
    CHECK(b.vf(1).port_guid == 0xffffffffffffffffu);
    int leases = 0;
    for (const auto& e : fs::directory_iterator(ipam_dir + "/ib-net")) {
      if (e.path().filename().string().starts_with("10.56.0.")) ++leases;
    }
    CHECK(leases == 0);
  });
}

TEST_CASE("ib-sriov with rdmaIsolation moves the VF's RDMA device into the pod and back",
          "[host][cni]") {
  if (!root()) return;
  Bench b("a100-reference", "0000:0e:00.0", "ibp14s0");
  std::string pod = b.pod("rdma");
  const std::string vf = b.vfAddress(1);
  const std::string ipam_dir = b.stateDir() + "/host-local";
  // The VF's own GUID, as the agent assigns it (set through the PF, read by its driver when it
  // binds again): ADD and DEL then rebind nothing, so the RDMA device they move stays the same.
  REQUIRE(b.kernel().setVfGuids("ibp14s0", 1, 0x0200000000000009, 0x0200000000000009).isOk());
  REQUIRE(b.kernel().write("sys/bus/pci/drivers/mlx5_core/unbind", vf).isOk());
  REQUIRE(b.kernel().write("sys/bus/pci/drivers/mlx5_core/bind", vf).isOk());
  const auto devices = host::rdmaDevicesOf(b.kernel(), vf);
  REQUIRE(devices.size() == 1);
  const std::string record = "simulated/rdma/netns/" + devices[0];
  const std::string config = ibConfig(vf, R"(,"rdmaIsolation":true)" + hostLocal(ipam_dir));
  const std::string cache = b.stateDir() + "/ib/pod-a-net1";
  auto withPath = [&](std::string path) {
    auto a = args(pod, config);
    a.path = std::move(path);
    return a;
  };
  // Where the simulated kernel keeps a moved RDMA device (simulated_kernel.h): the nsfs device
  // and inode of its namespace; none while it is in the initial one.
  auto podIdentity = [&] {
    struct stat st {};
    REQUIRE(::stat(pod.c_str(), &st) == 0);
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  };
  b.inside([&] {
    cni_plugin::IbSriovPlugin plugin = b.ibPlugin();
    // Linux starts in shared mode: refused in upstream's words, before the VF changes.
    auto shared = plugin.add(withPath("/usr/lib/cni"));
    CHECK_THAT(shared.status().message(),
               Catch::Equals("RDMA subsystem namespace awareness mode is set to shared, expecting "
                             "it to be set to exclusive, invalid system configurations"));
    CHECK_FALSE(fs::exists(cache));

    REQUIRE(b.kernel().setRdmaNetnsMode("exclusive").isOk());
    auto moved = [&] { return b.kernel().list("simulated/rdma/netns").valueOr({}); };
    // IPAM could not run: the device came back with the netdev, the cache went.
    auto failed = plugin.add(withPath("/nonexistent-cni-bin"));
    REQUIRE_FALSE(failed.ok());
    CHECK(moved().empty());
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK_FALSE(fs::exists(cache));

    auto added = plugin.add(withPath("/usr/lib/cni"));
    INFO((added.ok() ? *added : added.status().message()));
    REQUIRE(added.ok());
    CHECK(host::rdmaDevicesOf(b.kernel(), vf) == devices);  // no rebind made another
    CHECK(moved() == std::vector<std::string>{devices[0]});
    CHECK(b.kernel().read(record).valueOr("") == podIdentity());
    CHECK(Bench::inPod(pod, "net1"));
    auto cached = readFile(cache);
    REQUIRE(cached.ok());
    CHECK_THAT(*cached, Catch::Contains("\"rdmaIsolation\":true") &&
                            Catch::Contains("\"containerRdmaDevName\":\"" + devices[0] + "\"") &&
                            Catch::Contains("\"deviceID\":\"" + vf + "\""));
    // Seen from the host's namespace the device is gone: moving it from here finds nothing.
    auto host_ns = host::NetNamespace::current();
    REQUIRE(host_ns.ok());
    CHECK(b.kernel().moveDevice(devices[0], *host_ns).sysErrno() == ENODEV);

    CHECK(plugin.del(withPath("/usr/lib/cni")).isOk());
    CHECK_FALSE(b.kernel().exists(record));
    CHECK_FALSE(Bench::inPod(pod, "net1"));
    CHECK_FALSE(fs::exists(cache));
    CHECK(plugin.del(withPath("/usr/lib/cni")).isOk());  // again: nothing to do
  });
}

TEST_CASE("ib-sriov's DEL after an ADD killed past the RDMA move brings the device back",
          "[host][cni]") {
  if (!root()) return;
  Bench b("a100-reference", "0000:0e:00.0", "ibp14s0");
  std::string pod = b.pod("rdma");
  const std::string vf = b.vfAddress(1);
  const std::string config = ibConfig(vf, R"(,"rdmaIsolation":true)");
  b.inside([&] {
    REQUIRE(b.kernel().setRdmaNetnsMode("exclusive").isOk());
    const auto devices = host::rdmaDevicesOf(b.kernel(), vf);
    REQUIRE(devices.size() == 1);
    // What a killed ADD leaves: its cache with the move it was about to make, and the device
    // in the pod (moved there as the plugin does), the netdev still on the host.
    sriovcni::IbNetConf conf;
    conf.plugin.cni_version = "1.0.0";
    conf.plugin.name = "ib-net";
    conf.plugin.type = "ib-sriov";
    conf.device_id = vf;
    conf.rdma_isolation = true;
    conf.master = "ibp14s0";
    conf.vf_id = 1;
    conf.host_if_name = b.vfNetdev(1);
    conf.rdma_net_state = {.device_id = vf,
                           .sandbox_rdma_dev_name = devices[0],
                           .container_rdma_dev_name = devices[0]};
    REQUIRE(cni_plugin::VfFiles(b.stateDir() + "/ib")
                .saveCache("pod-a", "net1", sriovcni::encodeIbCache(conf))
                .isOk());
    auto pod_ns = host::NetNamespace::open(pod);
    REQUIRE(pod_ns.ok());
    REQUIRE(b.kernel().moveDevice(devices[0], *pod_ns).isOk());

    cni_plugin::IbSriovPlugin plugin = b.ibPlugin();
    CHECK(plugin.del(args(pod, config)).isOk());
    CHECK_FALSE(b.kernel().exists("simulated/rdma/netns/" + devices[0]));
    CHECK(host::Netdevs().link(b.vfNetdev(1)).ok());
  });
}
