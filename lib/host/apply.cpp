#include "host/apply.h"

#include "base/fault_point.h"

namespace sriovdra::host {

Status bindDriver(Sysfs& fs, const std::string& vf, const std::string& driver,
                  const std::string& from) {
  if (!from.empty()) {
    Status st = fs.write("sys/bus/pci/drivers/" + from + "/unbind", vf);
    if (!st.isOk() && st.sysErrno() != ENODEV) return st;
  }
  SDRA_RETURN_IF_ERROR(
      fs.write("sys/bus/pci/devices/" + vf + "/driver_override", driver.empty() ? "\n" : driver));
  return fs.write("sys/bus/pci/drivers_probe", vf);
}

Status applyAction(Sysfs& fs, Netlink& nl, const Action& a) {
  switch (a.kind) {
    case Action::Kind::kSetNumVfs: {
      SDRA_RETURN_IF_ERROR(fs.write("sys/bus/pci/devices/" + a.target + "/sriov_numvfs", a.value));
      if (a.value == "0") fault::point("vfs-removed");
      return Status::ok();
    }
    case Action::Kind::kSetMtu:
      return fs.write("sys/class/net/" + a.target + "/mtu", a.value);
    case Action::Kind::kBindDriver:
      return bindDriver(fs, a.target, a.value, a.from);
    case Action::Kind::kSetEswitchMode:
      return nl.setEswitchMode(a.target, a.value);
    case Action::Kind::kSetVfGuid: {
      auto guid = parseGuid(a.value);
      if (!guid.ok()) return guid.status();
      return nl.setVfGuids(a.target, static_cast<int32_t>(a.vf_id), *guid, *guid);
    }
    case Action::Kind::kSetLinkUp:
      return nl.setUp(a.target, true);
    case Action::Kind::kSetVfMac:
      return nl.setVf(
          a.target,
          {.kind = VfSetting::Kind::kMac, .vf = static_cast<int32_t>(a.vf_id), .mac = a.value});
  }
  return Status(Code::kInternal, "unknown action");
}

}  // namespace sriovdra::host
