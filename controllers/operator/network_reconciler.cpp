#include "operator/network_reconciler.h"

#include <algorithm>

#include "api/names.h"
#include "base/log.h"
#include "base/names.h"
#include "base/strings.h"
#include "base/time.h"

namespace sriovdra::op {
namespace {

using kube::ReconcileResult;

constexpr const char* kReady = "Ready";
constexpr const char* kNetworkReady = "NetworkReady";
constexpr const char* kNamespaceNotFound = "NamespaceNotFound";
constexpr const char* kNadInvalid = "NetworkAttachmentDefinitionInvalid";
constexpr const char* kNadNotFound = "NetworkAttachmentDefinitionNotFound";
// While NADs cannot be listed (their CRD is not installed), the network is looked at again this
// often.
constexpr std::chrono::seconds kNadsUnservedRetry{10};

const kube::ResourceType& resourceOf(api::NetworkKind kind) {
  return kind == api::NetworkKind::kSriov ? api::resources::kSriovNetworks
                                          : api::resources::kSriovIBNetworks;
}

bool hasFinalizer(const api::Network& n) {
  const auto& f = n.metadata.finalizers;
  return std::find(f.begin(), f.end(), policy::kNetAttachDefFinalizer) != f.end();
}

std::string nadName(const std::string& ns, const std::string& name) { return ns + "/" + name; }

// Whether the NAD in the cache already is what we would apply.
bool upToDate(const api::NetworkAttachmentDefinition& have, const policy::NetAttachDef& want,
              const std::string& owner_uid) {
  if (have.config != want.config) return false;
  for (const auto& [k, v] : want.annotations) {
    auto it = have.metadata.annotations.find(k);
    if (it == have.metadata.annotations.end() || it->second != v) return false;
  }
  if (!want.annotations.count(api::kNadResourceNameAnnotation) &&
      have.metadata.annotations.count(api::kNadResourceNameAnnotation)) {
    return false;
  }
  if (owner_uid.empty()) return true;
  return std::any_of(have.metadata.owner_references.begin(), have.metadata.owner_references.end(),
                     [&](const kube::OwnerReference& r) { return r.uid == owner_uid; });
}

}  // namespace

std::string networkKey(api::NetworkKind kind, const std::string& ns, const std::string& name) {
  return std::string(kind == api::NetworkKind::kSriov ? "SriovNetwork" : "SriovIBNetwork") + "/" +
         ns + "/" + name;
}

std::string networkKey(const api::Network& n) {
  return networkKey(n.kind, n.metadata.namespace_, n.metadata.name);
}

std::optional<api::Network> NetworkReconciler::find(api::NetworkKind kind, const std::string& ns,
                                                    const std::string& name) const {
  if (kind == api::NetworkKind::kSriov) {
    if (auto n = caches_.sriov_networks.get(ns, name)) return *n;
  } else if (auto n = caches_.ib_networks.get(ns, name)) {
    return *n;
  }
  return std::nullopt;
}

std::vector<std::string> NetworkReconciler::keysForNad(
    const api::NetworkAttachmentDefinition& nad) const {
  std::vector<std::string> keys;
  auto owner = nad.metadata.annotations.find(policy::kOwnerRefAnnotation);
  if (owner != nad.metadata.annotations.end()) {
    if (auto ref = policy::parseOwnerRef(owner->second)) {
      keys.push_back(networkKey(ref->kind, ref->namespace_, ref->name));
    }
  }
  for (auto kind : {api::NetworkKind::kSriov, api::NetworkKind::kInfiniBand}) {
    for (const auto& ns : {nad.metadata.namespace_, options_.namespace_}) {
      if (find(kind, ns, nad.metadata.name))
        keys.push_back(networkKey(kind, ns, nad.metadata.name));
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::vector<std::string> NetworkReconciler::keysForNamespace(const std::string& ns) const {
  std::vector<std::string> keys;
  for (const auto& n : caches_.sriov_networks.list()) {
    if (policy::targetNamespace(*n) == ns) keys.push_back(networkKey(*n));
  }
  for (const auto& n : caches_.ib_networks.list()) {
    if (policy::targetNamespace(*n) == ns) keys.push_back(networkKey(*n));
  }
  return keys;
}

Result<ReconcileResult> NetworkReconciler::reconcile(const std::string& key) {
  auto first = key.find('/');
  auto last = key.rfind('/');
  auto kind = key.substr(0, first) == "SriovNetwork" ? api::NetworkKind::kSriov
                                                     : api::NetworkKind::kInfiniBand;
  auto found = find(kind, key.substr(first + 1, last - first - 1), key.substr(last + 1));
  if (!found) return ReconcileResult::done();
  const api::Network& n = *found;
  // The SR-IOV network operator's own, while both run.
  if (!options_.upstream_namespace.empty() &&
      n.metadata.namespace_ == options_.upstream_namespace) {
    return ReconcileResult::done();
  }
  if (!n.metadata.deletion_timestamp.empty()) return finalize(n);
  if (n.metadata.namespace_ == options_.namespace_ && !hasFinalizer(n)) {
    json::Document patch(rapidjson::kObjectType);
    auto finalizers = n.metadata.finalizers;
    finalizers.push_back(policy::kNetAttachDefFinalizer);
    api::Writer(patch, patch.GetAllocator())
        .object("metadata")
        .strAlways("resourceVersion", n.metadata.resource_version)
        .strings("finalizers", finalizers);
    if (Status st = patchMetadata(n, patch); !st.isOk()) return st;
  }
  auto ready = provision(n);
  if (!ready.ok()) {
    Status reported =
        report(n, {"False", kNadNotFound,
                   "Failed to provision network: " + ready.status().message() + " (retrying)"});
    if (!reported.isOk()) SDRA_LOG_WARN << reported.message();
    return ready.status();
  }
  if (Status st = report(n, *ready); !st.isOk()) return st;
  if (ready->retry_after) return ReconcileResult::after(*ready->retry_after);
  return ReconcileResult::done();
}

// Render, move out of the last namespace, wait for the target namespace and the NAD cache,
// respect a foreign owner, apply, remember the namespace: each step either ends with the Ready
// condition it leads to or goes on.
Result<NetworkReconciler::Readiness> NetworkReconciler::provision(const api::Network& n) {
  bool in_operator_namespace = n.metadata.namespace_ == options_.namespace_;
  if (!n.spec.network_namespace.empty() && !in_operator_namespace) {
    return Readiness{"False", kNadInvalid,
                     policy::validateNetwork(n, options_.namespace_).errors.front()};
  }
  auto nad = policy::renderNetAttachDef(n, options_.resource_prefix);
  if (!nad.ok()) return Readiness{"False", kNadInvalid, nad.status().message()};
  std::string where = nadName(nad->namespace_, nad->name);
  auto last_ns = n.metadata.annotations.find(policy::kLastNetworkNamespaceAnnotation);
  bool moved = last_ns == n.metadata.annotations.end() || last_ns->second != nad->namespace_;
  if (in_operator_namespace && last_ns != n.metadata.annotations.end() && moved) {
    SDRA_RETURN_IF_ERROR(deleteOwnedNad(n, last_ns->second));
  }
  if (!caches_.namespaces.get("", nad->namespace_)) {
    return Readiness{"False", kNamespaceNotFound,
                     "Waiting for target namespace " + nad->namespace_ + " to be created"};
  }
  if (!caches_.nads.hasSynced()) {
    return Readiness{"False", kNadNotFound,
                     "NetworkAttachmentDefinitions (k8s.cni.cncf.io/v1) cannot be listed yet: is "
                     "their CRD installed (it comes with Multus)?",
                     kNadsUnservedRetry};
  }
  auto existing = caches_.nads.get(nad->namespace_, nad->name);
  std::string adopted_from;
  if (existing) {
    auto owner = existing->metadata.annotations.find(policy::kOwnerRefAnnotation);
    if (owner != existing->metadata.annotations.end() && !owner->second.empty() &&
        owner->second != nad->annotations.at(policy::kOwnerRefAnnotation)) {
      auto namesake = policy::namesakeNamespace(owner->second, n);
      bool upstream_copy = namesake && !options_.upstream_namespace.empty() &&
                           *namesake == options_.upstream_namespace;
      if (!upstream_copy) {
        std::string hint;
        if (namesake) {
          hint =
              "; if that is the SR-IOV network operator's network, run this operator with "
              "--upstream-namespace=" +
              *namesake + " to take the NetworkAttachmentDefinition over (docs/migration.md)";
        }
        return Readiness{"False", kNadInvalid,
                         "NetworkAttachmentDefinition '" + where +
                             "' already exists and is owned by " + owner->second + hint};
      }
      adopted_from = owner->second;
    }
  }
  std::string owner_uid = in_operator_namespace ? "" : n.metadata.uid;
  if (!existing || !upToDate(*existing, *nad, owner_uid)) {
    if (Status st = applyNad(n, *nad); !st.isOk()) {
      return Status(st.code(),
                    "writing NetworkAttachmentDefinition " + where + ": " + st.message());
    }
    SDRA_LOG_INFO << "NetworkAttachmentDefinition " << where << (existing ? " updated" : " created")
                  << " for " << n.kindName() << " "
                  << nadName(n.metadata.namespace_, n.metadata.name);
  }
  if (!adopted_from.empty()) {
    events_.normal(kube::ObjectReference::of(resourceOf(n.kind), n.metadata), "Adopted",
                   "took over NetworkAttachmentDefinition " + where + " from " + adopted_from +
                       " (the SR-IOV network operator's); pods keep using it");
  }
  if (in_operator_namespace && moved) {
    json::Document patch(rapidjson::kObjectType);
    api::Writer(patch, patch.GetAllocator())
        .object("metadata")
        .object("annotations")
        .strAlways(policy::kLastNetworkNamespaceAnnotation, nad->namespace_);
    SDRA_RETURN_IF_ERROR(patchMetadata(n, patch));
  }
  return Readiness{"True", kNetworkReady,
                   "NetworkAttachmentDefinition " + where + " is provisioned and ready"};
}

Result<ReconcileResult> NetworkReconciler::finalize(const api::Network& n) {
  if (!hasFinalizer(n)) return ReconcileResult::done();
  std::string target = policy::targetNamespace(n);
  if (Status st = deleteOwnedNad(n, target); !st.isOk()) return st;
  auto last_ns = n.metadata.annotations.find(policy::kLastNetworkNamespaceAnnotation);
  if (last_ns != n.metadata.annotations.end() && last_ns->second != target) {
    if (Status st = deleteOwnedNad(n, last_ns->second); !st.isOk()) return st;
  }
  std::vector<std::string> finalizers;
  for (const auto& f : n.metadata.finalizers) {
    if (f != policy::kNetAttachDefFinalizer) finalizers.push_back(f);
  }
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  for (const auto& f : finalizers) list.PushBack(json::str(f, a), a);
  api::Writer(patch, a)
      .object("metadata")
      .strAlways("resourceVersion", n.metadata.resource_version)
      .value("finalizers", std::move(list));
  Status st = patchMetadata(n, patch);
  if (!st.isOk() && st.code() != Code::kNotFound) return st;
  return ReconcileResult::done();
}

Status NetworkReconciler::deleteOwnedNad(const api::Network& n, const std::string& ns) {
  if (!isDnsLabel(ns)) {
    // Only an edited last-network-namespace annotation names one; no namespace has that name,
    // so there is nothing to delete, and the request is never sent.
    SDRA_LOG_WARN << n.kindName() << " " << nadName(n.metadata.namespace_, n.metadata.name)
                  << ": no NetworkAttachmentDefinition to delete in \"" << printable(ns)
                  << "\", which is not a namespace name";
    return Status::ok();
  }
  const auto& rt = api::resources::kNetworkAttachmentDefinitions;
  auto got = client_.get(rt, ns, n.metadata.name);
  if (!got.ok()) return got.status().code() == Code::kNotFound ? Status::ok() : got.status();
  auto meta = kube::ObjectMeta::decode(*got);
  auto owner = meta.annotations.find(policy::kOwnerRefAnnotation);
  if (owner != meta.annotations.end() && !owner->second.empty() &&
      owner->second != policy::ownerRef(n)) {
    SDRA_LOG_INFO << "NetworkAttachmentDefinition " << nadName(ns, meta.name) << " left alone: "
                  << "it belongs to " << owner->second;
    return Status::ok();
  }
  Status st = client_.remove(rt, ns, meta.name, {.precondition_uid = meta.uid});
  if (!st.isOk() && st.code() != Code::kNotFound) return st;
  SDRA_LOG_INFO << "NetworkAttachmentDefinition " << nadName(ns, meta.name) << " deleted for "
                << n.kindName() << " " << nadName(n.metadata.namespace_, n.metadata.name);
  return Status::ok();
}

Status NetworkReconciler::applyNad(const api::Network& n, const policy::NetAttachDef& nad) {
  const auto& rt = api::resources::kNetworkAttachmentDefinitions;
  auto doc = kube::newObject(rt, nad.namespace_, nad.name);
  auto& a = doc.GetAllocator();
  json::Value& metadata = doc["metadata"];
  metadata.AddMember("annotations", kube::encodeStringMap(nad.annotations, a), a);
  if (nad.namespace_ == n.metadata.namespace_ && n.metadata.namespace_ != options_.namespace_) {
    json::Value refs(rapidjson::kArrayType);
    json::Value ref(rapidjson::kObjectType);
    const auto& owner_rt = resourceOf(n.kind);
    api::Writer(ref, a)
        .strAlways("apiVersion", owner_rt.apiVersion())
        .strAlways("kind", owner_rt.kind)
        .strAlways("name", n.metadata.name)
        .strAlways("uid", n.metadata.uid);
    refs.PushBack(ref, a);
    metadata.AddMember("ownerReferences", refs, a);
  }
  api::Writer(doc, a).object("spec").strAlways("config", nad.config);
  auto applied =
      client_.apply(rt, nad.namespace_, doc, {.field_manager = kFieldManager, .force = true});
  return applied.ok() ? Status::ok() : applied.status();
}

Status NetworkReconciler::patchMetadata(const api::Network& n, const json::Document& patch) {
  auto patched =
      client_.patch(resourceOf(n.kind), n.metadata.namespace_, n.metadata.name,
                    kube::PatchType::kMerge, json::dump(patch), {.field_manager = kFieldManager});
  return patched.ok() ? Status::ok() : patched.status();
}

Status NetworkReconciler::report(const api::Network& n, const Readiness& ready) {
  const auto& [status, reason, message, retry_after] = ready;
  auto conditions = n.status.conditions;
  const api::Condition* before = api::findCondition(conditions, kReady);
  bool transition = before == nullptr || before->status != status || before->reason != reason;
  api::Condition condition{kReady, status, reason, message, "", n.metadata.generation};
  if (!api::setCondition(conditions, condition, nowRfc3339())) {
    return Status::ok();
  }
  const auto& rt = resourceOf(n.kind);
  auto doc = kube::newObject(rt, n.metadata.namespace_, n.metadata.name);
  api::NetworkStatus{conditions}.encode(api::Writer(doc, doc.GetAllocator()).object("status"));
  auto applied = client_.apply(rt, n.metadata.namespace_, doc,
                               {.field_manager = kFieldManager, .force = true}, "status");
  if (!applied.ok()) {
    return applied.status().code() == Code::kNotFound ? Status::ok() : applied.status();
  }
  if (transition && n.metadata.namespace_ == options_.namespace_) {
    auto ref = kube::ObjectReference::of(rt, n.metadata);
    if (status == "True") {
      events_.normal(ref, reason, message);
    } else {
      events_.warning(ref, reason, message);
    }
  }
  return Status::ok();
}

}  // namespace sriovdra::op
