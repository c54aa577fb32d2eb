#include "operator/rollout.h"

#include <map>

namespace sriovdra::op {

std::optional<std::string> disruption(const api::SriovNodeStateSpec& current,
                                      const api::SriovNodeStateSpec& desired,
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
    std::string pf_name = "PF " + pf.pci_address + ": ";
    if (new_itf == nullptr) {
      if (old_itf != nullptr && !old_itf->externally_managed) {
        return pf_name + "no policy wants it any more, its " + std::to_string(pf.num_vfs) +
               " VF(s) are removed";
      }
      continue;
    }
    // A different VF count recreates every VF of the PF.
    if (!new_itf->externally_managed && new_itf->num_vfs != pf.num_vfs) {
      return pf_name + std::to_string(pf.num_vfs) + " VF(s) now, " +
             std::to_string(new_itf->num_vfs) + " wanted";
    }
    // Rebinding drivers or switching modes disturbs VFs that may be in use.
    if (old_itf == nullptr) continue;
    if (old_itf->vf_groups != new_itf->vf_groups) return pf_name + "its VF groups change";
    if (old_itf->eswitch_mode != new_itf->eswitch_mode) return pf_name + "its eSwitch mode changes";
    if (old_itf->link_type != new_itf->link_type) return pf_name + "its link type changes";
  }
  return std::nullopt;
}

bool isReconfiguring(const api::SriovNodeState& state) {
  return state.status.sync_status == "InProgress" ||
         state.status.observed_generation < state.metadata.generation;
}

bool rebootRequested(const api::SriovNodeState& state) {
  const api::Condition* c = api::findCondition(state.status.conditions, "RebootRequired");
  return c != nullptr && c->status == "True" && c->observed_generation == state.metadata.generation;
}

}  // namespace sriovdra::op
