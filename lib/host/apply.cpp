#include "host/apply.h"

namespace sriovdra::host {

Status applyAction(Sysfs& fs, const Action& a) {
  switch (a.kind) {
    case Action::Kind::kSetNumVfs:
      return fs.write("sys/bus/pci/devices/" + a.target + "/sriov_numvfs", a.value);
    case Action::Kind::kSetMtu:
      return fs.write("sys/class/net/" + a.target + "/mtu", a.value);
    case Action::Kind::kBindDriver: {
      std::string dev = "sys/bus/pci/devices/" + a.target;
      if (!a.from.empty()) {
        Status st = fs.write("sys/bus/pci/drivers/" + a.from + "/unbind", a.target);
        if (!st.isOk() && st.sysErrno() != ENODEV) return st;
      }
      SDRA_RETURN_IF_ERROR(fs.write(dev + "/driver_override", a.value.empty() ? "\n" : a.value));
      return fs.write("sys/bus/pci/drivers_probe", a.target);
    }
  }
  return Status(Code::kInternal, "unknown action");
}

}  // namespace sriovdra::host
