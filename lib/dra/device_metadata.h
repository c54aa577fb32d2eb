#pragma once
// KEP-5304 device metadata (Kubernetes 1.36+, k8s.io/dynamic-resource-allocation/api/metadata):
// per claim request, a file that tells the containers using the claim what they got, mounted
// read-only through CDI, as the kubelet-plugin helper of the pinned release writes it and the
// SR-IOV DRA driver enables it (--enable-device-metadata). KubeVirt reads pciBusID from it.
//
//   host:      <plugin data dir>/dra-device-metadata/<namespace>_<claim>/<request>/metadata.json
//   container: /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claim>/<request>/
//              <driver>-metadata.json, or .../resourceclaimtemplates/<pod claim name>/... for a
//              claim made from a template (its resource.kubernetes.io/pod-claim-name annotation)
//   CDI:       <cdi root>/<driver>_metadata_<claim UID>_<request>.json, kind <driver>/metadata,
//              device <claim UID>_<request>, one bind mount (ro)
//
// The file is a JSON stream of one DeviceMetadata object per API version, newest first
// (metadata.resource.k8s.io/v1beta1, then v1alpha1), so that readers of either find theirs:
// the claim's name, namespace and UID, generation (1 at prepare, +1 per update), the pod claim
// name, and the request with each device's driver, pool, name, attributes (as published) and
// network data (interface, IPs, MAC, once attached). A subrequest ("vf/fast") is recorded
// under its request ("vf"). Pure: the plugin writes the files.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/policies.h"
#include "api/resource.h"
#include "base/json.h"

namespace sriovdra::dra {

inline constexpr std::string_view kMetadataContainerDir =
    "/var/run/kubernetes.io/dra-device-attributes";
inline constexpr std::string_view kPodClaimNameAnnotation = "resource.kubernetes.io/pod-claim-name";

struct MetadataDevice {
  std::string pool;
  std::string name;
  api::Attributes attributes;
  std::optional<api::NetworkDeviceData> network;  // as in the claim's status, once attached
  bool operator==(const MetadataDevice&) const = default;
};

struct MetadataClaim {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string pod_claim_name;  // "" = referenced directly, not made from a template
};

// The claim as the files name it. Its pod-claim-name annotation becomes a path component in
// every container of the pod, so a value that is not a DNS label (what a pod's claim names are)
// is refused: a claim's author could otherwise aim the mount anywhere in the container.
Result<MetadataClaim> metadataClaimOf(const api::ResourceClaim& claim);

// The request a file is for: "vf" for "vf" and "vf/fast".
std::string baseRequest(const std::string& request);

// The stream for one request; generation starts at 1.
std::string deviceMetadataStream(const MetadataClaim& claim, const std::string& driver,
                                 const std::string& request, int64_t generation,
                                 const std::vector<MetadataDevice>& devices);
// The generation of a stream written before (0 when it has none).
int64_t metadataGeneration(std::string_view stream);
// A stream written before, one generation later, with each device's network data as `network`
// says (by device name; a device it does not name has none); unchanged when it says what the
// stream says already. An error when it cannot be read.
Result<std::string> withNetworkData(std::string_view stream, const std::string& driver,
                                    const std::map<std::string, api::NetworkDeviceData>& network);

std::string metadataClaimDir(const std::string& plugin_data_dir, const MetadataClaim& claim);
std::string metadataHostPath(const std::string& plugin_data_dir, const MetadataClaim& claim,
                             const std::string& request);
std::string metadataContainerPath(const MetadataClaim& claim, const std::string& driver,
                                  const std::string& request);
// The CDI spec that mounts the file, its file name and the CDI device ID kubelet is given.
json::Document metadataCdiSpec(const MetadataClaim& claim, const std::string& driver,
                               const std::string& request, const std::string& host_path);
std::string metadataCdiSpecFileName(const std::string& driver, const std::string& claim_uid,
                                    const std::string& request);
std::string metadataCdiId(const std::string& driver, const std::string& claim_uid,
                          const std::string& request);
// The prefix of every metadata CDI spec file name of a claim (for removing them all).
std::string metadataCdiSpecPrefix(const std::string& driver, const std::string& claim_uid);

}  // namespace sriovdra::dra
