#pragma once
// Counting what a component wrote, from the control plane's audit log (ControlPlaneOptions::
// audit_log), and the heartbeat of a leader-elected component: its Lease renewals, which mark
// the passing of its own time, so a test can await "n renewals" instead of sleeping to show
// that nothing else was written meanwhile.
#include <string>

#include "support/control_plane.h"

namespace sriovdra::testing {

// Writes by `user` in namespace `ns` (or cluster-scoped), Lease renewals excluded, Events
// counted unless count_events is false.
int writesBy(const ControlPlane& cp, const std::string& user, const std::string& ns,
             bool count_events = true);
int leaseWritesBy(const ControlPlane& cp, const std::string& user);
// Waits until `user` has renewed its Lease `n` more times (fails the test after 60 s).
void awaitLeaseRenewals(const ControlPlane& cp, const std::string& user, int n);

}  // namespace sriovdra::testing
