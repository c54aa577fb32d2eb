#pragma once
// The fault points' handler of the programs on the simulated kernel (base/fault_point.h).
// SIMULATION, for the tests only: never linked into the product's daemons.
//
// A test arms point P by creating the file DIR/P. The first process of the node to reach P takes
// it (renames DIR/P to DIR/P.reached: one process, once), logs that it stopped, and waits until
// DIR/P.release exists, which it then removes. Meanwhile the test kills whatever the matrix cell
// names (this process too); a process that survives goes on where it stopped once released.
// Points that are not armed cost one failed rename(2).
#include <string>

namespace sriovdra::host {

// DIR is <fixture root>/faults for the simulated agent and CNI plugins. Call once, before threads
// start.
void stopAtArmedFaultPoints(const std::string& dir);

}  // namespace sriovdra::host
