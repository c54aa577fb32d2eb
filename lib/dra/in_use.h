#pragma once
// Which VFs of a node are in use, reconstructed from more than the plugin's checkpoint (pure):
// before the agent destroys or rebinds a VF it asks the API server and the host too, so that a
// lost or corrupt checkpoint cannot make it tear down a VF a pod uses.
//   * allocatedVfs(): the VFs that claims allocate from this node's pool through our driver,
//     for claims reserved for a consumer (a claim nobody reserves is deallocated by Kubernetes'
//     resourceclaim controller, and no pod can start with it);
//   * cdiSpecAddresses(): the VFs a CDI spec file of ours names: the claim specs
//     (SRIOVNETWORK_VF_DEVICE_<D>=<address>) and the pod specs (SRIOVNETWORK_PCI_ADDRESSES).
// The evidence is combined with mergeInUse(), best named first: the checkpoint names claims
// "namespace/name (prepared for its pod)", the API "namespace/name (allocated)" (its pod may not
// have started here yet), a file only its UID ("CDI spec of <uid>").
#include <string>
#include <string_view>
#include <vector>

#include "api/resource.h"
#include "base/status.h"
#include "host/prepared.h"

namespace sriovdra::dra {

// "0000-0e-00-1" -> "0000:0e:00.1"; "" when `device` is not a device name of ours.
std::string pciAddressOfDevice(std::string_view device);

host::PreparedVfs allocatedVfs(const std::vector<api::ResourceClaim>& claims,
                               std::string_view driver, std::string_view pool);

// The addresses in one CDI spec file this plugin wrote, sorted, without duplicates;
// kInvalidArgument when the text is not JSON shaped like a CDI spec.
Result<std::vector<std::string>> cdiSpecAddresses(std::string_view text);

// Adds the VFs of `more` that `into` does not hold yet (each holder once).
void mergeInUse(host::PreparedVfs& into, const host::PreparedVfs& more);

}  // namespace sriovdra::dra
