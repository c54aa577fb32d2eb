#pragma once
// SriovNetworkNodePolicy selection and merge into SriovNodeState.spec.interfaces (see render.h).
#include <vector>

#include "policy/render.h"

namespace sriovdra::policy {

bool nicSelected(const api::NicSelector& selector, const api::InterfaceExt& pf);

struct InterfacesResult {
  std::vector<api::Interface> interfaces;  // sorted by pciAddress
  std::vector<Conflict> conflicts;
  std::map<PolicyRef, int64_t> matches;
};

InterfacesResult renderInterfaces(const api::Node& node,
                                  std::vector<const api::SriovNetworkNodePolicy*> policies,
                                  const std::vector<api::InterfaceExt>& discovered);

}  // namespace sriovdra::policy
