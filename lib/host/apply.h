#pragma once
// Carries out one planned action through the Sysfs: the only code that writes to sysfs.
#include "host/plan.h"
#include "host/sysfs.h"

namespace sriovdra::host {

// Binding: unbind from the current driver, set driver_override (cleared for the default
// driver), then drivers_probe. Errors keep errno (EBUSY is worth a retry).
Status applyAction(Sysfs& sysfs, const Action& action);

}  // namespace sriovdra::host
