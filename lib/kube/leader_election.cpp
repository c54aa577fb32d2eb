#include "kube/leader_election.h"

#include <algorithm>
#include <condition_variable>
#include <random>

#include "base/log.h"
#include "base/time.h"
#include "kube/metrics.h"

namespace sriovdra::kube {
namespace {

bool sleepFor(const std::stop_token& stop, std::chrono::milliseconds d) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait_for(lock, stop, d, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace

LeaderElector::LeaderElector(std::shared_ptr<Client> client, LeaderElectionConfig config,
                             LeaderCallbacks callbacks, Clock& clock)
    : client_(std::move(client)),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      clock_(clock) {
  SDRA_CHECK(config_.lease_duration > config_.renew_deadline);
  SDRA_CHECK(
      config_.renew_deadline.count() >
      static_cast<int64_t>(config_.jitter * static_cast<double>(config_.retry_period.count())));
  metrics::leaderElectionMasterStatus().Add({{"name", config_.lease_name}}).Set(0);
}

std::chrono::milliseconds LeaderElector::jittered(std::chrono::milliseconds d) const {
  thread_local std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> dist(0.0, config_.jitter);
  return d + std::chrono::milliseconds(
                 static_cast<int64_t>(static_cast<double>(d.count()) * dist(rng)));
}

std::string LeaderElector::leader() const {
  std::lock_guard lock(mu_);
  return observed_ ? observed_->holder : "";
}

Status LeaderElector::check(std::chrono::milliseconds tolerance) const {
  if (!leading_) return Status::ok();
  std::lock_guard lock(mu_);
  auto since = clock_.now() - last_renew_;
  if (since > config_.lease_duration + tolerance) {
    return Status(
        Code::kUnavailable,
        "leader election: the lease " + config_.lease_namespace + "/" + config_.lease_name +
            " has not been renewed for " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(since).count()) + " s");
  }
  return Status::ok();
}

void LeaderElector::setLeading(bool leading) {
  leading_ = leading;
  metrics::leaderElectionMasterStatus().Add({{"name", config_.lease_name}}).Set(leading ? 1 : 0);
}

LeaderElector::Record LeaderElector::decodeRecord(const json::Value& lease) {
  Record r;
  const json::Value* spec = json::objectMember(lease, "spec");
  if (spec == nullptr) return r;
  r.holder = json::stringOr(*spec, "holderIdentity");
  r.lease_duration_seconds = json::intOr(*spec, "leaseDurationSeconds", 0);
  r.acquire_time = json::stringOr(*spec, "acquireTime");
  r.renew_time = json::stringOr(*spec, "renewTime");
  r.transitions = json::intOr(*spec, "leaseTransitions", 0);
  return r;
}

void LeaderElector::encodeRecord(const Record& r, json::Value& lease, json::Allocator& a) {
  json::Value& spec = json::ensureObject(lease, "spec", a);
  json::setString(spec, "holderIdentity", r.holder, a);
  json::set(spec, "leaseDurationSeconds", json::Value(r.lease_duration_seconds), a);
  json::setString(spec, "acquireTime", r.acquire_time, a);
  json::setString(spec, "renewTime", r.renew_time, a);
  json::set(spec, "leaseTransitions", json::Value(r.transitions), a);
}

bool LeaderElector::tryAcquireOrRenew(std::chrono::milliseconds budget) {
  // One deadline for the whole attempt (a read and a write).
  const auto until = clock_.now() + budget;
  auto left = [&]() -> std::optional<std::chrono::milliseconds> {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_.now()));
  };
  std::string now = formatRfc3339Micro(clock_.wallNow());
  Record desired{config_.identity,
                 std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count(),
                 now, now, 0};
  auto current =
      client_->get(resources::kLeases, config_.lease_namespace, config_.lease_name, {}, left());
  if (!current.ok() && current.status().code() == Code::kNotFound) {
    json::Document lease =
        newObject(resources::kLeases, config_.lease_namespace, config_.lease_name);
    auto& a = lease.GetAllocator();
    encodeRecord(desired, lease, a);
    auto created =
        client_->create(resources::kLeases, config_.lease_namespace, lease, {.timeout = left()});
    if (!created.ok()) {
      SDRA_VLOG(1) << "leader election: creating lease: " << created.status().toString();
      return false;
    }
    std::lock_guard lock(mu_);
    observed_ = desired;
    observed_time_ = clock_.now();
    observed_lease_ = std::move(*created);
    return true;
  }
  if (!current.ok()) {
    SDRA_LOG_WARN << "leader election: reading lease " << config_.lease_namespace << "/"
                  << config_.lease_name << ": " << current.status().toString();
    return false;
  }
  Record old = decodeRecord(*current);
  {
    std::lock_guard lock(mu_);
    if (!observed_ || !(*observed_ == old)) {
      observed_ = old;
      observed_time_ = clock_.now();
    }
    bool held_by_other = !old.holder.empty() && old.holder != config_.identity;
    auto valid_for = std::chrono::seconds(old.lease_duration_seconds);
    if (held_by_other && observed_time_ + valid_for > clock_.now()) return false;
  }
  if (old.holder == config_.identity) {
    desired.acquire_time = old.acquire_time;
    desired.transitions = old.transitions;
  } else {
    desired.transitions = old.transitions + 1;
    metrics::leaderElectionSlowpath().Add({{"name", config_.lease_name}}).Increment();
  }
  encodeRecord(desired, *current, current->GetAllocator());
  auto updated =
      client_->update(resources::kLeases, config_.lease_namespace, *current, {.timeout = left()});
  if (!updated.ok()) {
    SDRA_VLOG(1) << "leader election: updating lease: " << updated.status().toString();
    return false;
  }
  std::lock_guard lock(mu_);
  observed_ = desired;
  observed_time_ = clock_.now();
  observed_lease_ = std::move(*updated);
  return true;
}

void LeaderElector::release() {
  for (int attempt = 0; attempt < 5; ++attempt) {
    json::Document lease;
    int64_t transitions = 0;
    {
      std::lock_guard lock(mu_);
      if (!observed_ || observed_->holder != config_.identity) return;
      lease.CopyFrom(observed_lease_, lease.GetAllocator());
      transitions = observed_->transitions;
    }
    std::string now = formatRfc3339Micro(clock_.wallNow());
    Record released{"", 1, now, now, transitions};
    encodeRecord(released, lease, lease.GetAllocator());
    auto updated = client_->update(resources::kLeases, config_.lease_namespace, lease);
    if (updated.ok()) {
      std::lock_guard lock(mu_);
      observed_ = released;
      observed_time_ = clock_.now();
      SDRA_LOG_INFO << "leader election: released lease " << config_.lease_namespace << "/"
                    << config_.lease_name;
      return;
    }
    if (updated.status().code() != Code::kConflict) {
      SDRA_LOG_WARN << "leader election: releasing the lease: " << updated.status().toString();
      return;
    }
    // Someone else wrote the lease: re-read it to see whether it is still ours.
    auto current = client_->get(resources::kLeases, config_.lease_namespace, config_.lease_name);
    if (!current.ok()) return;
    std::lock_guard lock(mu_);
    observed_ = decodeRecord(*current);
    observed_lease_ = std::move(*current);
  }
}

void LeaderElector::run(const std::stop_token& stop) {
  const std::string lease = config_.lease_namespace + "/" + config_.lease_name;
  SDRA_LOG_INFO << "leader election: " << config_.identity << " campaigning for lease " << lease;
  // Acquire.
  for (;;) {
    if (stop.stop_requested()) return;
    bool acquired = tryAcquireOrRenew(config_.lease_duration);
    std::string holder = leader();
    if (holder != reported_leader_ && !holder.empty()) {
      reported_leader_ = holder;
      if (holder != config_.identity) {
        SDRA_LOG_INFO << "leader election: " << holder << " leads " << lease;
      }
      if (callbacks_.on_new_leader) callbacks_.on_new_leader(holder);
    }
    if (acquired) break;
    if (!sleepFor(stop, jittered(config_.retry_period))) return;
  }
  {
    std::lock_guard lock(mu_);
    last_renew_ = clock_.now();
  }
  setLeading(true);
  SDRA_LOG_INFO << "leader election: " << config_.identity << " acquired lease " << lease;
  if (callbacks_.on_started_leading) callbacks_.on_started_leading();

  // Renew every retry period; give up when no renewal succeeded within the renew deadline.
  bool lost = false;
  while (!stop.stop_requested()) {
    if (!sleepFor(stop, config_.retry_period)) break;
    auto deadline = clock_.now() + config_.renew_deadline;
    bool renewed = false;
    while (!stop.stop_requested()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.now());
      if (left.count() <= 0) break;
      renewed = tryAcquireOrRenew(left);
      if (renewed || clock_.now() >= deadline) break;
      auto pause = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_.now());
      if (!sleepFor(stop, std::min(config_.retry_period, pause))) break;
    }
    if (stop.stop_requested()) break;
    if (!renewed) {
      lost = true;
      break;
    }
    std::lock_guard lock(mu_);
    last_renew_ = clock_.now();
  }
  setLeading(false);
  if (lost) {
    SDRA_LOG_ERROR << "leader election: " << config_.identity << " lost lease " << lease
                   << " (no renewal within " << config_.renew_deadline.count() << " ms)";
  } else if (config_.release_on_cancel) {
    release();
  }
  if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
}

}  // namespace sriovdra::kube
