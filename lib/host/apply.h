#pragma once
// Carries out one planned action through the Sysfs or the Netlink: the only code that changes
// the host.
#include "host/netlink.h"
#include "host/plan.h"
#include "host/sysfs.h"

namespace sriovdra::host {

// Binds the VF to `driver` ("" = its default driver): unbind from `from` (the driver bound now,
// "" = none), set driver_override (cleared for the default driver), then drivers_probe. Errors
// keep errno (EBUSY is worth a retry).
Status bindDriver(Sysfs& sysfs, const std::string& vf, const std::string& driver,
                  const std::string& from);

// kSetNumVfs, kSetMtu and kBindDriver through sysfs, kSetEswitchMode through devlink, kSetVfGuid
// through rtnetlink (the GUID as node and port GUID).
Status applyAction(Sysfs& sysfs, Netlink& netlink, const Action& action);

}  // namespace sriovdra::host
