#pragma once
// What kube-apiserver refuses in the resource.k8s.io/v1 objects this project writes, as
// k8s.io/api/resource/v1 defines it (Kubernetes 1.34 to 1.37), and checks of our objects against
// it, so the agent can leave out a device the API server would refuse (and say why) instead of
// failing the whole ResourceSlice. Pure; every problem is a sentence a person can act on.
#include <string>
#include <vector>

#include "api/policies.h"
#include "api/resource.h"

namespace sriovdra::api {

inline constexpr size_t kMaxDevicesPerSlice = 128;
inline constexpr size_t kMaxAttributesAndCapacitiesPerDevice = 32;
inline constexpr size_t kMaxAttributeValuesPerDevice = 48;  // list values count one each
inline constexpr size_t kMaxAttributeValueLength = 64;      // string and version values
inline constexpr size_t kMaxQualifiedNameDomainLength = 63;
inline constexpr size_t kMaxQualifiedNameIdLength = 32;
inline constexpr size_t kMaxDnsLabelLength = 63;  // device names

bool isDnsLabel(const std::string& s);
bool isDnsSubdomain(const std::string& s);  // of at most 253 characters
bool isCIdentifier(const std::string& s);
bool isSemver(const std::string& v);  // semver.org 2.0.0, no leading "v"

// An attribute or capacity name: a C identifier of at most 32 characters, optionally after a DNS
// subdomain of at most 63 and a "/" ("dra.example.com/theName").
std::vector<std::string> qualifiedNameProblems(const std::string& name);
// String and version values of at most 64 characters, versions semantic, lists not empty.
std::vector<std::string> attributeValueProblems(const std::string& name, const AttributeValue& v);
// Everything the API server would refuse in this device of a ResourceSlice.
std::vector<std::string> sliceDeviceProblems(const SliceDevice& d);

}  // namespace sriovdra::api
