#include "operator/operator.h"

#include "api/names.h"
#include "base/log.h"
#include "base/process.h"
#include "operator/rollout.h"

namespace sriovdra::op {
namespace {

std::string daemonSetName(const OperatorOptions& o) {
  return o.agent_daemonset ? kube::ObjectMeta::decode(*o.agent_daemonset).name : "";
}

// Informer handlers that call `changed` on every add and delete, and on the updates `matters`
// accepts.
template <typename T>
using Ptr = std::shared_ptr<const T>;
template <typename T>
kube::EventHandlers<T> onChange(std::function<void(const Ptr<T>&)> changed,
                                std::function<bool(const Ptr<T>&, const Ptr<T>&)> matters) {
  return {.on_add = changed,
          .on_update =
              [changed, matters](const Ptr<T>& o, const Ptr<T>& n) {
                if (matters(o, n)) changed(n);
              },
          .on_delete = [changed](const Ptr<T>& o, bool) { changed(o); }};
}

template <typename T>
bool generationChanged(const Ptr<T>& o, const Ptr<T>& n) {
  return o->metadata.generation != n->metadata.generation;
}
template <typename T>
bool generationOrLabelsChanged(const Ptr<T>& o, const Ptr<T>& n) {
  return generationChanged<T>(o, n) || o->metadata.labels != n->metadata.labels;
}

}  // namespace

Operator::Operator(std::shared_ptr<kube::Client> client, OperatorOptions options,
                   kube::EventRecorder& events)
    : client_(std::move(client)),
      options_(std::move(options)),
      caches_(client_, options_.namespace_, daemonSetName(options_)),
      network_caches_(client_),
      policies_(caches_),
      webhook_(caches_, options_.namespace_, options_.upstream_namespace),
      node_states_(*client_, options_, events, caches_, policies_, facts_,
                   [this](const std::set<std::string>& keys) { factsChanged(keys); }),
      device_classes_(*client_, options_, caches_, policies_),
      policy_status_(*client_, options_, events, caches_, policies_, facts_),
      alignment_(caches_),
      agent_daemonset_(*client_, options_, caches_),
      networks_(*client_, options_, events, network_caches_),
      agent_policy_(*client_),
      operator_config_(*client_, options_, events, caches_, agent_policy_),
      drain_(*client_, options_, events, caches_, agent_policy_),
      metrics_certificates_(*client_, options_),
      node_controller_("sriovnodestate",
                       [this](const std::string& k) { return node_states_.reconcile(k); },
                       {.workers = options_.workers,
                        .on_drained =
                            [this] {
                              flushStatusKeys();
                              // What the workers' renders and apply documents took (about 0.5
                              // MiB each at 64 VFs per node) goes back to the system.
                              trimHeap();
                            }}),
      class_controller_("deviceclass",
                        [this](const std::string& k) { return device_classes_.reconcile(k); }),
      status_controller_("policystatus",
                         [this](const std::string& k) { return policy_status_.reconcile(k); },
                         {.workers = 2}),
      alignment_controller_("alignment",
                            [this](const std::string& k) { return alignment_.reconcile(k); }),
      agent_controller_("agent-daemonset",
                        [this](const std::string& k) { return agent_daemonset_.reconcile(k); }),
      network_controller_("network",
                          [this](const std::string& k) { return networks_.reconcile(k); },
                          {.workers = 2}),
      config_controller_("operatorconfig",
                         [this](const std::string& k) { return operator_config_.reconcile(k); }),
      drain_controller_("drain", [this](const std::string& k) { return drain_.reconcile(k); },
                        {.workers = 4}),
      metrics_certificate_controller_(
          "metricscertificates",
          [this](const std::string& k) { return metrics_certificates_.reconcile(k); }),
      settle_(options_.policy_settle, options_.policy_settle * kSettleMaxFactor),
      settle_controller_("policysettle", [this](const std::string&) { return settled(); }) {
  wire();
  wireNetworks();
}

Operator::~Operator() { stop(); }

// What enqueues what:
//   Node (added, deleted, labels changed)          -> node state of that node
//   SriovNodeState (added, deleted, spec/status)   -> node state of that node (not when it
//                                                     is this operator's own write coming back)
//   SriovNodeState finished reconfiguring          -> node state of every node (a rollout slot)
//   policy (added, deleted, generation/labels)     -> every node and the device classes once
//                                                     the policies were quiet for policy_settle
//                                                     (operator/settle.h); its status once the
//                                                     render queue drains (or after
//                                                     busy_status_interval)
//   the facts of a node's render changed           -> status of the policies concerned, once
//                                                     the render queue drains (its on_drained
//                                                     event), at the latest after
//                                                     busy_status_interval
//   our DeviceClass changed or deleted             -> the device classes
//   ResourceClaim allocation, any ResourceSlice    -> the alignment metrics, within
//                                                     alignment_interval
//   the agent's DaemonSet changed or deleted       -> the agent DaemonSet
//   SriovOperatorConfig (any change)               -> the config, every node, every drain, the
//                                                     agent DaemonSet
//   SriovNetworkPoolConfig (any change)            -> every node (its rollout limit)
//   SriovNodeState with a disruptive change, a     -> the drain of that node
//   drain mark or a reboot grant; Node cordoned
//   or uncordoned
//   SriovNetwork, SriovIBNetwork (any change)      -> that network
//   NetworkAttachmentDefinition (any change)       -> the networks it concerns (keysForNad)
//   Namespace added                                -> the networks whose NAD belongs there
//   becoming the leader (--metrics-certificates)   -> the metrics certificates, then again at
//                                                     their renewal or after kRecheck
// Long on purpose: one informer handler per row of the table above, in its order.
// NOLINTNEXTLINE(readability-function-size)
void Operator::wire() {
  auto node = [this](const auto& obj) { node_controller_.queue().add(obj->metadata.name); };
  caches_.nodes.addHandlers({.on_add = node,
                             .on_update =
                                 [this, node](const auto& o, const auto& n) {
                                   if (o->metadata.labels != n->metadata.labels) node(n);
                                   if (o->unschedulable != n->unschedulable) {
                                     drain_controller_.queue().add(n->metadata.name);
                                   }
                                 },
                             .on_delete = [node](const auto& o, bool) { node(o); }});
  auto drain = [this](const auto& s) {
    const auto& a = s->metadata.annotations;
    auto d = a.find(kDisruptiveAnnotation);
    if ((d != a.end() && d->second == "true") || a.count(kDrainAnnotation) != 0 ||
        a.count(api::kRebootGrantAnnotation) != 0) {
      drain_controller_.queue().add(s->metadata.name);
    }
  };
  caches_.states.setCompletion([this](const kube::ObjectMeta& meta, const auto& cached) {
    return node_states_.ownWrite(meta, cached);
  });
  caches_.states.addHandlers({.on_add =
                                  [node, drain](const auto& s) {
                                    node(s);
                                    drain(s);
                                  },
                              .on_update =
                                  [this, node, drain](const auto& o, const auto& n) {
                                    // The status is the agent's; the spec is ours unless
                                    // someone else wrote it.
                                    if (!o->sameStatus(*n) || (o->spec_digest != n->spec_digest &&
                                                               !node_states_.isOwnWrite(*n)))
                                      node(n);
                                    if (isReconfiguring(*o) && !isReconfiguring(*n))
                                      enqueueAllNodes(std::chrono::milliseconds(0));
                                    drain(o);
                                    drain(n);
                                  },
                              .on_delete =
                                  [node, drain](const auto& s, bool) {
                                    node(s);
                                    drain(s);  // forgets the marks it wrote
                                  }});

  auto config = [this](const auto&) {
    config_controller_.queue().add(OperatorConfigReconciler::kKey);
    enqueueAllNodes(std::chrono::milliseconds(0));
    for (const auto& key : caches_.states.keys()) {
      drain_controller_.queue().add(kube::splitKey(key).second);
    }
    if (options_.agent_daemonset) agent_controller_.queue().add(daemonSetName(options_));
  };
  caches_.operator_configs.addHandlers(
      onChange<api::SriovOperatorConfig>(config, [](const auto&, const auto&) { return true; }));
  caches_.pool_configs.addHandlers(onChange<api::SriovNetworkPoolConfig>(
      [this](const auto&) { enqueueAllNodes(std::chrono::milliseconds(0)); },
      [](const auto&, const auto&) { return true; }));
  config_controller_.queue().add(OperatorConfigReconciler::kKey);

  auto policy = [this](const char* kind) {
    return [this, kind](const auto& p) { policiesChanged(kind, p->metadata.name); };
  };
  caches_.node_policies.addHandlers(onChange<api::SriovNetworkNodePolicy>(
      policy(policy::kNodePolicyKind), generationOrLabelsChanged<api::SriovNetworkNodePolicy>));
  caches_.resource_policies.addHandlers(onChange<api::SriovResourcePolicy>(
      policy(policy::kResourcePolicyKind), generationChanged<api::SriovResourcePolicy>));
  caches_.device_attributes.addHandlers(onChange<api::DeviceAttributes>(
      policy(policy::kDeviceAttributesKind), generationOrLabelsChanged<api::DeviceAttributes>));

  auto classes = [this] { class_controller_.queue().add(DeviceClassReconciler::kKey); };
  caches_.classes.addHandlers({.on_update = [classes](const auto&, const auto&) { classes(); },
                               .on_delete = [classes](const auto&, bool) { classes(); }});
  classes();

  auto alignment = [this](const auto&) {
    alignment_controller_.queue().addAfter(AlignmentReconciler::kKey, options_.alignment_interval);
  };
  caches_.claims.addHandlers(onChange<api::ResourceClaim>(
      alignment,
      [](const auto& o, const auto& n) { return o->status.allocation != n->status.allocation; }));
  caches_.slices.addHandlers(onChange<scheduling::SlicePlacements>(
      alignment, [](const auto&, const auto&) { return true; }));
  alignment_controller_.queue().add(AlignmentReconciler::kKey);

  if (caches_.daemonsets) {
    std::string name = daemonSetName(options_);
    auto agent = [this, name] { agent_controller_.queue().add(name); };
    caches_.daemonsets->addHandlers({.on_update = [agent](const auto&, const auto&) { agent(); },
                                     .on_delete = [agent](const auto&, bool) { agent(); }});
    agent();
  }
}

void Operator::wireNetworks() {
  auto add = [this](const std::vector<std::string>& keys) {
    for (const auto& k : keys) network_controller_.queue().add(k);
  };
  auto network = [this](const auto& n) { network_controller_.queue().add(networkKey(*n)); };
  auto always = [](const auto&, const auto&) { return true; };
  network_caches_.sriov_networks.addHandlers(onChange<api::SriovNetwork>(network, always));
  network_caches_.ib_networks.addHandlers(onChange<api::SriovIBNetwork>(network, always));
  auto nad = [this, add](const auto& d) { add(networks_.keysForNad(*d)); };
  network_caches_.nads.addHandlers(onChange<api::NetworkAttachmentDefinition>(nad, always));
  network_caches_.namespaces.addHandlers({.on_add = [this, add](const auto& ns) {
    add(networks_.keysForNamespace(ns->metadata.name));
  }});
}

void Operator::startControllers() {
  node_controller_.start();
  class_controller_.start();
  status_controller_.start();
  alignment_controller_.start();
  if (options_.agent_daemonset) agent_controller_.start();
  config_controller_.start();
  drain_controller_.start();
  if (options_.metrics_certificates) {
    metrics_certificate_controller_.queue().add(MetricsCertificateReconciler::kKey);
    metrics_certificate_controller_.start();
  }
  settle_controller_.start();
  network_starter_ =
      std::jthread([this](const std::stop_token& stop) { startNetworkController(stop); });
}

void Operator::startNetworkController(const std::stop_token& stop) {
  constexpr std::chrono::seconds kReportEvery{60};
  while (!network_caches_.waitForSync(kReportEvery, stop)) {
    if (stop.stop_requested()) return;
    SDRA_LOG_WARN << "SriovNetworks, SriovIBNetworks or Namespaces cannot be listed yet: networks "
                     "are not rendered until they can (are the CRDs of config/crd installed?)";
  }
  network_controller_.start();
}

void Operator::stop() {
  if (network_starter_.joinable()) {
    network_starter_.request_stop();
    network_starter_.join();
  }
  network_controller_.stop();
  node_controller_.stop();
  class_controller_.stop();
  status_controller_.stop();
  alignment_controller_.stop();
  agent_controller_.stop();
  config_controller_.stop();
  drain_controller_.stop();
  metrics_certificate_controller_.stop();
  settle_controller_.stop();
  caches_.stop();
  network_caches_.stop();
}

void Operator::enqueueAllNodes(std::chrono::milliseconds delay) {
  auto& queue = node_controller_.queue();
  for (const auto& key : caches_.nodes.keys()) queue.addAfter(key, delay);
  for (const auto& key : caches_.states.keys()) queue.addAfter(kube::splitKey(key).second, delay);
}

void Operator::policiesChanged(const std::string& kind, const std::string& name) {
  policies_.invalidate();
  std::string key = policyStatusKey(kind, name);
  if (caches_.nodes.size() == 0 && caches_.states.size() == 0) {
    status_controller_.queue().addAfter(key, options_.policy_settle);  // no render will follow
  } else {
    deferStatus({key});  // written once the nodes it concerns are rendered
  }
  settle_.changed(std::chrono::steady_clock::now());
  settle_controller_.queue().addAfter(kSettleKey, options_.policy_settle);
}

Result<kube::ReconcileResult> Operator::settled() {
  auto wait = settle_.wait(std::chrono::steady_clock::now());
  if (wait.count() > 0) return kube::ReconcileResult::after(wait);
  class_controller_.queue().add(DeviceClassReconciler::kKey);
  enqueueAllNodes(std::chrono::milliseconds(0));
  return kube::ReconcileResult::done();
}

// Called by a node reconcile, so the render queue's on_drained follows.
void Operator::factsChanged(const std::set<std::string>& keys) { deferStatus(keys); }

void Operator::deferStatus(const std::set<std::string>& keys) {
  std::lock_guard lock(status_mu_);
  for (const auto& k : keys) {
    status_controller_.queue().addAfter(k, options_.busy_status_interval);
    pending_status_.insert(k);
  }
}

void Operator::flushStatusKeys() {
  std::set<std::string> keys;
  {
    std::lock_guard lock(status_mu_);
    keys.swap(pending_status_);
  }
  for (const auto& k : keys) status_controller_.queue().add(k);
}

}  // namespace sriovdra::op
