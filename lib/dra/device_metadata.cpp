#include "dra/device_metadata.h"

#include "api/codec.h"
#include "base/names.h"
#include "dra/cdi.h"

namespace sriovdra::dra {
namespace {

constexpr const char* kVersions[] = {"metadata.resource.k8s.io/v1beta1",
                                     "metadata.resource.k8s.io/v1alpha1"};

json::Value encodeDevice(const MetadataDevice& d, const std::string& driver, json::Allocator& a) {
  json::Value out(rapidjson::kObjectType);
  api::Writer w(out, a);
  w.strAlways("driver", driver).strAlways("pool", d.pool).strAlways("name", d.name);
  w.nonEmpty("attributes", api::encodeAttributes(d.attributes, a));
  if (d.network) {
    w.object("networkData")
        .str("interfaceName", d.network->interface_name)
        .strings("ips", d.network->ips)
        .str("hardwareAddress", d.network->hardware_address);
  }
  return out;
}

}  // namespace

Result<MetadataClaim> metadataClaimOf(const api::ResourceClaim& claim) {
  MetadataClaim out{claim.metadata.namespace_, claim.metadata.name, claim.metadata.uid, ""};
  auto it = claim.metadata.annotations.find(std::string(kPodClaimNameAnnotation));
  if (it == claim.metadata.annotations.end()) return out;
  if (!isDnsLabel(it->second)) {
    return Status(Code::kInvalidArgument,
                  "ResourceClaim " + out.namespace_ + "/" + out.name + ": annotation " +
                      std::string(kPodClaimNameAnnotation) + " \"" + it->second +
                      "\" is not a pod's name for a claim (a DNS label); the device metadata "
                      "file cannot be placed");
  }
  out.pod_claim_name = it->second;
  return out;
}

std::string baseRequest(const std::string& request) { return request.substr(0, request.find('/')); }

std::string deviceMetadataStream(const MetadataClaim& claim, const std::string& driver,
                                 const std::string& request, int64_t generation,
                                 const std::vector<MetadataDevice>& devices) {
  std::string out;
  for (const char* version : kVersions) {
    json::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    api::Writer w(doc, a);
    w.strAlways("kind", "DeviceMetadata").strAlways("apiVersion", version);
    w.object("metadata")
        .strAlways("name", claim.name)
        .strAlways("namespace", claim.namespace_)
        .strAlways("uid", claim.uid)
        .i64("generation", generation);
    w.str("podClaimName", claim.pod_claim_name);
    json::Value list(rapidjson::kArrayType);
    for (const auto& d : devices) list.PushBack(encodeDevice(d, driver, a), a);
    json::Value req(rapidjson::kObjectType);
    api::Writer(req, a).strAlways("name", request).nonEmpty("devices", std::move(list));
    json::Value requests(rapidjson::kArrayType);
    requests.PushBack(req, a);
    w.value("requests", std::move(requests));
    out += json::dump(doc) + "\n";
  }
  return out;
}

int64_t metadataGeneration(std::string_view stream) {
  auto first = json::parse(stream.substr(0, stream.find('\n')));
  if (!first.ok()) return 0;
  const json::Value* meta = json::objectMember(*first, "metadata");
  return meta == nullptr ? 0 : json::intOr(*meta, "generation", 0);
}

Result<std::string> withNetworkData(std::string_view stream, const std::string& driver,
                                    const std::map<std::string, api::NetworkDeviceData>& network) {
  auto first = json::parse(stream.substr(0, stream.find('\n')));
  if (!first.ok()) return first.status();
  api::Reader r(&*first, "metadata file");
  api::Reader meta = r.object("metadata");
  MetadataClaim claim{meta.str("namespace"), meta.str("name"), meta.str("uid"),
                      r.str("podClaimName")};
  auto requests = r.array("requests");
  if (!r.status().isOk()) return r.status();
  if (requests.size() != 1) {
    return Status(Code::kInvalidArgument,
                  "metadata file: " + std::to_string(requests.size()) + " requests, not one");
  }
  std::vector<MetadataDevice> devices;
  bool changed = false;
  for (const auto& d : requests[0].array("devices")) {
    MetadataDevice device{d.str("pool"), d.str("name"), api::decodeAttributes(d, "attributes"),
                          std::nullopt};
    std::optional<api::NetworkDeviceData> before;
    if (d.has("networkData")) {
      api::Reader n = d.object("networkData");
      before = api::NetworkDeviceData{n.str("interfaceName"), n.strings("ips"),
                                      n.str("hardwareAddress")};
    }
    if (auto it = network.find(device.name); it != network.end()) device.network = it->second;
    changed = changed || device.network != before;
    devices.push_back(std::move(device));
  }
  if (!r.status().isOk()) return r.status();
  if (!changed) return std::string(stream);
  return deviceMetadataStream(claim, driver, requests[0].str("name"), meta.i64("generation") + 1,
                              devices);
}

std::string metadataClaimDir(const std::string& plugin_data_dir, const MetadataClaim& claim) {
  return plugin_data_dir + "/dra-device-metadata/" + claim.namespace_ + "_" + claim.name;
}

std::string metadataHostPath(const std::string& plugin_data_dir, const MetadataClaim& claim,
                             const std::string& request) {
  return metadataClaimDir(plugin_data_dir, claim) + "/" + baseRequest(request) + "/metadata.json";
}

std::string metadataContainerPath(const MetadataClaim& claim, const std::string& driver,
                                  const std::string& request) {
  std::string dir = claim.pod_claim_name.empty()
                        ? "/resourceclaims/" + claim.name
                        : "/resourceclaimtemplates/" + claim.pod_claim_name;
  return std::string(kMetadataContainerDir) + dir + "/" + baseRequest(request) + "/" + driver +
         "-metadata.json";
}

json::Document metadataCdiSpec(const MetadataClaim& claim, const std::string& driver,
                               const std::string& request, const std::string& host_path) {
  CdiDevice device{
      .name = claim.uid + "_" + baseRequest(request),
      .mounts = {{host_path, metadataContainerPath(claim, driver, request), {"ro", "bind"}}}};
  return cdiSpec({device}, driver + "/metadata");
}

std::string metadataCdiSpecFileName(const std::string& driver, const std::string& claim_uid,
                                    const std::string& request) {
  return metadataCdiSpecPrefix(driver, claim_uid) + baseRequest(request) + ".json";
}

std::string metadataCdiSpecPrefix(const std::string& driver, const std::string& claim_uid) {
  return driver + "_metadata_" + claim_uid + "_";
}

std::string metadataCdiId(const std::string& driver, const std::string& claim_uid,
                          const std::string& request) {
  return driver + "/metadata=" + claim_uid + "_" + baseRequest(request);
}

}  // namespace sriovdra::dra
