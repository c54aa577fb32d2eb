#pragma once
// The floors of the scale benches (figures.h): the product's writes issued by the bench itself
// in a tight loop, and the timings of the product's own writes as the API server's audit log
// recorded them (request received, response complete), so both sides are measured by the same
// clock and neither includes the bench's polling.
#include <functional>
#include <string>
#include <vector>

#include "base/time.h"
#include "kube/client.h"
#include "support/control_plane.h"

namespace sriovdra::bench {

// One server-side apply (force) as a component issues it.
struct Apply {
  const kube::ResourceType* resource = nullptr;
  std::string namespace_;
  std::string subresource;  // "" or "status"
  json::Document doc;
  std::string field_manager;
};

// Issues every apply from `concurrency` threads, which take them in list order, one request at a
// time each, reading each answer only up to its metadata; returns the seconds from the first
// request to the last answer. A failed write ends the bench with its message: a floor that
// includes errors measures nothing.
double timeApplies(kube::Client& client, const std::vector<Apply>& writes, int concurrency);

// Calls fn(i) for i in [0, n) from `threads` threads.
void parallel(size_t n, int threads, const std::function<void(size_t)>& fn);

// The writes of `user` (of `resource` when not empty, Lease renewals never) that the API server
// received at or after `since`: how many, and when the first arrived and the last was answered.
struct WriteSpan {
  int count = 0;
  WallTime first_received;
  WallTime last_completed;
  double seconds() const;                 // first received to last completed
  double secondsSince(WallTime t) const;  // t to last completed
};
WriteSpan writesOf(const std::vector<testing::AuditEvent>& events, const std::string& user,
                   const std::string& resource, WallTime since);

// The same writes counted by resource (Lease renewals aside): "sriovnodestates 1000, events 16".
std::string writesByResource(const std::vector<testing::AuditEvent>& events,
                             const std::string& user, WallTime since);

// The compact JSON size of every object a list returns (all pages), as the API server sends it.
size_t listJsonBytes(kube::Client& client, const kube::ResourceType& rt, const std::string& ns,
                     const kube::ListOptions& options = {});

// User + system CPU seconds a process has used so far (/proc/<pid>/stat), 0 when unreadable.
double cpuSeconds(pid_t pid);

// CPU seconds a step used: the control plane's, the component's (pid 0: none), the bench's.
// Cpu b = Cpu::now(cp, pid); ...; (Cpu::now(cp, pid) - b).describe("operator").
struct Cpu {
  double apiserver = 0;
  double etcd = 0;
  double component = 0;
  double bench = 0;
  static Cpu now(const testing::ControlPlane& cp, pid_t component);
  Cpu operator-(const Cpu& o) const;
  // "CPU: kube-apiserver 24.2 s, etcd 0.7 s, <component> 1.7 s, bench 0.3 s"
  std::string describe(const std::string& component_name) const;
};

// etcd's database size in use (etcd_mvcc_db_total_size_in_use_in_bytes), 0 when unreadable.
double etcdBytesInUse(const testing::ControlPlane& cp);

// Exits with the message when `st` is not OK: a bench has no use for a half-done setup.
void mustBeOk(const Status& st, const std::string& doing);

}  // namespace sriovdra::bench
