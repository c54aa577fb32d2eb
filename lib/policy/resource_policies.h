#pragma once
// Which discovered VFs are advertised and with which attributes (see render.h).
#include <vector>

#include "policy/render.h"

namespace sriovdra::policy {

// True if the filter's non-empty fields all match the VF (lists: any entry). `drivers` is not
// matched: as in the SR-IOV DRA driver it selects nothing (a VF is bound at prepare, and its
// current driver must not move it in and out of the slice); it lists the drivers claims may use
// the VF with (api::Device::drivers).
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
