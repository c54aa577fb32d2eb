#pragma once
// The DeviceClasses the operator maintains: `sriovnetwork.k8snetworkplumbingwg.io` for every VF
// of the driver, and one `<resource>.sriovnetwork.k8snetworkplumbingwg.io` per resourceName in
// use (by a SriovNetworkNodePolicy, or by DeviceAttributes setting the resourceName attribute),
// selecting that resourceName. The class name is the resourceName in lower case with '_' as
// '-' (cx6_vfs -> cx6-vfs...). Resource names that map to one class are all selected by it.
// With a resource prefix, per-resource classes carry extendedResourceName <prefix>/<resourceName>
// so pods that request the device-plugin resource keep working (DRAExtendedResource).
// Pure and deterministic (sorted by name).
#include <string>
#include <vector>

#include "api/objects.h"
#include "api/policies.h"

namespace sriovdra::policy {

struct DesiredDeviceClass {
  std::string name;
  api::DeviceClassSpec spec;
  std::vector<std::string> resource_names;  // empty for the driver-wide class
};

std::string deviceClassNameFor(const std::string& resource_name);

std::vector<DesiredDeviceClass> renderDeviceClasses(
    const std::vector<const api::SriovNetworkNodePolicy*>& node_policies,
    const std::vector<const api::DeviceAttributes*>& device_attributes,
    const std::string& resource_prefix);

}  // namespace sriovdra::policy
