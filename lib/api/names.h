#pragma once
// The names users and other components see: API groups and resources, the DRA driver name and
// the device attribute names of the reference SR-IOV DRA driver (exact spelling matters).
#include <array>
#include <cstdint>
#include <string_view>

#include "kube/resource.h"

namespace sriovdra::api {

inline constexpr std::string_view kDriverName = "sriovnetwork.k8snetworkplumbingwg.io";
// The field manager of everything the node agent and its kubelet plugin write.
inline constexpr const char* kAgentFieldManager = "sriov-dra-agent";
inline constexpr std::string_view kDraGroup = "sriovnetwork.k8snetworkplumbingwg.io";
inline constexpr std::string_view kOperatorGroup = "sriovnetwork.openshift.io";
// On SriovNodeState: the operator lets the agent reboot the node for firmware changes; the value
// is the generation the grant is for (host/reboot.h).
inline constexpr const char* kRebootGrantAnnotation =
    "sriovnetwork.k8snetworkplumbingwg.io/reboot-granted";

namespace resources {
extern const kube::ResourceType kSriovNetworkNodePolicies;
extern const kube::ResourceType kSriovResourcePolicies;
extern const kube::ResourceType kDeviceAttributes;
extern const kube::ResourceType kSriovNodeStates;
extern const kube::ResourceType kDeviceClasses;
extern const kube::ResourceType kResourceSlices;
extern const kube::ResourceType kDeviceTaintRules;
extern const kube::ResourceType kResourceClaims;
extern const kube::ResourceType kResourceClaimTemplates;
extern const kube::ResourceType kSriovNetworks;
extern const kube::ResourceType kSriovOperatorConfigs;
extern const kube::ResourceType kSriovNetworkPoolConfigs;
extern const kube::ResourceType kSriovIBNetworks;
extern const kube::ResourceType kNetworkAttachmentDefinitions;
}  // namespace resources

// Device attributes published for every VF (reference driver, `resourceslice-sriov-observed.json`).
namespace attr {
inline constexpr std::string_view kVendor = "sriovnetwork.k8snetworkplumbingwg.io/vendor";
inline constexpr std::string_view kDeviceId = "sriovnetwork.k8snetworkplumbingwg.io/deviceID";
inline constexpr std::string_view kPfDeviceId = "sriovnetwork.k8snetworkplumbingwg.io/pfDeviceID";
inline constexpr std::string_view kPciAddress = "sriovnetwork.k8snetworkplumbingwg.io/pciAddress";
inline constexpr std::string_view kPfPciAddress =
    "sriovnetwork.k8snetworkplumbingwg.io/pfPciAddress";
inline constexpr std::string_view kPfName = "sriovnetwork.k8snetworkplumbingwg.io/PFName";
inline constexpr std::string_view kEswitchMode = "sriovnetwork.k8snetworkplumbingwg.io/EswitchMode";
inline constexpr std::string_view kVfId = "sriovnetwork.k8snetworkplumbingwg.io/vfID";
inline constexpr std::string_view kLinkType = "sriovnetwork.k8snetworkplumbingwg.io/linkType";
inline constexpr std::string_view kRdmaCapable = "sriovnetwork.k8snetworkplumbingwg.io/rdmaCapable";
inline constexpr std::string_view kResourceName =
    "sriovnetwork.k8snetworkplumbingwg.io/resourceName";
inline constexpr std::string_view kCniDeviceId = "k8s.cni.cncf.io/deviceID";
inline constexpr std::string_view kCniResourceName = "k8s.cni.cncf.io/resourceName";
inline constexpr std::string_view kPcieRoot = "resource.kubernetes.io/pcieRoot";
inline constexpr std::string_view kPciBusId = "resource.kubernetes.io/pciBusID";
inline constexpr std::string_view kNumaNode = "dra.net/numaNode";

// Discovery attributes that policies can never override.
inline constexpr std::array<std::string_view, 14> kReserved = {
    kVendor, kDeviceId, kPfDeviceId,   kPciAddress, kCniDeviceId, kPfName,      kEswitchMode,
    kVfId,   kPcieRoot, kPfPciAddress, kPciBusId,   kLinkType,    kRdmaCapable, kNumaNode};
bool isReserved(std::string_view name);
}  // namespace attr

// Mellanox (NVIDIA) NICs: their PCI vendor id, and the most VFs per PF a policy may ask of one
// (the SR-IOV network operator's MlxMaxVFs): the agent raises the firmware's NUM_OF_VFS up to it.
inline constexpr std::string_view kMellanoxVendor = "15b3";
inline constexpr int64_t kMellanoxMaxVfs = 128;

// "0000:c7:00.1" -> "0000-c7-00-1": a DNS label, as the reference driver names devices.
std::string deviceName(std::string_view pci_address);

// Letters, digits, '_' and '-', at most 64: what a kernel driver's name looks like (so it is
// safe as a component of a sysfs path).
bool isDriverName(std::string_view s);

}  // namespace sriovdra::api
