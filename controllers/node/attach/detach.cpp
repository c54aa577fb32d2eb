// The detach half of the Attacher (attacher.h): CNI DEL of what the records hold, when the
// runtime, the kubelet or a pod's next sandbox asks; attach and synchronization are in
// attacher.cpp.
#include <algorithm>

#include "base/log.h"
#include "node/attach/attacher.h"

namespace sriovdra::attach {
namespace {

// The pod ("namespace/name") of another sandbox's record that has the interface's VF attached,
// or "".
std::string attachedElsewhere(const std::vector<dra::AttachRecord>& records,
                              const std::string& sandbox, const dra::AttachedInterface& i) {
  for (const auto& r : records) {
    if (r.sandbox == sandbox) continue;
    for (const auto& other : r.interfaces) {
      if (other.pci_address == i.pci_address &&
          other.state == dra::AttachedInterface::State::kAttached) {
        return r.pod_namespace + "/" + r.pod_name;
      }
    }
  }
  return "";
}

// del_failures_'s key of an interface.
std::string delKey(const dra::AttachRecord& record, const dra::AttachedInterface& i) {
  return record.sandbox + "/" + i.claim_uid + "/" + i.device;
}

}  // namespace

std::unique_lock<std::timed_mutex> Attacher::lockSandbox(const std::string& sandbox,
                                                         cni::Executor::Deadline deadline) {
  std::unique_lock guard(*lockOf(sandbox), std::defer_lock);
  if (deadline == cni::Executor::Deadline::max()) {
    guard.lock();
  } else {
    (void)guard.try_lock_until(deadline);
  }
  return guard;
}

Status Attacher::busy(const std::string& sandbox) {
  return Status(Code::kUnavailable, "sandbox " + sandbox +
                                        ": another operation of the agent on it (the "
                                        "synchronization after a restart, a DEL) holds it past "
                                        "the runtime's budget; the runtime tries again");
}

Status Attacher::detachLocked(const std::string& sandbox, const std::string& claim_uid,
                              cni::Executor::Deadline deadline) {
  noteEvent(sandbox);
  auto guard = lockSandbox(sandbox, deadline);
  if (!guard.owns_lock()) return busy(sandbox);
  return detach(sandbox, claim_uid, deadline);
}

Status Attacher::detach(const std::string& sandbox, const std::string& claim_uid,
                        cni::Executor::Deadline deadline) {
  auto loaded = records_.load(sandbox);
  if (!loaded.ok()) return loaded.status();
  if (!*loaded) return Status::ok();
  dra::AttachRecord record = **loaded;
  markComplete(sandbox, false);
  const auto records = records_.all();
  std::vector<dra::AttachedInterface> kept;
  std::set<std::string> claims;
  Status first = Status::ok();
  for (const auto& i : record.interfaces) {
    if (!claim_uid.empty() && i.claim_uid != claim_uid) {
      kept.push_back(i);
      continue;
    }
    claims.insert(i.claim_uid);
    if (std::string other = attachedElsewhere(records, sandbox, i); !other.empty()) {
      SDRA_LOG_WARN << "pod " << record.pod_namespace << "/" << record.pod_name << ": VF "
                    << i.pci_address << " (" << i.if_name << ") is attached to pod " << other
                    << " now; its stale attachment is forgotten without a DEL (an IPAM lease it "
                    << "held is not released)";
      forgetDelFailures(record, i);
      continue;
    }
    Status st = del(record, i, deadline);
    if (settleDel(record, i, st, deadline)) continue;
    if (first.isOk()) {
      first =
          Status(st.code(), "detaching VF " + i.pci_address + " from pod " + record.pod_namespace +
                                "/" + record.pod_name + ": " + st.message());
    }
    kept.push_back(i);
  }
  record.interfaces = std::move(kept);
  SDRA_RETURN_IF_ERROR(records_.save(record));
  writeStatuses(claims);
  return first;
}

void Attacher::forgetDelFailures(const dra::AttachRecord& record, const dra::AttachedInterface& i) {
  std::lock_guard lock(del_mu_);
  del_failures_.erase(delKey(record, i));
}

bool Attacher::settleDel(const dra::AttachRecord& record, const dra::AttachedInterface& i,
                         const Status& del, cni::Executor::Deadline deadline) {
  const std::string key = delKey(record, i);
  const auto now = std::chrono::steady_clock::now();
  int failures = 0;
  std::chrono::seconds failing_for{0};
  {
    std::lock_guard lock(del_mu_);
    if (del.isOk()) {
      del_failures_.erase(key);
      SDRA_LOG_INFO << "detached VF " << i.pci_address << " (" << i.if_name << ") from pod "
                    << record.pod_namespace << "/" << record.pod_name;
      return true;
    }
    // A DEL cut short by a caller's budget (a RunPodSandbox's) was slow, not failing.
    if (del.code() == Code::kTimeout && deadline != cni::Executor::Deadline::max()) return false;
    auto it = del_failures_.try_emplace(key, DelFailures{0, now}).first;
    failures = ++it->second.count;
    failing_for = std::chrono::duration_cast<std::chrono::seconds>(now - it->second.first);
    if (failures < kDelGiveUpAttempts || failing_for < options_.del_give_up_after) return false;
    del_failures_.erase(it);
  }
  std::string message =
      "pod " + record.pod_namespace + "/" + record.pod_name + ": CNI DEL of " + i.if_name +
      " (VF " + i.pci_address + ") failed " + std::to_string(failures) + " times over " +
      std::to_string(failing_for.count()) + " s and is given up: " + del.message() +
      ". What it would have undone may be left: the VF's VLAN, MAC or trust "
      "settings and the network's IPAM lease (see docs/operations.md)";
  SDRA_LOG_ERROR << message;
  recorder_.warning(node_state_, "DetachAbandoned", message);
  return true;
}

Status Attacher::stopPodSandbox(const nri::Pod& pod) {
  {
    std::lock_guard sync_lock(sync_mu_);
    status_retries_.erase(pod.id);
  }
  return detachLocked(pod.id);
}

Status Attacher::removePodSandbox(const nri::Pod& pod) {
  Status st = stopPodSandbox(pod);
  // Forgotten once no snapshot waits that could be older than this event.
  std::lock_guard sync_lock(sync_mu_);
  if (!sync_pending_ && !sync_running_) {
    std::lock_guard lock(events_mu_);
    last_event_.erase(pod.id);
  }
  return st;
}

Status Attacher::detachClaim(const std::string& claim_uid) {
  Status first = Status::ok();
  for (const auto& record : records_.all()) {
    if (std::none_of(record.interfaces.begin(), record.interfaces.end(),
                     [&](const auto& i) { return i.claim_uid == claim_uid; })) {
      continue;
    }
    SDRA_LOG_WARN << "pod " << record.pod_namespace << "/" << record.pod_name
                  << " still has VFs of the claim being unprepared attached: the runtime never "
                  << "said its sandbox stopped (containerd restarted since it started?); "
                  << "detaching them now";
    if (Status st = detachLocked(record.sandbox, claim_uid); !st.isOk() && first.isOk()) {
      first = st;
    }
  }
  return first;
}

}  // namespace sriovdra::attach
