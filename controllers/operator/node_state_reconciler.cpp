#include "operator/node_state_reconciler.h"

#include <algorithm>
#include <thread>

#include "api/names.h"
#include "api/selectors.h"
#include "base/interner.h"
#include "base/log.h"
#include "base/strings.h"
#include "operator/operator_config_reconciler.h"
#include "operator/rollout.h"

namespace sriovdra::op {

using kube::ReconcileResult;

namespace {

bool markedDisruptive(const api::SriovNodeState& s) {
  return s.metadata.annotation(kDisruptiveAnnotation) == "true";
}

// Whether the cached state shows a disruptive write that had `generation` (a reboot's write
// keeps the spec, and with it the generation: then only the annotation tells).
bool caughtUp(const api::SriovNodeState& s, int64_t generation) {
  return s.metadata.generation > generation ||
         (s.metadata.generation == generation && markedDisruptive(s));
}

}  // namespace

NodeStateReconciler::NodeStateReconciler(
    kube::Client& client, const OperatorOptions& options, kube::EventRecorder& events,
    const Caches& caches, PolicySnapshots& policies, NodeFactsStore& facts,
    std::function<void(const std::set<std::string>&)> facts_changed)
    : client_(client),
      options_(options),
      events_(events),
      caches_(caches),
      policies_(policies),
      facts_(facts),
      facts_changed_(std::move(facts_changed)),
      renders_(std::max<std::ptrdiff_t>(1, std::thread::hardware_concurrency())) {}

void NodeStateReconciler::setFacts(const std::string& node, std::optional<NodeFacts> facts) {
  auto changed = facts_.set(node, std::move(facts));
  if (!changed.empty()) facts_changed_(changed);
}

int NodeStateReconciler::disruptiveInFlight(
    const std::string& except, const std::function<bool(const std::string&)>& counts) const {
  int n = 0;
  std::set<std::string> seen;
  for (const auto& s : caches_.states.list()) {
    const std::string& name = s->metadata.name;
    seen.insert(name);
    if (name == except || !counts(name)) continue;
    bool busy = markedDisruptive(*s) && isReconfiguring(*s);
    auto w = disruptive_written_.find(name);
    bool cache_behind = w != disruptive_written_.end() && !caughtUp(*s, w->second);
    if (busy || cache_behind) ++n;
  }
  for (const auto& [name, gen] : disruptive_written_) {
    if (name != except && seen.count(name) == 0 && counts(name)) ++n;
  }
  return n;
}

namespace {

// The pool configurations the webhook admits (it refuses the others), and what holds them.
struct ValidPools {
  std::vector<std::shared_ptr<const api::SriovNetworkPoolConfig>> held;
  std::vector<const api::SriovNetworkPoolConfig*> pools;
};

ValidPools validPools(const Caches& caches) {
  ValidPools out;
  out.held = caches.pool_configs.list();
  for (const auto& p : out.held) {
    if (policy::validatePoolConfig(*p).ok()) out.pools.push_back(p.get());
  }
  return out;
}

}  // namespace

std::string NodeStateReconciler::rdmaModeOf(const api::Node& node, const CachedNodeState* state) {
  auto valid = validPools(caches_);
  auto choice = policy::rdmaModeFor(policy::poolsOf(node.metadata.labels, valid.pools),
                                    state ? state->spec.rdma_mode : "");
  if (!choice.conflict.empty() && state) {
    events_.warning(kube::ObjectReference::of(api::resources::kSriovNodeStates, state->metadata),
                    "InSeveralPools", choice.conflict);
  }
  return choice.mode;
}

std::optional<RolloutSlot> NodeStateReconciler::rolloutSlot(const api::Node& node,
                                                            const kube::ObjectReference& state,
                                                            const std::string& why) {
  auto valid = validPools(caches_);
  const auto& pools = valid.pools;
  auto mine = policy::poolsOf(node.metadata.labels, pools);
  if (mine.size() > 1) {
    std::vector<std::string> names;
    names.reserve(mine.size());
    for (const auto* p : mine) names.push_back(p->metadata.name);
    std::sort(names.begin(), names.end());
    events_.warning(state, "InSeveralPools",
                    why + "; the node is in the SriovNetworkPoolConfigs " + join(names, ", ") +
                        ": it waits until their nodeSelectors put it in one");
    return std::nullopt;
  }
  RolloutSlot slot;
  auto samePool = [&](const std::string& name) {
    auto n = caches_.nodes.get("", name);
    auto in = policy::poolsOf(n ? n->metadata.labels : api::Labels{}, pools);
    return mine.empty() ? in.empty() : in.size() == 1 && in[0] == mine[0];
  };
  if (mine.empty()) {
    slot.limit = options_.max_unavailable;
    slot.limit_text = "--max-unavailable is " + std::to_string(slot.limit) +
                      " (nodes in no SriovNetworkPoolConfig)";
  } else {
    int pool_nodes = 0;
    for (const auto& n : caches_.nodes.list()) pool_nodes += samePool(n->metadata.name) ? 1 : 0;
    const auto& value = mine[0]->spec.max_unavailable;
    slot.limit = policy::maxUnavailable(value, pool_nodes).valueOr(0);
    slot.limit_text = "maxUnavailable of SriovNetworkPoolConfig " + mine[0]->metadata.name +
                      " is " + (value ? value->toString() : "unset") + " of its " +
                      std::to_string(pool_nodes) +
                      " node(s) = " + (slot.limit < 0 ? "no limit" : std::to_string(slot.limit));
  }
  slot.busy = disruptiveInFlight(node.metadata.name, samePool);
  return slot;
}

std::optional<NodeStateReconciler::Rendered> NodeStateReconciler::render(
    const api::Node& node, const CachedNodeState* state) {
  renders_.acquire();
  struct Release {
    std::counting_semaphore<>& renders;
    ~Release() { renders.release(); }
  } release{renders_};
  auto snapshot = policies_.get();
  auto discovered = state ? state->discovered() : api::SriovNodeStateStatus{};
  auto result = policy::render(node, snapshot->validated.valid, discovered,
                               {options_.resource_prefix, options_.advertise_node_policy_vfs});
  result.spec.rdma_mode = rdmaModeOf(node, state);

  NodeFacts facts;
  facts.matches = result.matches;
  facts.conflicts = result.conflicts;
  facts.warnings = result.warnings;
  auto by_resource = devicesByResource(result.spec.devices);
  facts.desired = by_resource;
  if (state && !isReconfiguring(*state) && state->status.sync_status == "Succeeded") {
    facts.advertised = state->devices_by_resource;
  }
  setFacts(node.metadata.name, std::move(facts));

  Rendered out{NodeStateDocument(encodeSpec(result.spec))};
  out.devices = result.spec.devices.size();
  out.summary.digest = specDigest(out.document.spec());
  // What takes a rollout slot, for people: a change that recreates VFs, or a reboot the agent
  // asks for to apply the spec it has.
  if (state && state->spec_digest == out.summary.digest) {
    if (!rebootRequested(*state) || markedDisruptive(*state)) return std::nullopt;
    out.why = "the node must reboot for its firmware or RDMA mode changes";
  } else if (state) {
    if (auto d = disruption(state->specWithoutDevices(), result.spec, discovered)) {
      out.why = "the new configuration recreates VFs on this node (" + *d + ")";
    }
  }
  // What the cache takes from this write when the watch brings it back (ownWrite).
  out.summary.devices_by_resource = std::move(by_resource);
  out.summary.interfaces =
      Interner<std::vector<api::Interface>>::global().intern(std::move(result.spec.interfaces));
  out.summary.rdma_mode = result.spec.rdma_mode;
  return out;
}

Result<ReconcileResult> NodeStateReconciler::reconcile(const std::string& name) {
  auto node = caches_.nodes.get("", name);
  auto state = caches_.states.get(options_.namespace_, name);
  bool selected = node != nullptr &&
                  api::matchesLabelSelector(currentSettings(caches_, options_).agent_node_selector,
                                            node->metadata.labels);
  if (!selected) {
    setFacts(name, std::nullopt);
    spec_writes_.forget(name);
    if (state != nullptr) {
      auto it = state->metadata.labels.find(kManagedByLabel);
      if (it != state->metadata.labels.end() && it->second == kManagedByValue) {
        SDRA_RETURN_IF_ERROR(remove(name));
      }
    }
    return ReconcileResult::done();
  }
  auto rendered = render(*node, state.get());
  if (!rendered) return ReconcileResult::done();
  const std::optional<std::string>& why = rendered->why;
  const bool disruptive = why.has_value();
  bool written_meanwhile = false;
  const size_t devices = rendered->devices;
  const size_t interfaces = rendered->summary.interfaces->size();
  if (!disruptive) {
    auto written = write(*node, *rendered, false);
    if (!written.ok()) return tooLargeOr(name, state.get(), devices, written.status());
    written_meanwhile = written->written_meanwhile;
  } else {
    std::lock_guard lock(rollout_mu_);
    auto ref = kube::ObjectReference::of(api::resources::kSriovNodeStates, state->metadata);
    auto slot = rolloutSlot(*node, ref, *why);
    if (!slot) return ReconcileResult::after(options_.rollout_retry);
    if (slot->limit >= 0 && slot->busy >= slot->limit) {
      events_.normal(ref, "WaitingForRollout",
                     *why + "; waiting because " + std::to_string(slot->busy) +
                         " node(s) of its pool are being reconfigured and " + slot->limit_text);
      return ReconcileResult::after(options_.rollout_retry);
    }
    auto written = write(*node, *rendered, true);
    if (!written.ok()) return tooLargeOr(name, state.get(), devices, written.status());
    disruptive_written_[name] = written->generation;
    written_meanwhile = written->written_meanwhile;
  }
  {
    // Forget writes the cache has caught up with; the annotation speaks for them from now on.
    std::lock_guard lock(rollout_mu_);
    for (auto it = disruptive_written_.begin(); it != disruptive_written_.end();) {
      auto cached = caches_.states.get(options_.namespace_, it->first);
      bool caught_up = cached && caughtUp(*cached, it->second);
      bool node_gone = caches_.nodes.get("", it->first) == nullptr;
      it = caught_up || node_gone ? disruptive_written_.erase(it) : std::next(it);
    }
  }
  if (disruptive) {
    SDRA_LOG_INFO << "node " << name << ": " << *why;
    events_.normal(kube::ObjectReference::of(api::resources::kSriovNodeStates, state->metadata),
                   "Reconfiguring", *why);
  }
  SDRA_VLOG(1) << "node " << name << ": wrote spec with " << interfaces << " interface(s) and "
               << devices << " device(s)";
  // Someone else wrote the spec during the apply, and the cache already holds both writes.
  return ReconcileResult{.requeue = written_meanwhile};
}

Result<ReconcileResult> NodeStateReconciler::tooLargeOr(const std::string& node,
                                                        const CachedNodeState* state,
                                                        size_t devices, Status error) {
  if (error.code() != Code::kTooLarge) return error;
  // Retrying at once cannot help: only a policy change (which requeues the node) or a larger
  // etcd limit can. Say so on the object that does not fit.
  kube::ObjectMeta meta;
  if (state != nullptr) meta = state->metadata;
  meta.namespace_ = options_.namespace_;
  meta.name = node;
  events_.warning(
      kube::ObjectReference::of(api::resources::kSriovNodeStates, meta), "SriovNodeStateTooLarge",
      "the spec for " + std::to_string(devices) +
          " VF(s) makes this object larger than the API server stores (" + error.message() +
          "); lower numVfs of the policies that select the node, or raise etcd's "
          "--max-request-bytes");
  SDRA_LOG_ERROR << "node " << node << ": " << error.toString();
  return ReconcileResult::after(options_.too_large_retry);
}

Result<NodeStateReconciler::Written> NodeStateReconciler::write(const api::Node& node,
                                                                Rendered& rendered,
                                                                bool disruptive) {
  const std::string& name = node.metadata.name;
  auto cached = caches_.states.get(options_.namespace_, name);
  written_.start(name);
  spec_writes_.start(name, rendered.summary);
  auto written = client_.replace(api::resources::kSriovNodeStates, options_.namespace_, name,
                                 cached ? &cached->metadata : nullptr,
                                 [&](const kube::ObjectMeta* current) {
                                   return rendered.document.under(options_.namespace_, node,
                                                                  disruptive, current);
                                 },
                                 {.field_manager = kFieldManager, .metadata_only = true});
  auto meta = written.ok() ? kube::ObjectMeta::decode(*written) : kube::ObjectMeta{};
  bool meanwhile = written_.finish(name, meta.resource_version);
  spec_writes_.answered(name, meta.resource_version);
  if (!written.ok()) return written.status();
  return Written{meta.generation, meanwhile};
}

bool NodeStateReconciler::isOwnWrite(const api::SriovNodeState& state) {
  return written_.isOwn(state.metadata.name, state.metadata.resource_version);
}

std::shared_ptr<const CachedNodeState> NodeStateReconciler::ownWrite(
    const kube::ObjectMeta& meta, const std::shared_ptr<const CachedNodeState>& cached) {
  if (!cached) return nullptr;
  // Only a change of the spec (a new generation) can be a write whose answer is still on its
  // way; anything else (an agent's status) is read at once.
  auto written = spec_writes_.take(meta.name, meta.resource_version,
                                   meta.generation != cached->metadata.generation
                                       ? kube::kWriteAnswerWait
                                       : std::chrono::milliseconds(0));
  if (!written) return nullptr;
  auto out = std::make_shared<CachedNodeState>(*cached);
  out->metadata = meta;
  out->spec_digest = std::move(written->digest);
  out->devices_by_resource = std::move(written->devices_by_resource);
  out->spec_interfaces = std::move(written->interfaces);
  out->spec.rdma_mode = std::move(written->rdma_mode);
  return out;
}

namespace {
constexpr std::string_view kSpecMember = ",\"spec\":";
// Room for the members before the spec (metadata with labels, annotations and an owner), so the
// first write does not move the spec.
constexpr size_t kHeadRoom = 1024;
}  // namespace

NodeStateDocument::NodeStateDocument(std::string_view spec_json) {
  text_.reserve(kHeadRoom + kSpecMember.size() + spec_json.size() + 1);
  text_.append(kSpecMember).append(spec_json).push_back('}');
}

std::string_view NodeStateDocument::spec() const {
  size_t from = spec_at_ + kSpecMember.size();
  return std::string_view(text_).substr(from, text_.size() - from - 1);
}

std::string_view NodeStateDocument::under(const std::string& ns, const api::Node& node,
                                          bool disruptive, const kube::ObjectMeta* current) {
  auto doc = kube::newObject(api::resources::kSriovNodeStates, ns, node.metadata.name);
  kube::ObjectMeta meta;
  if (current) meta = *current;
  meta.labels[kManagedByLabel] = kManagedByValue;
  meta.annotations[kDisruptiveAnnotation] = disruptive ? "true" : "false";
  if (!node.metadata.uid.empty())
    meta.setOwner({"v1", "Node", node.metadata.name, node.metadata.uid});
  meta.encode(doc["metadata"], doc.GetAllocator());
  std::string head = json::dump(doc);
  head.pop_back();  // its closing brace: the spec follows as the last member
  text_.replace(0, spec_at_, head);
  spec_at_ = head.size();
  return text_;
}

Status NodeStateReconciler::remove(const std::string& name) {
  written_.forget(name);
  Status st = client_.remove(api::resources::kSriovNodeStates, options_.namespace_, name);
  if (st.code() == Code::kNotFound) return Status::ok();
  if (st.isOk())
    SDRA_LOG_INFO << "node " << name << " is gone or not selected: deleted its SriovNodeState";
  return st;
}

}  // namespace sriovdra::op
