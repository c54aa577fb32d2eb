#pragma once
// The floors of the scale benches (figures.h): the product's writes issued by the bench itself
// in a tight loop, and the timings of the product's own writes as the API server's audit log
// recorded them (request received, response complete), so both sides are measured by the same
// clock and neither includes the bench's polling.
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
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

// One round of a figure measured in turns: ours, then the floor, on the same server.
struct Round {
  double ours = 0;
  double floor = 0;
};
// The round whose ours/floor is the median (of an even count, the higher of the middle two): on
// a shared 2-core machine one round in four or five is slowed by the API server's own work (its
// garbage collector, etcd compaction) on one side only, which a mean of the times passes on.
Round medianRound(std::vector<Round> rounds);
// "1.21, 0.99, 1.32" (each round's ours/floor, in order).
std::string roundRatios(const std::vector<Round>& rounds);

// How many writers the server rewards: `round(writers, i)` times round i with counts[i] writers;
// the answer is the fewest whose time is within 5 % of the fastest (more only cost the writer
// memory and the server queueing), with the times as the report prints them ("1 writers 1.52 s,
// 2 writers 1.32 s").
struct WriterSweep {
  int writers = 0;
  std::string text;
};
WriterSweep sweepWriters(const std::vector<int>& counts,
                         const std::function<double(int writers, size_t round)>& round);

// Issues every apply from `concurrency` threads, which take them in list order, one request at a
// time each, reading each answer only up to its metadata; returns the seconds from the first
// request to the last answer. A failed write ends the bench with its message: a floor that
// includes errors measures nothing.
double timeApplies(kube::Client& client, const std::vector<Apply>& writes, int concurrency);

// The cheapest writes of objects that one client alone writes: each is created the first time,
// then replaced (an update) under the resourceVersion that its own last write was answered
// with, so it never reads them back; answers are metadata only. With a subresource ("status")
// every write is an update, the first under the version given to know(). Thread-safe.
class Replacer {
 public:
  Replacer(kube::Client& client, const kube::ResourceType& resource, std::string field_manager,
           std::string subresource = "")
      : client_(client),
        resource_(resource),
        field_manager_(std::move(field_manager)),
        subresource_(std::move(subresource)) {}
  // Writes every object (by its metadata.name and metadata.namespace) from `concurrency` threads
  // as timeApplies does; returns the seconds from the first request to the last answer.
  double time(std::vector<json::Document> objects, int concurrency);
  // The object `key` (kube::objectKey) is at `resource_version` (someone else wrote it).
  void know(const std::string& key, std::string resource_version);

 private:
  kube::Client& client_;
  const kube::ResourceType& resource_;
  const std::string field_manager_;
  const std::string subresource_;
  std::mutex mu_;
  std::map<std::string, std::string> resource_versions_;  // by namespace/name; guarded by mu_
};

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

// The API server's audit log as it grows: poll() reads only what was appended since the last
// poll (ControlPlane::auditEventsFrom), so a bench can wait on it without reading the whole log
// again, keeping its own cost off the machine that both sides of a figure share.
class AuditLog {
 public:
  explicit AuditLog(const testing::ControlPlane& cp) : cp_(cp) {}
  // Every request recorded so far.
  const std::vector<testing::AuditEvent>& poll();

 private:
  const testing::ControlPlane& cp_;
  size_t offset_ = 0;
  std::vector<testing::AuditEvent> events_;
};

// The same writes counted by resource (Lease renewals aside): "sriovnodestates 1000, events 16".
std::string writesByResource(const std::vector<testing::AuditEvent>& events,
                             const std::string& user, WallTime since);
// The reads of `user` that ended at or after `since` (watches: those that ended), counted by
// verb and resource: "list sriovnodestates 2, watch resourceslices 1"; "none" when there were none.
std::string readsByResource(const std::vector<testing::AuditEvent>& events, const std::string& user,
                            WallTime since);

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
