#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection with
// controller-runtime's defaults (lease 15 s, renew deadline 10 s, retry period 2 s, jitter 1.2).
// Another holder's lease is judged valid from the *local* time at which its record was last seen
// to change, plus leaseDurationSeconds; the remote renewTime is never compared with our clock.
// Every write carries the resourceVersion, so racing candidates get 409 and retry. A leader
// that cannot renew within the renew deadline stops leading (on_stopped_leading), and it knows
// in time: each request of a renewal is bounded by what is left of the renew deadline, so a hung
// API server cannot keep it leading past the deadline (the request timeout is longer than the
// lease). A graceful stop releases the lease (holder "", duration 1 s) so a standby takes over at
// once. A campaign attempt is bounded by the lease duration.
// Metrics: leader_election_master_status{name}, leader_election_slowpath_total{name}.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include "base/clock.h"
#include "kube/client.h"

namespace sriovdra::kube {

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  std::string identity;  // unique per candidate: pod name + random suffix
  std::chrono::milliseconds lease_duration{std::chrono::seconds(15)};
  std::chrono::milliseconds renew_deadline{std::chrono::seconds(10)};
  std::chrono::milliseconds retry_period{std::chrono::seconds(2)};
  double jitter = 1.2;
  bool release_on_cancel = true;
};

struct LeaderCallbacks {
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& leader)> on_new_leader;
};

class LeaderElector {
 public:
  LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config,
                LeaderCallbacks callbacks, Clock& clock = realClock());

  // Campaigns, leads and renews until stop is requested or leadership is lost; returns then.
  // on_started_leading runs on this thread and must return promptly (start work elsewhere).
  void run(const std::stop_token& stop);

  bool isLeader() const { return leading_.load(); }
  std::string leader() const;
  // For a liveness probe: fails when we lead but have not renewed within lease duration plus
  // the tolerance (the process is wedged).
  Status check(std::chrono::milliseconds tolerance = std::chrono::seconds(20)) const;

 private:
  struct Record {
    std::string holder;
    int64_t lease_duration_seconds = 0;
    std::string acquire_time;
    std::string renew_time;
    int64_t transitions = 0;
    bool operator==(const Record&) const = default;
  };
  // `budget`: the longest any of its requests may take.
  bool tryAcquireOrRenew(std::chrono::milliseconds budget);
  void release();
  static Record decodeRecord(const json::Value& lease);
  static void encodeRecord(const Record& r, json::Value& lease, json::Allocator& a);
  std::chrono::milliseconds jittered(std::chrono::milliseconds d) const;
  void setLeading(bool leading);

  std::shared_ptr<Client> client_;
  const LeaderElectionConfig config_;
  LeaderCallbacks callbacks_;
  Clock& clock_;
  std::atomic<bool> leading_{false};
  mutable std::mutex mu_;
  std::optional<Record> observed_;
  Clock::Steady::time_point observed_time_{};
  json::Document observed_lease_;  // the last lease object seen, for writes
  Clock::Steady::time_point last_renew_{};
  std::string reported_leader_;
};

}  // namespace sriovdra::kube
