// The kubelet plugin's pure parts: VfConfig parsing and merging, CDI specs (checked against the
// upstream CDI schema), and the checkpoint's round trip and tamper detection.
#include <catch2/catch.hpp>

#include "api/names.h"
#include "dra/cdi.h"
#include "dra/checkpoint.h"
#include "dra/vf_config.h"
#include "support/cdi_schema.h"

using namespace sriovdra;

namespace {

const std::string kHead =
    R"("apiVersion":"sriovnetwork.k8snetworkplumbingwg.io/v1alpha1","kind":"VfConfig")";

api::DeviceAllocationConfiguration config(std::string source, std::vector<std::string> requests,
                                          const std::string& fields,
                                          std::string driver = std::string(api::kDriverName)) {
  return {std::move(source),
          std::move(requests),
          {std::move(driver), "{" + kHead + (fields.empty() ? "" : "," + fields) + "}"}};
}

api::AllocationResult allocation(std::vector<api::DeviceAllocationConfiguration> configs) {
  api::AllocationResult a;
  a.results = {{"gpu", "gpu.nvidia.com", "n1", "gpu-3"},
               {"vf", std::string(api::kDriverName), "n1", "0000-11-00-1"},
               {"pair/vf", std::string(api::kDriverName), "n1", "0000-0e-00-1"}};
  a.config = std::move(configs);
  return a;
}

}  // namespace

TEST_CASE("VfConfig is read strictly and says which field is wrong", "[dra][plugin][unit]") {
  struct Row {
    std::string fields;
    std::string error;  // "" = valid
  };
  std::vector<Row> rows = {
      {R"("driver":"vfio-pci","ifName":"net1","addVhostMount":true)", ""},
      {R"("driver":"default","netAttachDefName":"a","netAttachDefNamespace":"b")", ""},
      {R"("driver":"")", ""},
      {R"("ifname":"net1")", "ifname: unknown field"},
      {R"("ifName":1)", "ifName: expected a string"},
      {R"("addVhostMount":"yes")", "addVhostMount: expected true or false"},
      {R"("driver":"../../../../etc")", "driver: \"../../../../etc\" is not a kernel driver name"},
      {R"("ifName":"a-very-long-name0")", "ifName: \"a-very-long-name0\" is not a Linux interface"},
      {R"("ifName":"eth/0")", "ifName: \"eth/0\" is not a Linux interface name"},
      {R"("netAttachDefName":"net.a-1","netAttachDefNamespace":"")", ""},
      // A name that would end the agent's request line and start another one (issue 52).
      {R"("netAttachDefName":"x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /apis")",
       R"(netAttachDefName: "x HTTP/1.1\r\nHost: a\r\n\r\nDELETE /apis" is not a )"
       "NetworkAttachmentDefinition name"},
      {R"("netAttachDefName":"../secrets")", "netAttachDefName: \"../secrets\" is not a"},
      {R"("netAttachDefName":"Net")", "netAttachDefName: \"Net\" is not a"},
      {R"("netAttachDefNamespace":"a.b")", "netAttachDefNamespace: \"a.b\" is not a namespace"},
      {R"("netAttachDefNamespace":"x%2Fapis")", "netAttachDefNamespace: \"x%2Fapis\" is not a"},
      // A terminal escape sequence is shown escaped, never sent to the terminal.
      {R"("driver":"\u001b[31mred")", R"(driver: "\x1b[31mred" is not a kernel driver name)"},
  };
  for (const auto& row : rows) {
    INFO(row.fields);
    auto c = dra::parseVfConfig("{" + kHead + "," + row.fields + "}");
    if (row.error.empty()) {
      CHECK(c.ok());
    } else {
      REQUIRE_FALSE(c.ok());
      CHECK_THAT(c.status().message(), Catch::StartsWith(row.error));
    }
  }
  CHECK_THAT(dra::parseVfConfig(R"({"kind":"VfConfig"})").status().message(),
             Catch::Contains("apiVersion: missing"));
  CHECK_THAT(dra::parseVfConfig(R"({"apiVersion":"v1","kind":"VfConfig"})").status().message(),
             Catch::Contains("is not sriovnetwork.k8snetworkplumbingwg.io/v1alpha1"));
  CHECK_THAT(dra::parseVfConfig("[1]").status().message(), Catch::Contains("not a JSON object"));
}

TEST_CASE("class configs apply first, claim configs win field by field, nothing is dropped",
          "[dra][plugin][unit]") {
  auto a = allocation({
      config("FromClaim", {"vf"}, R"("ifName":"net1","netAttachDefName":"claim-nad")"),
      config("FromClass", {},
             R"("addVhostMount":true,"ifName":"cls0",)"
             R"("netAttachDefNamespace":"infra")"),
      config("FromClaim", {"vf"}, R"("driver":"vfio-pci")"),
      config("FromClaim", {"pair"}, R"("driver":"default")"),
      config("FromClaim", {}, R"("whatever":1)", "gpu.nvidia.com"),
  });
  auto by_request = dra::vfConfigsByRequest(a, api::kDriverName);
  REQUIRE(by_request.ok());
  REQUIRE(by_request->size() == 2);  // the GPU result is not ours
  const dra::VfConfig& vf = by_request->at("vf");
  CHECK(vf.driver == "vfio-pci");
  CHECK(vf.if_name == "net1");
  CHECK(vf.net_attach_def_name == "claim-nad");
  CHECK(vf.net_attach_def_namespace == "infra");  // the reference driver drops this
  CHECK(vf.add_vhost_mount == true);              // and this
  CHECK(vf.targetDriver() == "vfio-pci");
  const dra::VfConfig& pair =
      by_request->at("pair/vf");  // a config for "pair" covers its subrequests
  CHECK(pair.driver == "default");
  CHECK(pair.targetDriver() == "");
  CHECK(pair.if_name == "cls0");

  auto bad =
      allocation({config("FromClass", {}, ""), config("FromClaim", {"vf"}, R"("mtu":9000)")});
  auto err = dra::vfConfigsByRequest(bad, api::kDriverName);
  REQUIRE_FALSE(err.ok());
  CHECK_THAT(err.status().message(),
             Catch::StartsWith("config[1] (FromClaim): mtu: unknown field"));
  CHECK(dra::VfConfig{}.targetDriver() == std::nullopt);
}

TEST_CASE("a driver set by the DeviceClass cannot be changed by the claim", "[dra][plugin][unit]") {
  auto same = allocation({config("FromClaim", {"vf"}, R"("driver":"vfio-pci","ifName":"n1")"),
                          config("FromClass", {}, R"("driver":"vfio-pci")")});
  auto ok = dra::vfConfigsByRequest(same, api::kDriverName);
  REQUIRE(ok.ok());
  CHECK(ok->at("vf").targetDriver() == "vfio-pci");
  CHECK(ok->at("pair/vf").targetDriver() == "vfio-pci");
  auto other = allocation({config("FromClaim", {"pair"}, R"("driver":"default")"),
                           config("FromClass", {}, R"("driver":"vfio-pci")")});
  auto err = dra::vfConfigsByRequest(other, api::kDriverName);
  REQUIRE_FALSE(err.ok());
  CHECK(err.status().message() ==
        "config[0] (FromClaim): driver: the DeviceClass of request pair/vf sets \"vfio-pci\"; a "
        "claim cannot change it");
}

TEST_CASE("CDI specs carry the reference driver's edits and validate against the CDI schema",
          "[dra][plugin][unit]") {
  host::VfAccess rdma{.driver = "mlx5_core",
                      .iommu_group = "41",
                      .netdev = "ibp17s0v0",
                      .rdma_device = "mlx5_9",
                      .uverbs = "uverbs9",
                      .umad = "umad9",
                      .issm = "issm9"};
  dra::VfConfig cfg;
  cfg.net_attach_def_name = "cx6-vf";
  auto dev = dra::vfCdiDevice("uid1-0000-11-00-1",
                              {"0000-11-00-1", "0000:11:00.1", cfg, rdma, /*rdma_capable=*/true});
  REQUIRE(dev.ok());
  CHECK(dev->env ==
        std::vector<std::string>{"SRIOVNETWORK_VF_DEVICE_0000_11_00_1=0000:11:00.1",
                                 "SRIOVNETWORK_NET_ATTACH_DEF_NAME=cx6-vf",
                                 "SRIOVNETWORK_0000_11_00_1_RDMA_UVERB=/dev/infiniband/uverbs9",
                                 "SRIOVNETWORK_0000_11_00_1_RDMA_UMAD=/dev/infiniband/umad9",
                                 "SRIOVNETWORK_0000_11_00_1_RDMA_ISSM=/dev/infiniband/issm9",
                                 "SRIOVNETWORK_0000_11_00_1_RDMA_CM=/dev/infiniband/rdma_cm",
                                 "SRIOVNETWORK_0000_11_00_1_RDMA_DEVICE=mlx5_9"});
  CHECK(dev->device_nodes.size() == 4);

  host::VfAccess vfio{.driver = "vfio-pci", .iommu_group = "41", .noiommu = true};
  dra::VfConfig vhost;
  vhost.add_vhost_mount = true;
  auto v =
      dra::vfCdiDevice("uid1-0000-0e-00-1", {"0000-0e-00-1", "0000:0e:00.1", vhost, vfio, true});
  REQUIRE(v.ok());
  CHECK(v->device_nodes == std::vector<dra::CdiDeviceNode>{{"/dev/vfio/41", "/dev/vfio/noiommu-41"},
                                                           {"/dev/vfio/vfio", ""},
                                                           {"/dev/vhost-net", ""},
                                                           {"/dev/net/tun", ""}});
  CHECK(v->env.back() == "SRIOVNETWORK_0000_0e_00_1_VFIO_DEVICE=/dev/vfio/41");

  auto no_rdma = dra::vfCdiDevice(
      "x", {"0000-11-00-1", "0000:11:00.1", {}, host::VfAccess{.driver = "mlx5_core"}, true});
  REQUIRE_FALSE(no_rdma.ok());
  CHECK_THAT(no_rdma.status().message(), Catch::Contains("no RDMA device"));

  // What the device plugin's info providers said of such VFs, read from their device nodes.
  auto rdma_info = dra::devicePluginInfo(*dev, "mlx5_9");
  CHECK(rdma_info == dra::PluginInfo{{"rdma",
                                      {{"uverbs", "/dev/infiniband/uverbs9"},
                                       {"umad", "/dev/infiniband/umad9"},
                                       {"issm", "/dev/infiniband/issm9"},
                                       {"rdma_cm", "/dev/infiniband/rdma_cm"},
                                       {"rdma_dev", "mlx5_9"}}}});
  auto vfio_info = dra::devicePluginInfo(*v, "");
  CHECK(
      vfio_info ==
      dra::PluginInfo{{"vfio", {{"mount", "/dev/vfio/vfio"}, {"dev-mount", "/dev/vfio/41"}}},
                      {"vhost", {{"net-mount", "/dev/vhost-net"}, {"tun-mount", "/dev/net/tun"}}}});
  CHECK(dra::devicePluginInfo(dra::CdiDevice{}, "mlx5_9").empty());

  auto pod = dra::podCdiDevice("pod-uid", {{"0000:0e:00.1", "openshift.io/cx6_vfs", vfio_info},
                                           {"0000:0e:00.2", "openshift.io/cx6_vfs"},
                                           {"0000:11:00.1", "", rdma_info}});
  // The reference driver's variable, and the SR-IOV network device plugin's per resource, its
  // keys sorted as Go's encoding/json sorts a map's.
  CHECK(pod.env ==
        std::vector<std::string>{
            "SRIOVNETWORK_PCI_ADDRESSES=0000:0e:00.1,0000:0e:00.2,0000:11:00.1",
            "PCIDEVICE_OPENSHIFT_IO_CX6_VFS=0000:0e:00.1,0000:0e:00.2",
            R"(PCIDEVICE_OPENSHIFT_IO_CX6_VFS_INFO={"0000:0e:00.1":{"generic":{"deviceID":)"
            R"("0000:0e:00.1"},"vfio":{"dev-mount":"/dev/vfio/41","mount":"/dev/vfio/vfio"},)"
            R"("vhost":{"net-mount":"/dev/vhost-net","tun-mount":"/dev/net/tun"}},)"
            R"("0000:0e:00.2":{"generic":{"deviceID":"0000:0e:00.2"}}})"});
  auto rdma_pod =
      dra::podCdiDevice("pod-uid", {{"0000:11:00.1", "openshift.io/cx6_vfs", rdma_info}});
  CHECK(rdma_pod.env.back() ==
        R"(PCIDEVICE_OPENSHIFT_IO_CX6_VFS_INFO={"0000:11:00.1":{"generic":{"deviceID":)"
        R"("0000:11:00.1"},"rdma":{"issm":"/dev/infiniband/issm9","rdma_cm":)"
        R"("/dev/infiniband/rdma_cm","rdma_dev":"mlx5_9","umad":"/dev/infiniband/umad9",)"
        R"("uverbs":"/dev/infiniband/uverbs9"}}})");

  // Names that are no variable name, or another resource's, get none.
  auto odd = dra::podCdiDevice("pod-uid", {{"0000:0e:00.1", "p/x"},
                                           {"0000:0e:00.2", "p/x_info"},
                                           {"0000:0e:00.3", "p/a=b"},
                                           {"0000:0e:00.4", "no-prefix"},
                                           {"0000:0e:00.5", "p/x\nY=1"}});
  std::vector<std::string> names;
  for (const auto& e : odd.env) names.push_back(e.substr(0, e.find('=')));
  CHECK(names == std::vector<std::string>{"SRIOVNETWORK_PCI_ADDRESSES", "PCIDEVICE_P_X",
                                          "PCIDEVICE_P_X_INFO"});

  auto spec = dra::cdiSpec({*dev, *v, pod});
  CHECK(testing::cdiSchemaErrors(spec) == "");
  CHECK(std::string(spec["kind"].GetString()) == "sriovnetwork.k8snetworkplumbingwg.io/vf");
  CHECK(dra::cdiQualifiedName("uid1-0000-11-00-1") ==
        "sriovnetwork.k8snetworkplumbingwg.io/vf=uid1-0000-11-00-1");
  // The validator is not a rubber stamp.
  json::Document broken;
  broken.CopyFrom(spec, broken.GetAllocator());
  broken["devices"][0].RemoveMember("name");
  CHECK_THAT(testing::cdiSchemaErrors(broken), Catch::Contains("required"));
}

TEST_CASE("the checkpoint round-trips and refuses a file that was changed", "[dra][plugin][unit]") {
  dra::Checkpoint cp;
  dra::PreparedClaim c{.uid = "uid-1",
                       .namespace_ = "team-a",
                       .name = "train-0",
                       .pod_uid = "pod-1",
                       .pod_name = "trainer",
                       .state = dra::PreparedClaim::State::kPrepared};
  dra::PreparedDevice d{
      .request_names = {"vf"},
      .pool = "n1",
      .device = "0000-11-00-1",
      .pci_address = "0000:11:00.1",
      .cdi_device_ids = {"sriovnetwork.k8snetworkplumbingwg.io/vf=uid-1-0000-11-00-1"},
      .original_driver = "mlx5_core",
      .plugin_info = {{"vfio", {{"mount", "/dev/vfio/vfio"}, {"dev-mount", "/dev/vfio/41"}}}}};
  d.config.driver = "vfio-pci";
  c.devices.push_back(d);
  cp.claims["uid-1"] = c;
  dra::PreparedClaim preparing{
      .uid = "uid-2", .namespace_ = "team-b", .name = "x", .pod_uid = "pod-1"};
  preparing.extended_resource = true;  // made by the scheduler: the pod names the network
  preparing.devices.push_back(
      {.device = "0000-0e-00-1", .pci_address = "0000:0e:00.1", .resource_name = "cx6_vfs"});
  cp.claims["uid-2"] = preparing;

  std::string text = cp.encode();
  auto back = dra::Checkpoint::decode(text);
  REQUIRE(back.ok());
  CHECK(*back == cp);
  CHECK(back->preparedVfs() ==
        host::PreparedVfs{{"0000:0e:00.1", {"team-b/x (prepared for its pod)"}},
                          {"0000:11:00.1", {"team-a/train-0 (prepared for its pod)"}}});
  CHECK(back->podVfs("pod-1") ==
        std::vector<dra::PodVf>{{"0000:0e:00.1", "cx6_vfs"}, {"0000:11:00.1", "", d.plugin_info}});

  std::string edited = text;
  edited.replace(edited.find("mlx5_core"), 9, "mlx4_core");
  auto refused = dra::Checkpoint::decode(edited);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("checksum mismatch"));
  CHECK_FALSE(dra::Checkpoint::decode(text.substr(0, text.size() / 2)).ok());
  CHECK(dra::Checkpoint::decode(dra::Checkpoint{}.encode())->claims.empty());
}
