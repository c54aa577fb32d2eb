#include "api/names.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace sriovdra::api {

namespace resources {
const kube::ResourceType kSriovNetworkNodePolicies{
    "sriovnetwork.openshift.io", "v1", "sriovnetworknodepolicies", "SriovNetworkNodePolicy", true};
const kube::ResourceType kSriovResourcePolicies{"sriovnetwork.k8snetworkplumbingwg.io", "v1alpha1",
                                                "sriovresourcepolicies", "SriovResourcePolicy",
                                                true};
const kube::ResourceType kDeviceAttributes{"sriovnetwork.k8snetworkplumbingwg.io", "v1alpha1",
                                           "deviceattributes", "DeviceAttributes", true};
const kube::ResourceType kSriovNodeStates{"sriovnetwork.k8snetworkplumbingwg.io", "v1alpha1",
                                          "sriovnodestates", "SriovNodeState", true};
const kube::ResourceType kDeviceClasses{"resource.k8s.io", "v1", "deviceclasses", "DeviceClass",
                                        false};
const kube::ResourceType kResourceSlices{"resource.k8s.io", "v1", "resourceslices", "ResourceSlice",
                                         false};
const kube::ResourceType kDeviceTaintRules{"resource.k8s.io", "v1", "devicetaintrules",
                                           "DeviceTaintRule", false};
const kube::ResourceType kResourceClaims{"resource.k8s.io", "v1", "resourceclaims", "ResourceClaim",
                                         true};
const kube::ResourceType kResourceClaimTemplates{"resource.k8s.io", "v1", "resourceclaimtemplates",
                                                 "ResourceClaimTemplate", true};
const kube::ResourceType kSriovNetworks{"sriovnetwork.openshift.io", "v1", "sriovnetworks",
                                        "SriovNetwork", true};
const kube::ResourceType kSriovOperatorConfigs{"sriovnetwork.openshift.io", "v1",
                                               "sriovoperatorconfigs", "SriovOperatorConfig", true};
const kube::ResourceType kSriovNetworkPoolConfigs{
    "sriovnetwork.openshift.io", "v1", "sriovnetworkpoolconfigs", "SriovNetworkPoolConfig", true};
const kube::ResourceType kSriovIBNetworks{"sriovnetwork.openshift.io", "v1", "sriovibnetworks",
                                          "SriovIBNetwork", true};
const kube::ResourceType kNetworkAttachmentDefinitions{
    "k8s.cni.cncf.io", "v1", "network-attachment-definitions", "NetworkAttachmentDefinition", true};
}  // namespace resources

bool attr::isReserved(std::string_view name) {
  return std::find(kReserved.begin(), kReserved.end(), name) != kReserved.end();
}

std::string deviceName(std::string_view pci_address) {
  std::string out(pci_address);
  std::replace(out.begin(), out.end(), ':', '-');
  std::replace(out.begin(), out.end(), '.', '-');
  return out;
}

bool isDriverName(std::string_view s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

}  // namespace sriovdra::api
