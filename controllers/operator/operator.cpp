#include "operator/operator.h"

#include <algorithm>
#include <set>

#include "api/names.h"
#include "base/log.h"
#include "base/time.h"
#include "base/yaml.h"
#include "dra/alignment.h"
#include "metrics/registry.h"
#include "operator/admission.h"
#include "operator/policy_status.h"
#include "operator/rollout.h"
#include "policy/device_classes.h"
#include "policy/selectors.h"

namespace sriovdra::op {
namespace {

using kube::ReconcileResult;
constexpr const char* kClassesKey = "device-classes";
constexpr const char* kAlignmentKey = "allocated-pairs";
const kube::ResourceType kDaemonSets{"apps", "v1", "daemonsets", "DaemonSet", true};

std::string nowString() { return formatRfc3339(std::chrono::system_clock::now()); }

std::string statusKey(const std::string& kind, const std::string& name) {
  return kind + "/" + name;
}

kube::InformerOptions inNamespace(const std::string& ns) {
  kube::InformerOptions o;
  o.namespace_ = ns;
  return o;
}

prometheus::Family<prometheus::Gauge>& nodesGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_nodes")
                       .Help("Nodes that have a SriovNodeState rendered by the operator")
                       .Register(metrics::registry());
  return f;
}
prometheus::Family<prometheus::Gauge>& vfsGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_vfs")
                       .Help(
                           "VFs per resourceName: desired (in SriovNodeState specs) and "
                           "advertised (on nodes whose agent applied the spec)")
                       .Register(metrics::registry());
  return f;
}
prometheus::Family<prometheus::Gauge>& conflictsGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_policy_conflicts")
                       .Help(
                           "Conflicts between policies on all nodes (a policy lost a PF range "
                           "or VFs to another)")
                       .Register(metrics::registry());
  return f;
}

prometheus::Family<prometheus::Gauge>& pairsGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_allocated_pairs")
                       .Help(
                           "GPU/VF pairs in allocated ResourceClaims by alignment: same_switch, "
                           "same_root, same_numa (different root), cross_numa, unknown")
                       .Register(metrics::registry());
  return f;
}
prometheus::Family<prometheus::Gauge>& sharedPfGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_claims_sharing_pf")
                       .Help("Allocated ResourceClaims that hold more than one VF of one PF")
                       .Register(metrics::registry());
  return f;
}

// The cached objects (kept alive by `keep`) as plain pointers.
template <typename T>
std::vector<const T*> cached(const kube::Informer<T>& informer,
                             std::vector<std::shared_ptr<const void>>& keep) {
  std::vector<const T*> out;
  for (auto& item : informer.list()) {
    out.push_back(item.get());
    keep.push_back(std::move(item));
  }
  return out;
}

template <typename T>
std::vector<std::shared_ptr<const T>> sortedByName(const kube::Informer<T>& informer) {
  auto items = informer.list();
  std::sort(items.begin(), items.end(),
            [](const auto& a, const auto& b) { return a->metadata.name < b->metadata.name; });
  return items;
}

}  // namespace

struct Operator::PolicySnapshot {
  std::vector<std::shared_ptr<const api::SriovNetworkNodePolicy>> node_policies;
  std::vector<std::shared_ptr<const api::SriovResourcePolicy>> resource_policies;
  std::vector<std::shared_ptr<const api::DeviceAttributes>> device_attributes;
  policy::ValidatedPolicies validated;
};

struct Operator::NodeFacts {
  std::map<policy::PolicyRef, int64_t> matches;
  std::vector<policy::Conflict> conflicts;
  std::vector<policy::Warning> warnings;
  std::map<std::string, int64_t> desired;     // by resourceName
  std::map<std::string, int64_t> advertised;  // by resourceName
  bool operator==(const NodeFacts&) const = default;
};

Operator::Operator(std::shared_ptr<kube::Client> client, OperatorOptions options,
                   kube::EventRecorder& events)
    : client_(std::move(client)),
      options_(std::move(options)),
      events_(events),
      nodes_(client_, kube::resources::kNodes, {.name = "nodes"}),
      node_policies_(client_, api::resources::kSriovNetworkNodePolicies,
                     inNamespace(options_.namespace_)),
      resource_policies_(client_, api::resources::kSriovResourcePolicies,
                         inNamespace(options_.namespace_)),
      device_attributes_(client_, api::resources::kDeviceAttributes,
                         inNamespace(options_.namespace_)),
      states_(client_, api::resources::kSriovNodeStates, inNamespace(options_.namespace_)),
      classes_(client_, api::resources::kDeviceClasses,
               {.name = "deviceclasses",
                .label_selector = std::string(kManagedByLabel) + "=" + kManagedByValue}),
      claims_(client_, api::resources::kResourceClaims, {.name = "resourceclaims"}),
      slices_(client_, api::resources::kResourceSlices, {.name = "resourceslices"}),
      node_controller_("sriovnodestate", [this](const std::string& k) { return reconcileNode(k); },
                       {.workers = options_.workers}),
      class_controller_("deviceclass",
                        [this](const std::string& k) { return reconcileDeviceClasses(k); }),
      status_controller_("policystatus",
                         [this](const std::string& k) { return reconcilePolicyStatus(k); },
                         {.workers = 2}),
      alignment_controller_("alignment",
                            [this](const std::string& k) { return reconcileAlignment(k); }),
      agent_controller_("agent-daemonset",
                        [this](const std::string& k) { return reconcileAgentDaemonSet(k); }) {
  nodes_.addHandlers(
      {.on_add = [this](const auto& n) { node_controller_.queue().add(n->metadata.name); },
       .on_update =
           [this](const auto& o, const auto& n) {
             if (o->metadata.labels != n->metadata.labels) {
               node_controller_.queue().add(n->metadata.name);
             }
           },
       .on_delete = [this](const auto& n,
                           bool) { node_controller_.queue().add(n->metadata.name); }});
  states_.addHandlers(
      {.on_add = [this](const auto& s) { node_controller_.queue().add(s->metadata.name); },
       .on_update =
           [this](const auto& o, const auto& n) {
             if (o->status != n->status || o->spec != n->spec) {
               node_controller_.queue().add(n->metadata.name);
             }
             // A node that finished reconfiguring frees a rollout slot for the others.
             if (isReconfiguring(*o) && !isReconfiguring(*n)) enqueueAllNodes();
           },
       .on_delete = [this](const auto& s,
                           bool) { node_controller_.queue().add(s->metadata.name); }});
  auto policyHandlers = [this](const std::string& kind) {
    return [this, kind](const auto& obj) { policiesChanged(kind, obj->metadata.name); };
  };
  node_policies_.addHandlers(
      {.on_add = policyHandlers(policy::kNodePolicyKind),
       .on_update =
           [this](const auto& o, const auto& n) {
             if (o->metadata.generation != n->metadata.generation ||
                 o->metadata.labels != n->metadata.labels) {
               policiesChanged(policy::kNodePolicyKind, n->metadata.name);
             }
           },
       .on_delete = [this](const auto& o,
                           bool) { policiesChanged(policy::kNodePolicyKind, o->metadata.name); }});
  resource_policies_.addHandlers(
      {.on_add = policyHandlers(policy::kResourcePolicyKind),
       .on_update =
           [this](const auto& o, const auto& n) {
             if (o->metadata.generation != n->metadata.generation) {
               policiesChanged(policy::kResourcePolicyKind, n->metadata.name);
             }
           },
       .on_delete = [this](
                        const auto& o,
                        bool) { policiesChanged(policy::kResourcePolicyKind, o->metadata.name); }});
  device_attributes_.addHandlers(
      {.on_add = policyHandlers(policy::kDeviceAttributesKind),
       .on_update =
           [this](const auto& o, const auto& n) {
             if (o->metadata.generation != n->metadata.generation ||
                 o->metadata.labels != n->metadata.labels) {
               policiesChanged(policy::kDeviceAttributesKind, n->metadata.name);
             }
           },
       .on_delete =
           [this](const auto& o, bool) {
             policiesChanged(policy::kDeviceAttributesKind, o->metadata.name);
           }});
  classes_.addHandlers(
      {.on_update = [this](const auto&,
                           const auto&) { class_controller_.queue().add(kClassesKey); },
       .on_delete = [this](const auto&, bool) { class_controller_.queue().add(kClassesKey); }});
  class_controller_.queue().add(kClassesKey);
  auto alignmentChanged = [this] { alignment_controller_.queue().add(kAlignmentKey); };
  claims_.addHandlers({.on_add = [alignmentChanged](const auto&) { alignmentChanged(); },
                       .on_update =
                           [alignmentChanged](const auto& o, const auto& n) {
                             if (o->status.allocation != n->status.allocation) alignmentChanged();
                           },
                       .on_delete = [alignmentChanged](const auto&, bool) { alignmentChanged(); }});
  slices_.addHandlers(
      {.on_add = [alignmentChanged](const auto&) { alignmentChanged(); },
       .on_update = [alignmentChanged](const auto&, const auto&) { alignmentChanged(); },
       .on_delete = [alignmentChanged](const auto&, bool) { alignmentChanged(); }});
  alignment_controller_.queue().add(kAlignmentKey);
  if (options_.agent_daemonset) {
    std::string name = kube::ObjectMeta::decode(*options_.agent_daemonset).name;
    kube::InformerOptions o = inNamespace(options_.namespace_);
    o.name = "daemonsets";
    o.field_selector = "metadata.name=" + name;
    daemonsets_ = std::make_unique<kube::Informer<ObjectOnly>>(client_, kDaemonSets, o);
    auto changed = [this, name] { agent_controller_.queue().add(name); };
    daemonsets_->addHandlers({.on_update = [changed](const auto&, const auto&) { changed(); },
                              .on_delete = [changed](const auto&, bool) { changed(); }});
    agent_controller_.queue().add(name);
  }
}

Operator::~Operator() { stop(); }

Result<ObjectOnly> ObjectOnly::decode(const json::Value& v) {
  return ObjectOnly{kube::ObjectMeta::decode(v)};
}

Result<json::Document> loadAgentDaemonSet(const std::string& yaml, const std::string& where) {
  auto docs = yamlToJson(yaml);
  if (!docs.ok()) return Status(Code::kInvalidArgument, where + ": " + docs.status().message());
  for (auto& d : *docs) {
    if (json::stringOr(d, "kind") != "DaemonSet") continue;
    if (json::stringOr(d, "apiVersion") != "apps/v1" || kube::ObjectMeta::decode(d).name.empty()) {
      return Status(Code::kInvalidArgument,
                    where + ": the DaemonSet needs apiVersion apps/v1 and metadata.name");
    }
    const json::Value* containers = json::at(d, {"spec", "template", "spec", "containers"});
    if (containers == nullptr || !containers->IsArray() || containers->Empty()) {
      return Status(Code::kInvalidArgument,
                    where + ": the DaemonSet has no spec.template.spec.containers");
    }
    return std::move(d);
  }
  return Status(Code::kInvalidArgument, where + " holds no DaemonSet");
}

Result<kube::ReconcileResult> Operator::reconcileAgentDaemonSet(const std::string&) {
  auto copied = json::parse(json::dump(*options_.agent_daemonset));
  if (!copied.ok()) return copied.status();
  json::Document& ds = *copied;
  auto& md = json::ensureObject(ds, "metadata", ds.GetAllocator());
  json::setString(md, "namespace", options_.namespace_, ds.GetAllocator());
  if (!options_.agent_image.empty()) {
    auto& containers = ds["spec"]["template"]["spec"]["containers"];
    json::setString(containers[0], "image", options_.agent_image, ds.GetAllocator());
  }
  auto applied = client_->apply(kDaemonSets, options_.namespace_, ds,
                                {.field_manager = kFieldManager, .force = true});
  if (!applied.ok()) return applied.status();
  // Also re-applied every 10 minutes, so a change the watch missed is undone.
  return kube::ReconcileResult::after(std::chrono::minutes(10));
}

Result<kube::ReconcileResult> Operator::reconcileAlignment(const std::string&) {
  std::vector<std::shared_ptr<const void>> keep;
  dra::ClusterTopology topology(cached(slices_, keep), cached(states_, keep));
  auto report = dra::alignmentReport(cached(claims_, keep), topology);
  for (const auto& [alignment, n] : dra::countPairs(report)) {
    pairsGauge()
        .Add({{"alignment", std::string(dra::alignmentLabel(alignment))}})
        .Set(static_cast<double>(n));
  }
  double shared = static_cast<double>(std::count_if(
      report.begin(), report.end(), [](const auto& c) { return !c.shared_pfs.empty(); }));
  sharedPfGauge().Add({}).Set(shared);
  return kube::ReconcileResult::done();
}

void Operator::startInformers() {
  nodes_.start();
  node_policies_.start();
  resource_policies_.start();
  device_attributes_.start();
  states_.start();
  classes_.start();
  claims_.start();
  slices_.start();
  if (daemonsets_) daemonsets_->start();
}

bool Operator::synced() const {
  return nodes_.hasSynced() && node_policies_.hasSynced() && resource_policies_.hasSynced() &&
         device_attributes_.hasSynced() && states_.hasSynced() && classes_.hasSynced() &&
         claims_.hasSynced() && slices_.hasSynced() && (!daemonsets_ || daemonsets_->hasSynced());
}

bool Operator::waitForSync(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool ok = true;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now());
  };
  ok = ok && nodes_.waitForSync(left());
  ok = ok && node_policies_.waitForSync(left());
  ok = ok && resource_policies_.waitForSync(left());
  ok = ok && device_attributes_.waitForSync(left());
  ok = ok && states_.waitForSync(left());
  ok = ok && classes_.waitForSync(left());
  ok = ok && claims_.waitForSync(left());
  ok = ok && slices_.waitForSync(left());
  ok = ok && (!daemonsets_ || daemonsets_->waitForSync(left()));
  return ok;
}

void Operator::startControllers() {
  node_controller_.start();
  class_controller_.start();
  status_controller_.start();
  alignment_controller_.start();
  if (options_.agent_daemonset) agent_controller_.start();
}

void Operator::stop() {
  node_controller_.stop();
  class_controller_.stop();
  status_controller_.stop();
  alignment_controller_.stop();
  agent_controller_.stop();
  nodes_.stop();
  node_policies_.stop();
  resource_policies_.stop();
  device_attributes_.stop();
  states_.stop();
  classes_.stop();
  claims_.stop();
  slices_.stop();
  if (daemonsets_) daemonsets_->stop();
}

void Operator::enqueueAllNodes() {
  for (const auto& key : nodes_.keys()) node_controller_.queue().add(key);
  for (const auto& s : states_.list()) node_controller_.queue().add(s->metadata.name);
}

void Operator::policiesChanged(const std::string& kind, const std::string& name) {
  {
    std::lock_guard lock(policies_mu_);
    snapshot_.reset();
  }
  status_controller_.queue().add(statusKey(kind, name));
  class_controller_.queue().add(kClassesKey);
  enqueueAllNodes();
}

std::shared_ptr<const Operator::PolicySnapshot> Operator::policies() {
  std::lock_guard lock(policies_mu_);
  if (snapshot_) return snapshot_;
  auto snap = std::make_shared<PolicySnapshot>();
  snap->node_policies = sortedByName(node_policies_);
  snap->resource_policies = sortedByName(resource_policies_);
  snap->device_attributes = sortedByName(device_attributes_);
  policy::Policies all;
  for (const auto& p : snap->node_policies) all.node_policies.push_back(p.get());
  for (const auto& p : snap->resource_policies) all.resource_policies.push_back(p.get());
  for (const auto& d : snap->device_attributes) all.device_attributes.push_back(d.get());
  snap->validated = policy::validatePolicies(all);
  snapshot_ = snap;
  return snapshot_;
}

void Operator::setFacts(const std::string& node, std::optional<NodeFacts> facts) {
  std::set<std::string> changed;
  {
    std::lock_guard lock(facts_mu_);
    auto it = facts_.find(node);
    const NodeFacts* old = it == facts_.end() ? nullptr : &it->second;
    if (old != nullptr && facts && *old == *facts) return;
    auto collect = [&](const NodeFacts* f) {
      if (f == nullptr) return;
      for (const auto& [ref, n] : f->matches) changed.insert(statusKey(ref.kind, ref.name));
      for (const auto& c : f->conflicts) changed.insert(statusKey(c.loser.kind, c.loser.name));
      for (const auto& w : f->warnings) changed.insert(statusKey(w.policy.kind, w.policy.name));
    };
    collect(old);
    collect(facts ? &*facts : nullptr);
    if (facts) {
      facts_[node] = std::move(*facts);
    } else if (it != facts_.end()) {
      facts_.erase(it);
    }
    updateMetricsLocked();
  }
  for (const auto& key : changed) status_controller_.queue().add(key);
}

void Operator::updateMetricsLocked() {
  std::map<std::string, int64_t> desired, advertised;
  int64_t conflicts = 0;
  for (const auto& [node, f] : facts_) {
    for (const auto& [r, n] : f.desired) desired[r] += n;
    for (const auto& [r, n] : f.advertised) advertised[r] += n;
    conflicts += static_cast<int64_t>(f.conflicts.size());
  }
  nodesGauge().Add({}).Set(static_cast<double>(facts_.size()));
  conflictsGauge().Add({}).Set(static_cast<double>(conflicts));
  auto publish = [](const char* state, const std::map<std::string, int64_t>& now,
                    std::map<std::string, int64_t>& before) {
    for (const auto& [r, n] : before) {
      if (now.count(r) == 0) vfsGauge().Add({{"state", state}, {"resource", r}}).Set(0);
    }
    for (const auto& [r, n] : now) {
      vfsGauge().Add({{"state", state}, {"resource", r}}).Set(static_cast<double>(n));
    }
    before = now;
  };
  publish("desired", desired, desired_total_);
  publish("advertised", advertised, advertised_total_);
}

int Operator::disruptiveInFlight(const std::string& except) const {
  // rollout_mu_ held.
  int n = 0;
  std::set<std::string> seen;
  for (const auto& s : states_.list()) {
    const std::string& name = s->metadata.name;
    seen.insert(name);
    if (name == except) continue;
    auto a = s->metadata.annotations.find(kDisruptiveAnnotation);
    bool busy = a != s->metadata.annotations.end() && a->second == "true" && isReconfiguring(*s);
    auto w = disruptive_written_.find(name);
    bool cache_behind = w != disruptive_written_.end() && s->metadata.generation < w->second;
    if (busy || cache_behind) ++n;
  }
  for (const auto& [name, gen] : disruptive_written_) {
    if (name != except && seen.count(name) == 0) ++n;
  }
  return n;
}

Result<ReconcileResult> Operator::reconcileNode(const std::string& name) {
  auto node = nodes_.get("", name);
  auto state = states_.get(options_.namespace_, name);
  bool selected = node != nullptr &&
                  policy::matchesLabelSelector(options_.agent_node_selector, node->metadata.labels);
  if (!selected) {
    setFacts(name, std::nullopt);
    if (state != nullptr) {
      auto it = state->metadata.labels.find(kManagedByLabel);
      if (it != state->metadata.labels.end() && it->second == kManagedByValue) {
        SDRA_RETURN_IF_ERROR(deleteNodeState(name));
      }
    }
    return ReconcileResult::done();
  }
  auto snapshot = policies();
  static const api::SriovNodeStateStatus kNothingDiscovered;
  const api::SriovNodeStateStatus& discovered = state ? state->status : kNothingDiscovered;
  auto result =
      policy::renderNode(*node, snapshot->validated.valid, discovered, {options_.resource_prefix});

  NodeFacts facts;
  facts.matches = result.matches;
  facts.conflicts = result.conflicts;
  facts.warnings = result.warnings;
  auto countByResource = [](const api::SriovNodeStateSpec& spec) {
    std::map<std::string, int64_t> out;
    for (const auto& d : spec.devices) {
      auto it = d.attributes.find(std::string(api::attr::kResourceName));
      out[it == d.attributes.end() ? "" : it->second.toString()]++;
    }
    return out;
  };
  facts.desired = countByResource(result.spec);
  if (state && !isReconfiguring(*state) && state->status.sync_status == "Succeeded") {
    facts.advertised = countByResource(state->spec);
  }
  setFacts(name, std::move(facts));

  if (state && state->spec == result.spec) return ReconcileResult::done();
  bool disruptive = state && isDisruptive(state->spec, result.spec, state->status);
  if (!disruptive) {
    auto written = applyNodeState(*node, result.spec, false);
    if (!written.ok()) return tooLargeOr(name, state.get(), result.spec, written.status());
  } else {
    std::lock_guard lock(rollout_mu_);
    int busy = disruptiveInFlight(name);
    if (busy >= options_.max_unavailable) {
      events_.normal(kube::ObjectReference::of(api::resources::kSriovNodeStates, state->metadata),
                     "WaitingForRollout",
                     "the new configuration recreates VFs on this node; waiting because " +
                         std::to_string(busy) + " node(s) are being reconfigured and " +
                         "--max-unavailable is " + std::to_string(options_.max_unavailable));
      return ReconcileResult::after(options_.rollout_retry);
    }
    auto written = applyNodeState(*node, result.spec, true);
    if (!written.ok()) return tooLargeOr(name, state.get(), result.spec, written.status());
    disruptive_written_[name] = *written;
  }
  {
    // Forget writes the cache has caught up with; the annotation speaks for them from now on.
    std::lock_guard lock(rollout_mu_);
    for (auto it = disruptive_written_.begin(); it != disruptive_written_.end();) {
      auto cached = states_.get(options_.namespace_, it->first);
      bool caught_up = cached && cached->metadata.generation >= it->second;
      bool node_gone = nodes_.get("", it->first) == nullptr;
      it = caught_up || node_gone ? disruptive_written_.erase(it) : std::next(it);
    }
  }
  if (disruptive) {
    events_.normal(kube::ObjectReference::of(api::resources::kSriovNodeStates, state->metadata),
                   "Reconfiguring", "the new configuration recreates VFs on PFs of this node");
  }
  SDRA_VLOG(1) << "node " << name << ": wrote spec with " << result.spec.interfaces.size()
               << " interface(s) and " << result.spec.devices.size() << " device(s)";
  return ReconcileResult::done();
}

Result<ReconcileResult> Operator::tooLargeOr(const std::string& node,
                                             const api::SriovNodeState* state,
                                             const api::SriovNodeStateSpec& spec, Status error) {
  if (error.code() != Code::kTooLarge) return error;
  // Retrying at once cannot help: only a policy change (which requeues the node) or a larger
  // etcd limit can. Say so on the object that does not fit.
  kube::ObjectMeta meta;
  if (state != nullptr) meta = state->metadata;
  meta.namespace_ = options_.namespace_;
  meta.name = node;
  events_.warning(
      kube::ObjectReference::of(api::resources::kSriovNodeStates, meta), "SriovNodeStateTooLarge",
      "the spec for " + std::to_string(spec.devices.size()) +
          " VF(s) makes this object larger than the API server stores (" + error.message() +
          "); lower numVfs of the policies that select the node, or raise etcd's "
          "--max-request-bytes");
  SDRA_LOG_ERROR << "node " << node << ": " << error.toString();
  return ReconcileResult::after(options_.too_large_retry);
}

Result<int64_t> Operator::applyNodeState(const api::Node& node, const api::SriovNodeStateSpec& spec,
                                         bool disruptive) {
  auto doc =
      kube::newObject(api::resources::kSriovNodeStates, options_.namespace_, node.metadata.name);
  auto& a = doc.GetAllocator();
  api::Writer md(doc["metadata"], a);
  md.object("labels").strAlways(kManagedByLabel, kManagedByValue);
  md.object("annotations").strAlways(kDisruptiveAnnotation, disruptive ? "true" : "false");
  if (!node.metadata.uid.empty()) {
    json::Value owners(rapidjson::kArrayType);
    json::Value owner(rapidjson::kObjectType);
    api::Writer(owner, a)
        .strAlways("apiVersion", "v1")
        .strAlways("kind", "Node")
        .strAlways("name", node.metadata.name)
        .strAlways("uid", node.metadata.uid);
    owners.PushBack(owner, a);
    md.value("ownerReferences", std::move(owners));
  }
  spec.encode(api::Writer(doc, a).object("spec"));
  auto applied = client_->apply(api::resources::kSriovNodeStates, options_.namespace_, doc,
                                {.field_manager = kFieldManager, .force = true});
  if (!applied.ok()) return applied.status();
  return kube::ObjectMeta::decode(*applied).generation;
}

Status Operator::deleteNodeState(const std::string& name) {
  Status st = client_->remove(api::resources::kSriovNodeStates, options_.namespace_, name);
  if (st.code() == Code::kNotFound) return Status::ok();
  if (st.isOk())
    SDRA_LOG_INFO << "node " << name << " is gone or not selected: deleted its SriovNodeState";
  return st;
}

Result<ReconcileResult> Operator::reconcileDeviceClasses(const std::string&) {
  auto snapshot = policies();
  auto desired = policy::renderDeviceClasses(snapshot->validated.valid.node_policies,
                                             snapshot->validated.valid.device_attributes,
                                             options_.resource_prefix);
  std::set<std::string> wanted;
  for (const auto& d : desired) {
    wanted.insert(d.name);
    auto existing = classes_.get("", d.name);
    if (existing && existing->spec == d.spec) continue;
    auto doc = kube::newObject(api::resources::kDeviceClasses, "", d.name);
    auto& a = doc.GetAllocator();
    api::Writer(doc["metadata"], a).object("labels").strAlways(kManagedByLabel, kManagedByValue);
    d.spec.encode(api::Writer(doc, a).object("spec"));
    auto applied = client_->apply(api::resources::kDeviceClasses, "", doc,
                                  {.field_manager = kFieldManager, .force = true});
    if (!applied.ok()) return applied.status();
    SDRA_LOG_INFO << "DeviceClass " << d.name << (existing ? " updated" : " created");
  }
  for (const auto& existing : classes_.list()) {
    if (wanted.count(existing->metadata.name) != 0) continue;
    Status st = client_->remove(api::resources::kDeviceClasses, "", existing->metadata.name);
    if (!st.isOk() && st.code() != Code::kNotFound) return st;
    SDRA_LOG_INFO << "DeviceClass " << existing->metadata.name
                  << " deleted: no policy uses its resourceName any more";
  }
  return ReconcileResult::done();
}

Result<ReconcileResult> Operator::reconcilePolicyStatus(const std::string& key) {
  auto slash = key.find('/');
  std::string kind = key.substr(0, slash);
  std::string name = key.substr(slash + 1);
  const kube::ResourceType* rt = nullptr;
  kube::ObjectMeta meta;
  api::PolicyStatus current;
  if (kind == policy::kNodePolicyKind) {
    auto p = node_policies_.get(options_.namespace_, name);
    if (!p) return ReconcileResult::done();
    rt = &api::resources::kSriovNetworkNodePolicies;
    meta = p->metadata;
    current = p->status;
  } else if (kind == policy::kResourcePolicyKind) {
    auto p = resource_policies_.get(options_.namespace_, name);
    if (!p) return ReconcileResult::done();
    rt = &api::resources::kSriovResourcePolicies;
    meta = p->metadata;
    current = p->status;
  } else {
    auto d = device_attributes_.get(options_.namespace_, name);
    if (!d) return ReconcileResult::done();
    rt = &api::resources::kDeviceAttributes;
    meta = d->metadata;
    current = d->status;
  }
  policy::PolicyRef ref{kind, name};
  PolicyFacts facts;
  facts.ref = ref;
  facts.generation = meta.generation;
  auto snapshot = policies();
  for (const auto& inv : snapshot->validated.invalid) {
    if (inv.policy == ref) facts.errors = inv.errors;
  }
  std::set<std::string> warnings;
  for (const auto& w : snapshot->validated.warnings) {
    if (w.policy == ref) warnings.insert(w.message);
  }
  {
    std::lock_guard lock(facts_mu_);
    for (const auto& [node, f] : facts_) {
      auto m = f.matches.find(ref);
      if (m != f.matches.end()) {
        if (kind != policy::kDeviceAttributesKind || m->second > 0) ++facts.matched_nodes;
        facts.matched_devices += m->second;
      }
      for (const auto& c : f.conflicts) {
        if (c.loser == ref) facts.conflicts.push_back({node, c.target, c.winner, c.reason});
      }
      for (const auto& w : f.warnings) {
        if (w.policy == ref) warnings.insert(w.message);
      }
    }
  }
  facts.warnings.assign(warnings.begin(), warnings.end());
  auto computed = computePolicyStatus(facts, current, nowString());
  if (computed == current) return ReconcileResult::done();

  auto doc = kube::newObject(*rt, options_.namespace_, name);
  computed.encode(api::Writer(doc, doc.GetAllocator()).object("status"));
  auto applied = client_->apply(*rt, options_.namespace_, doc,
                                {.field_manager = kFieldManager, .force = true}, "status");
  if (!applied.ok()) {
    if (applied.status().code() == Code::kNotFound) return ReconcileResult::done();
    return applied.status();
  }
  // Events for what changed, on the policy itself.
  auto ref_obj = kube::ObjectReference::of(*rt, meta);
  for (const auto& c : computed.conditions) {
    const api::Condition* before = api::findCondition(current.conditions, c.type);
    bool changed = before == nullptr || before->status != c.status || before->reason != c.reason;
    if (!changed) continue;
    bool degraded = c.type == "Degraded" && c.status == "True";
    bool not_ready = c.type == "Ready" && c.status == "False" && c.reason != "InvalidSpec";
    if (degraded || not_ready) {
      events_.warning(ref_obj, c.reason, c.message);
    } else if (c.type == "Ready" && c.status == "True") {
      events_.normal(ref_obj, c.reason, c.message);
    }
  }
  return ReconcileResult::done();
}

http::Response Operator::handleMutate(const http::Request& req) {
  auto review = parseAdmissionReview(req.body);
  if (!review.ok()) return http::Response::text(400, review.status().message() + "\n");
  return http::Response::json(200, admissionReviewResponse(review->uid, mutatePolicy(*review)));
}

http::Response Operator::handleValidate(const http::Request& req) {
  auto review = parseAdmissionReview(req.body);
  if (!review.ok()) return http::Response::text(400, review.status().message() + "\n");
  auto policies_list = node_policies_.list();
  auto node_list = nodes_.list();
  ValidationContext ctx{options_.namespace_, {}, {}};
  for (const auto& p : policies_list) ctx.node_policies.push_back(p.get());
  for (const auto& n : node_list) ctx.nodes.push_back(n.get());
  auto decision = validatePolicy(*review, ctx);
  if (!decision.allowed) {
    SDRA_LOG_INFO << "admission: rejected " << review->kind << " in " << review->namespace_ << ": "
                  << decision.message;
  }
  return http::Response::json(200, admissionReviewResponse(review->uid, decision));
}

}  // namespace sriovdra::op
