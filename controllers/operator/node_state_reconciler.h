#pragma once
// Keeps one SriovNodeState per node the agent runs on (--agent-node-selector): its spec is the
// render of the policies for that node (policy::render), written (created, then updated) only
// when it changes, owned by the Node; a node that goes away or is no longer selected loses it.
// A change that tears down existing VFs (rollout.h) waits while as many nodes of the node's
// SriovNetworkPoolConfig as its maxUnavailable allows (--max-unavailable for nodes in no pool)
// are being reconfigured (a WaitingForRollout Event), and is marked with kDisruptiveAnnotation;
// so is a reboot the agent asks for (rollout.h rebootRequested), with the spec as it is. The
// spec's system.rdmaMode is that of the node's SriovNetworkPoolConfigs (policy::rdmaModeFor).
// The nodes are those SriovOperatorConfig and --agent-node-selector select (currentSettings()).
// What the render said about the policies goes to the NodeFactsStore. A spec larger than the API
// server stores gets a Warning Event and a slow retry. Thread-safety: reconcile() runs on several
// workers at once; the rollout decision is serialized, and as many renders run at once as the
// machine has cores (more only interleave on them, each holding its rendered spec meanwhile).
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <set>
#include <string>
#include <string_view>

#include "kube/controller.h"
#include "kube/events.h"
#include "kube/own_writes.h"
#include "kube/write_completions.h"
#include "operator/caches.h"
#include "operator/node_facts.h"
#include "operator/options.h"
#include "operator/policy_snapshot.h"

namespace sriovdra::op {

// A node's SriovNodeState as the operator writes it (field manager sriov-dra-operator), as JSON:
// the spec (encodeSpec) with the managed-by label, the disruptive-change annotation, owned by the
// Node when its uid is known. Without `current`, the object to create (also a server-side apply
// document); with it, the object that replaces `current` (an update guarded by its
// resourceVersion, keeping the labels, annotations, finalizers and owners others gave it). The
// operator updates the spec rather than applying it: the update costs the API server less
// (bench/operator_scale). Also what bench/ writes as the operator's floor.
// The spec's JSON is kept in place and only the members before it are rewritten for each write,
// so a write in flight holds its object once (about 95 KiB at 256 VFs; 32 workers wait at once).
class NodeStateDocument {
 public:
  explicit NodeStateDocument(std::string_view spec_json);
  std::string_view spec() const;
  // The whole object for `node` under `current`; valid until the next call or destruction.
  std::string_view under(const std::string& ns, const api::Node& node, bool disruptive,
                         const kube::ObjectMeta* current);

 private:
  std::string text_;    // the object's members before the spec, then ,"spec":<spec>}
  size_t spec_at_ = 0;  // where ,"spec": begins
};

// A node's place in its pool's rollout (SriovNetworkPoolConfig, policy/operator_config.h).
struct RolloutSlot {
  int limit = 0;           // nodes of the pool that may be reconfigured at once; -1 = no limit
  std::string limit_text;  // where the limit comes from, for Events
  int busy = 0;            // other nodes of the pool being reconfigured
};

class NodeStateReconciler {
 public:
  // `facts_changed` receives the policy status keys whose facts a reconcile changed.
  NodeStateReconciler(kube::Client& client, const OperatorOptions& options,
                      kube::EventRecorder& events, const Caches& caches, PolicySnapshots& policies,
                      NodeFactsStore& facts,
                      std::function<void(const std::set<std::string>&)> facts_changed);

  Result<kube::ReconcileResult> reconcile(const std::string& node);
  // True when the state is exactly as this operator's last write of it left it (the watch
  // brings every write back; rendering it again would find nothing to do). See kube/own_writes.h.
  bool isOwnWrite(const api::SriovNodeState& state);
  // The states informer's completion (kube::Informer::setCompletion): the state as this
  // operator's own write of its spec left it, or null when `meta` is not that write. Built from
  // `cached`, the version the write replaced (a key's changes come in order, and an update of
  // the spec keeps the status), with the event's metadata and the written spec's digest,
  // devices by resource and interfaces. A new generation that arrives before the answer of a
  // write in flight (the usual order) waits for it, at most kube::kWriteAnswerWait, then is read
  // instead.
  std::shared_ptr<const CachedNodeState> ownWrite(
      const kube::ObjectMeta& meta, const std::shared_ptr<const CachedNodeState>& cached);

 private:
  struct Written {
    int64_t generation = 0;
    bool written_meanwhile = false;  // someone else wrote the object during the write
  };
  // What the cache keeps of a spec (CachedNodeState's spec_digest, devices_by_resource and
  // spec_interfaces).
  struct SpecSummary {
    std::string digest;  // specDigest of the encoded spec
    std::map<std::string, int64_t> devices_by_resource;
    std::shared_ptr<const std::vector<api::Interface>> interfaces;  // interned
    std::string rdma_mode;
  };
  // What a reconcile writes: the node's spec, encoded and summarised, and why the write takes a
  // rollout slot.
  struct Rendered {
    NodeStateDocument document;
    size_t devices = 0;
    SpecSummary summary;
    std::optional<std::string> why;
  };
  // Renders the node, records what the render said of the policies, and encodes the spec (the
  // encoding the digest compares is the one written); nullopt when it is the spec last written
  // and no reboot waits for a slot. The rendered spec (about 1 MiB at 256 VFs) goes when this
  // returns: a worker waiting on the API server holds only the encoded object (NodeStateDocument).
  // Waits while as many renders as the machine has cores run.
  std::optional<Rendered> render(const api::Node& node, const CachedNodeState* state);
  // Writes the spec (Client::replace under the cached metadata); remembers the answer's
  // resourceVersion.
  Result<Written> write(const api::Node& node, Rendered& rendered, bool disruptive);
  // A Warning Event on the SriovNodeState and a slow retry if `error` is kTooLarge, else `error`.
  Result<kube::ReconcileResult> tooLargeOr(const std::string& node, const CachedNodeState* state,
                                           size_t devices, Status error);
  Status remove(const std::string& name);
  // The rdmaMode of the SriovNetworkPoolConfigs that select the node (policy::rdmaModeFor; a
  // conflict is an InSeveralPools Warning Event on the node's state).
  std::string rdmaModeOf(const api::Node& node, const CachedNodeState* state);
  // Nodes other than `except` that `counts` (by name) and that are in a disruptive change.
  int disruptiveInFlight(
      const std::string& except,
      const std::function<bool(const std::string&)>& counts) const;  // rollout_mu_ held
  // The node's pool limit and how much of it is in use; nullopt (with a Warning Event) when the
  // node is in several pools. rollout_mu_ held.
  std::optional<RolloutSlot> rolloutSlot(const api::Node& node, const kube::ObjectReference& state,
                                         const std::string& why);
  void setFacts(const std::string& node, std::optional<NodeFacts> facts);

  kube::Client& client_;
  const OperatorOptions& options_;
  kube::EventRecorder& events_;
  const Caches& caches_;
  PolicySnapshots& policies_;
  NodeFactsStore& facts_;
  std::function<void(const std::set<std::string>&)> facts_changed_;
  std::counting_semaphore<> renders_;  // one unit per core: the renders that may run at once

  // Disruptive changes are decided and written one at a time, and remembered until the cache
  // shows them, so concurrent workers never exceed --max-unavailable.
  std::mutex rollout_mu_;
  std::map<std::string, int64_t> disruptive_written_;  // guarded by rollout_mu_: node -> gen

  kube::OwnWrites written_;                          // SriovNodeStates, by node name
  kube::WriteCompletions<SpecSummary> spec_writes_;  // by node name
};

}  // namespace sriovdra::op
