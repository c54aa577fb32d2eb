#include "support/audit.h"

#include "support/eventually.h"

namespace sriovdra::testing {

int writesBy(const ControlPlane& cp, const std::string& user, const std::string& ns,
             bool count_events) {
  int n = 0;
  for (const auto& e : cp.auditEvents()) {
    if (e.user != user || !e.isWrite() || e.resource == "leases") continue;
    if (!count_events && e.resource == "events") continue;
    if (e.namespace_ == ns || e.namespace_.empty()) ++n;
  }
  return n;
}

int leaseWritesBy(const ControlPlane& cp, const std::string& user) {
  int n = 0;
  for (const auto& e : cp.auditEvents()) {
    n += e.user == user && e.isWrite() && e.resource == "leases" ? 1 : 0;
  }
  return n;
}

void awaitLeaseRenewals(const ControlPlane& cp, const std::string& user, int n) {
  int start = leaseWritesBy(cp, user);
  eventually(
      [&] { return leaseWritesBy(cp, user) - start >= n; }, std::chrono::seconds(60),
      [&] { return user + " renewed its Lease fewer than " + std::to_string(n) + " times"; });
}

}  // namespace sriovdra::testing
