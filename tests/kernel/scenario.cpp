#include "kernel/scenario.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "api/codec.h"
#include "api/names.h"
#include "base/json.h"
#include "dra/slices.h"
#include "host/apply.h"
#include "host/discovery.h"
#include "host/plan.h"

namespace sriovdra::kernel_test {

std::string resultOf(const Status& st) {
  if (st.isOk()) return "ok";
  if (st.sysErrno() != 0) {
    const char* name = strerrorname_np(st.sysErrno());
    return name != nullptr ? name : "errno " + std::to_string(st.sysErrno());
  }
  return std::string(codeName(st.code()));
}

namespace {

template <typename T>
std::string resultOf(const Result<T>& r) {
  return r.ok() ? "ok" : kernel_test::resultOf(r.status());
}

const api::InterfaceExt* findPf(const host::Topology& t, const std::string& bdf) {
  for (const auto& pf : t.pfs) {
    if (pf.pci_address == bdf) return &pf;
  }
  return nullptr;
}

std::vector<std::string> stateOf(const host::Sysfs& sysfs, const host::Netlink& netlink,
                                 const std::string& bdf) {
  auto t = host::discover(sysfs, netlink);
  if (!t.ok()) return {"discovery failed: " + t.status().toString()};
  const api::InterfaceExt* pf = findPf(*t, bdf);
  if (pf == nullptr) return {"PF " + bdf + " not discovered"};
  std::vector<std::string> out;
  out.push_back("PF " + pf->pci_address + " " + pf->vendor + ":" + pf->device_id +
                " driver=" + pf->driver + " netdev=" + pf->name +
                " mtu=" + std::to_string(pf->mtu) + " link=" + pf->link_type +
                " eswitch=" + pf->eswitch_mode + " numVfs=" + std::to_string(pf->num_vfs) + "/" +
                std::to_string(pf->total_vfs) + " vfDevice=" + pf->vf_device_id);
  for (const auto& vf : pf->vfs) {
    std::string line = "VF " + std::to_string(vf.vf_id) + " " + vf.pci_address + " " + vf.vendor +
                       ":" + vf.device_id + " driver=" + (vf.driver.empty() ? "none" : vf.driver);
    line += vf.name.empty() ? " no netdev" : " netdev mtu=" + std::to_string(vf.mtu);
    if (!vf.assigned.empty()) line += " assigned=" + vf.assigned;
    line += " override=" + sysfs.read("sys/bus/pci/devices/" + vf.pci_address + "/driver_override")
                               .valueOr("(unreadable)");
    if (vf.driver == "vfio-pci") {
      auto access = host::readVfAccess(sysfs, vf.pci_address);
      bool node = access.ok() && !access->iommu_group.empty() &&
                  sysfs.exists("dev/vfio/" + access->iommu_group);
      line += node ? " /dev/vfio/<group>" : " no /dev/vfio node";
    }
    out.push_back(std::move(line));
  }
  // VFIO group nodes (the container node /dev/vfio/vfio aside): one per VF on vfio-pci.
  size_t groups = 0;
  for (const auto& e : sysfs.list("dev/vfio").valueOr({})) groups += e == "vfio" ? 0 : 1;
  out.push_back("VFIO group nodes: " + std::to_string(groups));
  for (const auto& w : t->warnings) out.push_back("warning: " + w);
  return out;
}

}  // namespace

// Long on purpose: one scenario, step after step, each with the state it leaves.
// NOLINTNEXTLINE(readability-function-size)
std::vector<Step> runScenario(host::Sysfs& sysfs, host::Netlink& netlink,
                              const NetdevMover& move_netdev) {
  auto start = host::discover(sysfs, netlink);
  if (!start.ok() || start->pfs.empty()) {
    return {{"discover", start.ok() ? "no SR-IOV PF" : resultOf(start.status()), {}}};
  }
  const api::InterfaceExt pf = start->pfs.front();
  const std::string& bdf = pf.pci_address;
  std::vector<Step> steps;
  auto step = [&](std::string name, const std::string& result) {
    steps.push_back({std::move(name), result, stateOf(sysfs, netlink, bdf)});
  };
  using Kind = host::Action::Kind;
  auto apply = [&](Kind kind, const std::string& target, const std::string& value,
                   const std::string& from = "") {
    return host::applyAction(sysfs, netlink, {kind, bdf, target, value, from});
  };
  auto vf = [&](int index) -> std::string {
    auto t = host::discover(sysfs, netlink);
    const api::InterfaceExt* p = t.ok() ? findPf(*t, bdf) : nullptr;
    return p != nullptr && static_cast<size_t>(index) < p->vfs.size() ? p->vfs[index].pci_address
                                                                      : "";
  };

  step("discover", "ok");
  step("set sriov_numvfs 4", resultOf(apply(Kind::kSetNumVfs, bdf, "4")));
  step("write sriov_numvfs 2 over 4",
       resultOf(sysfs.write("sys/bus/pci/devices/" + bdf + "/sriov_numvfs", "2")));
  step("write sriov_numvfs 8 over 4 (more than sriov_totalvfs)",
       resultOf(sysfs.write("sys/bus/pci/devices/" + bdf + "/sriov_numvfs", "8")));
  // What the agent does for a spec of 2 VFs on a PF with 4: its plan, action by action.
  auto now = host::discover(sysfs, netlink);
  if (now.ok()) {
    api::Interface itf{bdf, "", 2, 0, "", "", false, {{"r", "netdevice", "0-1", "p", 0, false}}};
    auto plan = host::planHost({{itf}, {}}, *now, {}, {});
    for (const auto& e : plan.errors) step("plan error: " + e, "error");
    for (const auto& a : plan.actions) {
      step("plan: " + a.describe(), resultOf(host::applyAction(sysfs, netlink, a)));
    }
  }
  std::string vf0 = vf(0);
  std::string vf0_driver;
  if (auto access = host::readVfAccess(sysfs, vf0); access.ok()) vf0_driver = access->driver;
  step("bind VF 0 to vfio-pci", resultOf(apply(Kind::kBindDriver, vf0, "vfio-pci", vf0_driver)));
  step("bind VF 0 to its default driver", resultOf(apply(Kind::kBindDriver, vf0, "", "vfio-pci")));
  step("PF mtu 9000", resultOf(apply(Kind::kSetMtu, pf.name, "9000")));
  std::string vf1_netdev;
  if (auto access = host::readVfAccess(sysfs, vf(1)); access.ok()) vf1_netdev = access->netdev;
  step("VF 1 mtu 9000", resultOf(apply(Kind::kSetMtu, vf1_netdev, "9000")));
  // A pod's CNI plugin takes VF 1's netdev into the pod's namespace: from here it is not seen,
  // and discovery marks the VF assigned; then the plugin gives it back.
  step("VF 1's netdev into a pod's network namespace", resultOf(move_netdev(vf1_netdev, true)));
  step("VF 1's netdev back from the pod's namespace", resultOf(move_netdev(vf1_netdev, false)));
  step("PF mtu 70000", resultOf(apply(Kind::kSetMtu, pf.name, "70000")));
  step("devlink eswitch get", resultOf(netlink.eswitchMode(bdf)));
  step("devlink eswitch set switchdev", resultOf(netlink.setEswitchMode(bdf, "switchdev")));
  // VF GUIDs: an Ethernet PF's driver has none (igb has no ndo_get/set_vf_guid): its VF
  // information carries no GUIDs, and setting one is EOPNOTSUPP once the kernel has parsed the
  // request (a malformed one would be EINVAL).
  auto guids = netlink.vfGuids(pf.name);
  step("rtnetlink VF GUIDs of the PF",
       guids.ok() ? std::to_string(guids->size()) + " VF(s) with GUIDs" : resultOf(guids.status()));
  step("rtnetlink set the GUIDs of VF 0",
       resultOf(netlink.setVfGuids(pf.name, 0, 0x0200000000000001, 0x0200000000000001)));
  // VF counters: the request with statistics lists every VF; igb reports no per-VF counters
  // (no ndo_get_vf_stats), so the kernel sends them zero, as the simulation starts them.
  auto counters = netlink.vfStats(pf.name);
  auto zero = [](const host::VfStats& s) { return s == host::VfStats{.vf = s.vf}; };
  step("rtnetlink VF counters of the PF",
       counters.ok() ? std::to_string(counters->size()) + " VF(s), " +
                           (std::all_of(counters->begin(), counters->end(), zero) ? "all zero"
                                                                                  : "some counting")
                     : resultOf(counters.status()));
  // VFs go away with one of them still on vfio-pci (as when a VM-using pod left it there).
  step("bind VF 0 to vfio-pci again",
       resultOf(apply(Kind::kBindDriver, vf0, "vfio-pci", vf0_driver)));
  step("set sriov_numvfs 0", resultOf(apply(Kind::kSetNumVfs, bdf, "0")));
  return steps;
}

std::vector<std::string> placements(const host::Sysfs& sysfs, const host::Netlink& netlink) {
  auto t = host::discover(sysfs, netlink);
  if (!t.ok()) return {"discovery failed: " + t.status().toString()};
  std::vector<api::Device> devices;
  for (const auto& pf : t->pfs) {
    for (const auto& vf : pf.vfs)
      devices.push_back({api::deviceName(vf.pci_address), vf.pci_address, {}});
  }
  auto set = dra::buildSlices("vm", devices, t->pfs, {});
  std::vector<std::string> out;
  for (const auto& r : set.refused) out.push_back("refused: " + r);
  for (const auto& slice : set.slices) {
    for (const auto& d : slice.spec.devices) {
      auto attr = [&](std::string_view name) {
        auto it = d.attributes.find(std::string(name));
        return it == d.attributes.end() ? std::string("(none)") : it->second.toString();
      };
      // The VF's own place in sysfs, beside what the agent publishes (its PF's).
      std::string bdf = attr(api::attr::kPciBusId);
      auto placed = host::placement(sysfs, bdf);
      auto numa = sysfs.read("sys/bus/pci/devices/" + bdf + "/numa_node");
      out.push_back(d.name + " pcieRoot=" + attr(api::attr::kPcieRoot) + " numaNode=" +
                    attr(api::attr::kNumaNode) + " (sysfs: " + (placed.ok() ? placed->root : "?") +
                    " numa_node " + (numa.ok() ? *numa : "?") + ")");
    }
  }
  return out;
}

std::string encodeReport(const Report& report) {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  auto encode = [&](const std::vector<Step>& list) {
    json::Value steps(rapidjson::kArrayType);
    for (const auto& s : list) {
      json::Value o(rapidjson::kObjectType);
      api::Writer(o, a)
          .strAlways("name", s.name)
          .strAlways("result", s.result)
          .strings("state", s.state);
      steps.PushBack(o, a);
    }
    return steps;
  };
  api::Writer(doc, a)
      .value("steps", encode(report.steps))
      .strings("placements", report.placements)
      .value("cniSteps", encode(report.cni_steps))
      .value("rdmaSteps", encode(report.rdma_steps));
  return json::dump(doc);
}

Result<Report> decodeReport(std::string_view json_text) {
  auto doc = json::parse(json_text);
  if (!doc.ok()) return doc.status();
  api::Reader root(&*doc, "");
  Report r;
  for (const auto& s : root.array("steps")) {
    r.steps.push_back({s.str("name"), s.str("result"), s.strings("state")});
  }
  r.placements = root.strings("placements");
  for (const auto& s : root.array("cniSteps")) {
    r.cni_steps.push_back({s.str("name"), s.str("result"), s.strings("state")});
  }
  for (const auto& s : root.array("rdmaSteps")) {
    r.rdma_steps.push_back({s.str("name"), s.str("result"), s.strings("state")});
  }
  if (!root.status().isOk()) return root.status();
  return r;
}

}  // namespace sriovdra::kernel_test
