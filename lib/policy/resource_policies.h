#pragma once
// Which discovered VFs are advertised and with which attributes (see render.h).
#include <vector>

#include "policy/render.h"

namespace sriovdra::policy {

// True if the filter's non-empty fields all match the VF (lists: any entry).
bool filterMatches(const api::ResourceFilter& f, const api::InterfaceExt& pf,
                   const api::VirtualFunction& vf);

struct DevicesResult {
  std::vector<api::Device> devices;  // sorted by name
  std::vector<Conflict> conflicts;
  std::vector<Warning> warnings;
  std::map<PolicyRef, int64_t> matches;
};

DevicesResult renderDevices(const RenderInput& in, const std::vector<api::Interface>& interfaces);

}  // namespace sriovdra::policy
