// KEP-5304 device metadata as the kubelet-plugin helper of Kubernetes 1.37 writes it
// (k8s.io/dynamic-resource-allocation/kubeletplugin/metadata.go, api/metadata).
#include "dra/device_metadata.h"

#include <catch2/catch.hpp>

#include "base/json.h"

using namespace sriovdra;

namespace {

const std::string kDriver = "sriovnetwork.k8snetworkplumbingwg.io";

std::vector<json::Document> documents(const std::string& stream) {
  std::vector<json::Document> out;
  size_t at = 0;
  while (at < stream.size()) {
    size_t end = stream.find('\n', at);
    REQUIRE(end != std::string::npos);  // every document ends its line
    auto doc = json::parse(stream.substr(at, end - at));
    REQUIRE(doc.ok());
    out.push_back(std::move(*doc));
    at = end + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("the metadata stream holds the claim's request in v1beta1, then v1alpha1",
          "[dra][metadata][unit]") {
  dra::MetadataClaim claim{"llm", "worker-0-gpu-nic-x7k2", "uid-1", "gpu-nic"};
  dra::MetadataDevice vf{
      "node-a",
      "0000-0e-00-1",
      {{"resource.kubernetes.io/pciBusID", api::AttributeValue::ofString("0000:0e:00.1")},
       {"vfID", api::AttributeValue::ofInt(0)},
       {"rdmaCapable", api::AttributeValue::ofBool(true)}},
      std::nullopt};
  auto stream = dra::deviceMetadataStream(claim, kDriver, "vf/fast", 1, {vf});
  auto docs = documents(stream);
  REQUIRE(docs.size() == 2);
  CHECK(json::stringOr(docs[0], "apiVersion") == "metadata.resource.k8s.io/v1beta1");
  CHECK(json::stringOr(docs[1], "apiVersion") == "metadata.resource.k8s.io/v1alpha1");
  for (const auto& d : docs) {
    CHECK(json::stringOr(d, "kind") == "DeviceMetadata");
    CHECK(json::dump(d["metadata"]) ==
          R"({"name":"worker-0-gpu-nic-x7k2","namespace":"llm","uid":"uid-1","generation":1})");
    CHECK(json::stringOr(d, "podClaimName") == "gpu-nic");
    CHECK(json::dump(d["requests"]) ==
          R"([{"name":"vf/fast","devices":[{"driver":"sriovnetwork.k8snetworkplumbingwg.io",)"
          R"("pool":"node-a","name":"0000-0e-00-1","attributes":{"rdmaCapable":{"bool":true},)"
          R"("resource.kubernetes.io/pciBusID":{"string":"0000:0e:00.1"},"vfID":{"int":0}}}]}])");
  }
  CHECK(dra::metadataGeneration(stream) == 1);

  // Once attached: the network data, one generation later.
  vf.network = api::NetworkDeviceData{"net1", {"10.56.217.10/24"}, "02:00:00:00:00:01"};
  auto updated = dra::deviceMetadataStream(claim, kDriver, "vf/fast", 2, {vf});
  CHECK(dra::metadataGeneration(updated) == 2);
  CHECK(
      json::dump(documents(updated)[1]["requests"][0]["devices"][0]["networkData"]) ==
      R"({"interfaceName":"net1","ips":["10.56.217.10/24"],"hardwareAddress":"02:00:00:00:00:01"})");
  CHECK(dra::metadataGeneration("not json") == 0);

  // What the agent does once the VF is attached: the same stream, its network data, one
  // generation later; and without it again once detached.
  auto attached = dra::withNetworkData(stream, kDriver, {{"0000-0e-00-1", *vf.network}});
  REQUIRE(attached.ok());
  CHECK(*attached == updated);
  auto again = dra::withNetworkData(*attached, kDriver, {{"0000-0e-00-1", *vf.network}});
  REQUIRE(again.ok());
  CHECK(*again == *attached);  // nothing new: the same generation
  auto detached = dra::withNetworkData(*attached, kDriver, {});
  REQUIRE(detached.ok());
  vf.network.reset();
  CHECK(*detached == dra::deviceMetadataStream(claim, kDriver, "vf/fast", 3, {vf}));
  CHECK_FALSE(dra::withNetworkData("{\"requests\":[]}\n", kDriver, {}).ok());
  CHECK_FALSE(dra::withNetworkData("", kDriver, {}).ok());
}

TEST_CASE("a claim's pod claim name must be one a pod can have", "[dra][metadata][unit]") {
  api::ResourceClaim claim;
  claim.metadata.namespace_ = "llm";
  claim.metadata.name = "worker-gpu-nic-x7k2";
  claim.metadata.uid = "uid-1";
  auto direct = dra::metadataClaimOf(claim);
  REQUIRE(direct.ok());
  CHECK(direct->pod_claim_name.empty());
  claim.metadata.annotations["resource.kubernetes.io/pod-claim-name"] = "gpu-nic";
  auto templated = dra::metadataClaimOf(claim);
  REQUIRE(templated.ok());
  CHECK(templated->pod_claim_name == "gpu-nic");
  const std::vector<std::string> hostile_names = {"../../../../etc", "a/b", "", "Gpu",
                                                  std::string(64, 'a')};
  for (const auto& hostile : hostile_names) {
    INFO(hostile);
    claim.metadata.annotations["resource.kubernetes.io/pod-claim-name"] = hostile;
    auto refused = dra::metadataClaimOf(claim);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.status().message(),
               Catch::Contains("is not a pod's name for a claim (a DNS label)"));
  }
}

TEST_CASE("metadata paths and the CDI spec that mounts the file", "[dra][metadata][unit]") {
  dra::MetadataClaim templated{"llm", "worker-0-gpu-nic-x7k2", "uid-1", "gpu-nic"};
  dra::MetadataClaim direct{"llm", "shared-vf", "uid-2", ""};
  const std::string data = "/var/lib/kubelet/plugins/" + kDriver;
  CHECK(dra::metadataHostPath(data, templated, "vf/fast") ==
        data + "/dra-device-metadata/llm_worker-0-gpu-nic-x7k2/vf/metadata.json");
  CHECK(dra::metadataContainerPath(templated, kDriver, "vf") ==
        "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu-nic/vf/"
        "sriovnetwork.k8snetworkplumbingwg.io-metadata.json");
  CHECK(dra::metadataContainerPath(direct, kDriver, "vf") ==
        "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/shared-vf/vf/"
        "sriovnetwork.k8snetworkplumbingwg.io-metadata.json");
  CHECK(dra::metadataCdiSpecFileName(kDriver, "uid-1", "vf/fast") ==
        "sriovnetwork.k8snetworkplumbingwg.io_metadata_uid-1_vf.json");
  CHECK(dra::metadataCdiId(kDriver, "uid-1", "vf") ==
        "sriovnetwork.k8snetworkplumbingwg.io/metadata=uid-1_vf");
  auto spec = dra::metadataCdiSpec(direct, kDriver, "vf", "/host/metadata.json");
  CHECK(json::dump(spec) ==
        R"({"cdiVersion":"0.5.0","kind":"sriovnetwork.k8snetworkplumbingwg.io/metadata",)"
        R"("devices":[{"name":"uid-2_vf","containerEdits":{"mounts":[{"hostPath":)"
        R"("/host/metadata.json","containerPath":"/var/run/kubernetes.io/dra-device-attributes/)"
        R"(resourceclaims/shared-vf/vf/sriovnetwork.k8snetworkplumbingwg.io-metadata.json",)"
        R"("options":["ro","bind"]}]}}]})");
}
