#include "host/plan.h"

#include <algorithm>

#include "api/names.h"
#include "base/strings.h"

namespace sriovdra::host {

std::string assignedHolder(std::string_view assigned) {
  if (assigned == api::kAssignedNetns) {
    return "its netdev is in a pod's network namespace, not by a claim of this driver";
  }
  return "assigned " + std::string(assigned);
}

namespace {

// The claims holding VFs of the PF, and the VFs in a pod's network namespace that no claim of
// this driver holds (a pod someone else gave them to).
std::vector<std::string> claimsOn(const api::InterfaceExt& pf, const PreparedVfs& prepared) {
  std::set<std::string> claims;
  for (const auto& vf : pf.vfs) {
    auto it = prepared.find(vf.pci_address);
    if (it != prepared.end()) {
      claims.insert(it->second.begin(), it->second.end());
    } else if (!vf.assigned.empty()) {
      claims.insert("VF " + vf.pci_address + " (" + assignedHolder(vf.assigned) + ")");
    }
  }
  return {claims.begin(), claims.end()};
}

}  // namespace

bool Action::destructive() const {
  return kind == Kind::kBindDriver || (kind == Kind::kSetNumVfs && value == "0");
}

bool Plan::destructive() const {
  return std::any_of(actions.begin(), actions.end(),
                     [](const Action& a) { return a.destructive(); });
}

std::string Action::describe() const {
  switch (kind) {
    case Kind::kSetNumVfs:
      return "set sriov_numvfs of " + target + " to " + value;
    case Kind::kSetMtu:
      return "set the MTU of " + target + " to " + value;
    case Kind::kSetEswitchMode:
      return "set the eSwitch mode of pci/" + target + " to " + value;
    case Kind::kSetVfGuid:
      return "set the GUID of VF " + std::to_string(vf_id) + " of " + target + " to " + value;
    case Kind::kBindDriver:
      return "bind " + target + " to " +
             (value.empty() ? std::string("its default driver") : value) +
             (from.empty() ? "" : " (from " + from + ")");
    case Kind::kSetLinkUp:
      return "bring up " + target;
    case Kind::kSetVfMac:
      return "set the MAC of VF " + std::to_string(vf_id) + " of " + target + " to " + value;
  }
  return "?";
}

std::vector<std::string> describeUnconverged(const Plan& left) {
  std::vector<std::string> out;
  for (const auto& a : left.actions) {
    if (a.kind == Action::Kind::kBindDriver) {
      std::string driver = a.value.empty() ? "its default driver" : a.value;
      out.push_back("VF " + a.target + " is still " +
                    (a.from.empty() ? std::string("without a driver") : "on " + a.from) +
                    " after binding it to " + driver +
                    ": the driver did not take it (is its module loaded? see the kernel log)");
      continue;
    }
    out.push_back(a.describe() + ": did not take effect (the host shows the old value)");
  }
  return out;
}

namespace {

// The PF's VF count and eSwitch mode (VFs to 0, the mode, then the VFs back, as the kernel needs
// them), or for an externally managed PF the check that the host has them. False when nothing
// more is planned for the PF in this pass: its VFs are recreated (their drivers and MTUs follow
// on the next pass, once they exist), held by claims, or the spec cannot be met.
bool planVfCount(const api::Interface& itf, const api::InterfaceExt& pf, const std::string& who,
                 const PreparedVfs& prepared, Plan& plan) {
  // Settings this agent does not change on the host are checked, never silently ignored.
  if (!itf.link_type.empty() && !pf.link_type.empty() &&
      !equalsIgnoreCase(itf.link_type, pf.link_type)) {
    plan.errors.push_back(who + ": linkType " + itf.link_type + " is asked, the port is " +
                          pf.link_type +
                          "; the link type is a firmware setting that only Mellanox NICs "
                          "offer to change");
  }
  // An empty eSwitchMode means legacy, as upstream reads the spec.
  std::string mode = itf.eswitch_mode.empty() ? "legacy" : itf.eswitch_mode;
  bool mode_change = !pf.eswitch_mode.empty() && mode != pf.eswitch_mode;
  if (itf.externally_managed) {
    if (mode_change) {
      std::string e = who;
      e.append(" is externally managed and in eSwitch mode ").append(pf.eswitch_mode);
      e.append(", not the ").append(mode).append(" the policy expects; change it on the host ");
      e.append("(devlink dev eswitch set pci/").append(pf.pci_address).append(" mode ");
      e.append(mode).append("), or the policy's eSwitchMode");
      plan.errors.push_back(std::move(e));
    }
    if (pf.num_vfs < itf.num_vfs) {
      plan.errors.push_back(who + " is externally managed and has " + std::to_string(pf.num_vfs) +
                            " VFs, fewer than the " + std::to_string(itf.num_vfs) +
                            " the policy expects; create them, or lower numVfs");
    }
    return true;
  }
  plan.configured.insert(pf.pci_address);
  if (itf.num_vfs > pf.total_vfs) {
    plan.errors.push_back(who + ": numVfs " + std::to_string(itf.num_vfs) +
                          " exceeds sriov_totalvfs " + std::to_string(pf.total_vfs) +
                          "; lower numVfs in the policy");
    return false;
  }
  if (itf.num_vfs == pf.num_vfs && !mode_change) return true;
  auto claims = claimsOn(pf, prepared);
  if (!claims.empty()) {
    plan.blocked.push_back(
        {pf.pci_address, claims,
         who + " has VFs in use; " +
             (mode_change ? "changing its eSwitch mode to " + mode
                          : "changing its VF count from " + std::to_string(pf.num_vfs) + " to " +
                                std::to_string(itf.num_vfs)) +
             " would destroy them"});
    return false;
  }
  if (pf.num_vfs > 0 && (itf.num_vfs > 0 || mode_change)) {
    plan.actions.push_back({Action::Kind::kSetNumVfs, pf.pci_address, pf.pci_address, "0", ""});
  }
  if (mode_change) {
    plan.actions.push_back(
        {Action::Kind::kSetEswitchMode, pf.pci_address, pf.pci_address, mode, ""});
  }
  if (itf.num_vfs == 0 && (pf.num_vfs == 0 || mode_change)) return false;
  plan.actions.push_back(
      {Action::Kind::kSetNumVfs, pf.pci_address, pf.pci_address, std::to_string(itf.num_vfs), ""});
  if (itf.mtu > pf.mtu && !pf.name.empty()) {
    plan.actions.push_back(
        {Action::Kind::kSetMtu, pf.pci_address, pf.name, std::to_string(itf.mtu), ""});
  }
  return false;
}

// What planning a VF needs of its PF.
struct VfContext {
  const api::InterfaceExt& pf;
  const std::string& who;
  const GuidAssigner* guids;
  const std::map<std::string, std::string>& vf_admin_macs;
};

// An InfiniBand VF's GUID when it is not the one the assigner gives, and the rebind its driver
// needs to read it (a VF on vfio-pci: the guest's driver reads it). Whether anything was planned.
bool planGuid(const VfContext& c, const api::VirtualFunction& vf, Plan& plan) {
  const api::InterfaceExt& pf = c.pf;
  if (c.guids == nullptr || pf.link_type != "IB" || vf.guid.empty() || pf.name.empty()) {
    return false;
  }
  auto guid = c.guids->guidFor(pf, vf.vf_id);
  if (!guid.ok()) {
    plan.errors.push_back(c.who + ": VF " + std::to_string(vf.vf_id) + ": " +
                          guid.status().message());
    return true;
  }
  if (vf.guid == guidText(*guid)) return false;
  plan.actions.push_back(
      {Action::Kind::kSetVfGuid, pf.pci_address, pf.name, guidText(*guid), "", vf.vf_id});
  if (vf.driver != "vfio-pci") {
    plan.actions.push_back(
        {Action::Kind::kBindDriver, pf.pci_address, vf.pci_address, "", vf.driver});
  }
  return true;
}

// One VF of a group: its driver, then (InfiniBand) its GUID, or its MTU and administrative MAC.
void planVf(const VfContext& c, const api::VfGroup& group, const api::VirtualFunction& vf,
            Plan& plan) {
  const api::InterfaceExt& pf = c.pf;
  bool want_vfio = group.device_type == "vfio-pci";
  bool is_vfio = vf.driver == "vfio-pci";
  if (want_vfio != is_vfio || vf.driver.empty()) {
    plan.actions.push_back({Action::Kind::kBindDriver, pf.pci_address, vf.pci_address,
                            want_vfio ? "vfio-pci" : "", vf.driver});
    return;
  }
  if (planGuid(c, vf, plan)) return;
  if (!want_vfio && group.mtu > 0 && !vf.name.empty() && vf.mtu != group.mtu) {
    plan.actions.push_back(
        {Action::Kind::kSetMtu, pf.pci_address, vf.name, std::to_string(group.mtu), ""});
  }
  // Its own MAC as its administrative one (Ethernet netdevice VFs whose netdev is here).
  auto admin = c.vf_admin_macs.find(vf.pci_address);
  if (!want_vfio && pf.link_type != "IB" && admin != c.vf_admin_macs.end() && !vf.mac.empty() &&
      vf.mac != "00:00:00:00:00:00" && admin->second != vf.mac && !pf.name.empty()) {
    plan.actions.push_back(
        {Action::Kind::kSetVfMac, pf.pci_address, pf.name, vf.mac, "", vf.vf_id});
  }
}

// The PF's MTU and link, then each of its VFs in a group and held by no claim.
void planVfs(const api::Interface& itf, const VfContext& c, const Topology& discovered,
             const PreparedVfs& prepared, Plan& plan) {
  const api::InterfaceExt& pf = c.pf;
  if (itf.mtu > pf.mtu && !pf.name.empty() && !itf.externally_managed) {
    plan.actions.push_back(
        {Action::Kind::kSetMtu, pf.pci_address, pf.name, std::to_string(itf.mtu), ""});
  }
  if (!pf.name.empty() && pf.link_admin_state == "down") {
    plan.actions.push_back({Action::Kind::kSetLinkUp, pf.pci_address, pf.name, "up", ""});
  }
  bool vfio_missing =
      !discovered.pci_drivers.empty() && discovered.pci_drivers.count("vfio-pci") == 0 &&
      std::any_of(itf.vf_groups.begin(), itf.vf_groups.end(),
                  [](const api::VfGroup& g) { return g.device_type == "vfio-pci"; });
  if (vfio_missing) {
    plan.errors.push_back(c.who +
                          ": its VF groups of deviceType vfio-pci need the vfio-pci driver, "
                          "which this node has not loaded; load it (modprobe vfio-pci, and "
                          "list it in /etc/modules-load.d): the agent loads no kernel modules");
  }
  for (const auto& vf : pf.vfs) {
    const api::VfGroup* group = itf.groupOf(vf.vf_id);
    if (group == nullptr || !vf.assigned.empty()) continue;
    if (prepared.count(vf.pci_address) != 0) {
      // Never changed under its pod; but one made again since it was prepared (a reboot) has no
      // GUID yet (or the all-ones one ib-sriov's DEL leaves), and without one no pod can use it:
      // giving it one, and rebinding its network driver (its netdev on the host) to read it,
      // takes nothing from anyone.
      bool no_guid = vf.guid == guidText(0) || vf.guid == guidText(~uint64_t{0});
      if (no_guid && !vf.name.empty()) planGuid(c, vf, plan);
      continue;
    }
    if (group->device_type == "vfio-pci" && vfio_missing) continue;
    planVf(c, *group, vf, plan);
  }
}

// PFs configured earlier that left the spec go back to 0 VFs (and legacy mode).
void planLeftSpec(const api::SriovNodeStateSpec& spec, const std::set<std::string>& record,
                  const std::map<std::string, const api::InterfaceExt*>& pfs,
                  const PreparedVfs& prepared, Plan& plan) {
  std::set<std::string> in_spec;
  for (const auto& itf : spec.interfaces) in_spec.insert(itf.pci_address);
  for (const auto& pci : record) {
    if (in_spec.count(pci) != 0) continue;
    auto it = pfs.find(pci);
    if (it == pfs.end()) continue;
    const api::InterfaceExt& pf = *it->second;
    bool switchdev = pf.eswitch_mode == "switchdev";
    if (pf.num_vfs == 0 && !switchdev) continue;
    auto claims = claimsOn(pf, prepared);
    if (!claims.empty()) {
      plan.configured.insert(pci);  // still ours until it can be reset
      plan.blocked.push_back({pci, claims,
                              api::describePf(pf) + " left the spec but has VFs in use; "
                                                    "resetting it would destroy them"});
      continue;
    }
    if (pf.num_vfs > 0) plan.actions.push_back({Action::Kind::kSetNumVfs, pci, pci, "0", ""});
    if (switchdev) plan.actions.push_back({Action::Kind::kSetEswitchMode, pci, pci, "legacy", ""});
  }
}

}  // namespace

// One walk over the spec's PFs that decides each change in the order it must be applied
// (eSwitch mode and VF count, then the PF's MTU and link, then per VF its driver, GUID, MTU and
// MAC), each guarded by what is in use, then the PFs that left the spec; the order is the
// contract with apply.cpp.
Plan planHost(const api::SriovNodeStateSpec& spec, const Topology& discovered,
              const std::set<std::string>& record, const PreparedVfs& prepared,
              const GuidAssigner* guids, const std::set<std::string>& awaiting_reboot,
              const std::map<std::string, std::string>& vf_admin_macs) {
  Plan plan;
  std::map<std::string, const api::InterfaceExt*> pfs;
  for (const auto& pf : discovered.pfs) pfs[pf.pci_address] = &pf;
  for (const auto& itf : spec.interfaces) {
    auto it = pfs.find(itf.pci_address);
    if (it == pfs.end()) {
      plan.errors.push_back("PF " + itf.pci_address +
                            (itf.name.empty() ? "" : " (" + itf.name + ")") +
                            " from the spec is not on this node");
      continue;
    }
    const api::InterfaceExt& pf = *it->second;
    if (awaiting_reboot.count(pf.pci_address) != 0) {
      plan.configured.insert(pf.pci_address);
      continue;
    }
    const std::string who = api::describePf(pf);
    if (!planVfCount(itf, pf, who, prepared, plan)) continue;
    planVfs(itf, {pf, who, guids, vf_admin_macs}, discovered, prepared, plan);
  }
  planLeftSpec(spec, record, pfs, prepared, plan);
  return plan;
}

namespace {

std::string nicOf(const std::string& pci) { return pci.substr(0, pci.rfind('.')); }

bool isMellanox(const api::InterfaceExt& pf) {
  return equalsIgnoreCase(pf.vendor, api::kMellanoxVendor);
}

bool linkDiffers(const api::Interface& itf, const api::InterfaceExt& pf) {
  return !itf.link_type.empty() && !pf.link_type.empty() &&
         !equalsIgnoreCase(itf.link_type, pf.link_type);
}

}  // namespace

std::map<std::string, std::string> firmwareToRead(const api::SriovNodeStateSpec& spec,
                                                  const Topology& discovered) {
  std::map<std::string, std::string> out;
  for (const auto& itf : spec.interfaces) {
    if (itf.externally_managed) continue;
    for (const auto& pf : discovered.pfs) {
      if (pf.pci_address != itf.pci_address || !isMellanox(pf)) continue;
      if (itf.num_vfs > pf.total_vfs || linkDiffers(itf, pf)) {
        out.emplace(nicOf(pf.pci_address), pf.pci_address);
      }
    }
  }
  return out;
}

FirmwarePlan planFirmware(const api::SriovNodeStateSpec& spec, const Topology& discovered,
                          const std::map<std::string, MlxFirmware>& firmware) {
  FirmwarePlan plan;
  for (const auto& [nic, fw] : firmware) {
    int64_t need = 0;
    std::vector<std::string> pfs;
    std::vector<std::string> reboot_for;  // "NUM_OF_VFS 8 -> 16"
    MlxChanges changes;
    std::string write_to;
    for (const auto& itf : spec.interfaces) {
      if (itf.externally_managed || nicOf(itf.pci_address) != nic) continue;
      const api::InterfaceExt* pf = nullptr;
      for (const auto& p : discovered.pfs) {
        if (p.pci_address == itf.pci_address) pf = &p;
      }
      if (pf == nullptr) continue;
      pfs.push_back(pf->pci_address);
      if (write_to.empty()) write_to = pf->pci_address;
      need = std::max(need, itf.num_vfs);
      if (!linkDiffers(itf, *pf)) continue;
      bool p1 = pf->pci_address.back() == '0';
      std::string key = p1 ? "LINK_TYPE_P1" : "LINK_TYPE_P2";
      const std::string& now = p1 ? fw.current.link_type_p1 : fw.current.link_type_p2;
      const std::string& next = p1 ? fw.next.link_type_p1 : fw.next.link_type_p2;
      std::string want = asciiUpper(itf.link_type);
      if (now.empty() || (now != "ETH" && now != "IB")) {
        plan.errors.push_back(
            api::describePf(*pf) + ": linkType " + itf.link_type + " is asked, the port is " +
            pf->link_type + "; network card " + nic +
            " does not support link type change (its firmware has " +
            (now.empty() ? "no " + key : std::string(key).append(" ").append(now)) + ")");
        continue;
      }
      if (next != want) changes[key] = want;
      if (now != want)
        reboot_for.push_back(std::string(key).append(" ").append(now).append(" -> ").append(want));
    }
    if (need > 0 && !fw.next.sriov_en) changes["SRIOV_EN"] = "True";
    if (need > fw.next.num_of_vfs) changes["NUM_OF_VFS"] = std::to_string(need);
    if (need > 0 && !fw.current.sriov_en) reboot_for.push_back("SRIOV_EN False -> True");
    if (need > fw.current.num_of_vfs) {
      reboot_for.push_back("NUM_OF_VFS " + std::to_string(fw.current.num_of_vfs) + " -> " +
                           std::to_string(need));
    }
    if (!changes.empty()) plan.changes[write_to] = std::move(changes);
    if (reboot_for.empty()) continue;
    plan.awaiting_reboot.insert(pfs.begin(), pfs.end());
    plan.reboot_reasons.push_back("NIC " + nic + " (" + join(pfs, ", ") + "): firmware " +
                                  join(reboot_for, ", ") + " takes effect after a reboot");
  }
  return plan;
}

}  // namespace sriovdra::host
