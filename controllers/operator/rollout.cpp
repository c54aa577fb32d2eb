#include "operator/rollout.h"

#include <map>

namespace sriovdra::op {

bool isDisruptive(const api::SriovNodeStateSpec& current, const api::SriovNodeStateSpec& desired,
                  const api::SriovNodeStateStatus& status) {
  std::map<std::string, const api::Interface*> before, after;
  for (const auto& i : current.interfaces) before[i.pci_address] = &i;
  for (const auto& i : desired.interfaces) after[i.pci_address] = &i;
  for (const auto& pf : status.interfaces) {
    if (pf.num_vfs == 0) continue;
    auto b = before.find(pf.pci_address);
    auto a = after.find(pf.pci_address);
    const api::Interface* old_itf = b == before.end() ? nullptr : b->second;
    const api::Interface* new_itf = a == after.end() ? nullptr : a->second;
    if (new_itf == nullptr) {
      if (old_itf != nullptr && !old_itf->externally_managed) return true;  // reset to 0 VFs
      continue;
    }
    // A different VF count recreates every VF of the PF.
    if (!new_itf->externally_managed && new_itf->num_vfs != pf.num_vfs) return true;
    // Rebinding drivers or switching modes disturbs VFs that may be in use.
    if (old_itf != nullptr && (old_itf->vf_groups != new_itf->vf_groups ||
                               old_itf->eswitch_mode != new_itf->eswitch_mode ||
                               old_itf->link_type != new_itf->link_type)) {
      return true;
    }
  }
  return false;
}

bool isReconfiguring(const api::SriovNodeState& state) {
  return state.status.sync_status == "InProgress" ||
         state.status.observed_generation < state.metadata.generation;
}

}  // namespace sriovdra::op
