#pragma once
// Keeps the NetworkAttachmentDefinition (NAD) of every SriovNetwork and SriovIBNetwork, as the
// SR-IOV network operator does (its generic network controller), with policy::renderNetAttachDef:
//  - the NAD is applied in the target namespace once that namespace exists (server-side apply:
//    the config and our annotations are ours, anything else others set stays); a hand edit of the
//    config is put back and a deleted NAD is recreated;
//  - a network in the operator namespace carries the finalizer policy::kNetAttachDefFinalizer and
//    the last-network-namespace annotation: moving networkNamespace deletes the NAD in the old
//    namespace, deleting the network deletes its NAD before the finalizer goes; an annotation
//    that is not a namespace name (someone edited it) names no NAD and sends no request;
//  - a network in another namespace renders into its own namespace with an ownerReference (the
//    garbage collector deletes the NAD with it) and may not set networkNamespace;
//  - a NAD of the same name whose owner-ref annotation names another network is never touched,
//    except the one the SR-IOV network operator rendered for this network's namesake in
//    --upstream-namespace: it is taken over in place (Adopted Event); networks in that namespace
//    are that operator's and are not reconciled here;
//  - status.conditions[Ready] says which: NetworkReady, NamespaceNotFound,
//    NetworkAttachmentDefinitionInvalid (the spec cannot be rendered, or the name is taken) or
//    NetworkAttachmentDefinitionNotFound (NADs not served, or the write failed: retried). A
//    network in the operator namespace also gets an Event when Ready changes.
// Keys: networkKey(). Thread-safe for distinct keys (a Controller never runs one key twice at
// once); reads only the caches, writes only what differs from them.
#include <optional>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/controller.h"
#include "kube/events.h"
#include "operator/caches.h"
#include "operator/options.h"
#include "policy/networks.h"

namespace sriovdra::op {

// "<Kind>/<namespace>/<name>".
std::string networkKey(api::NetworkKind kind, const std::string& ns, const std::string& name);
std::string networkKey(const api::Network& n);

class NetworkReconciler {
 public:
  NetworkReconciler(kube::Client& client, const OperatorOptions& options,
                    kube::EventRecorder& events, const NetworkCaches& caches)
      : client_(client), options_(options), events_(events), caches_(caches) {}
  Result<kube::ReconcileResult> reconcile(const std::string& key);

  // The keys of the networks a NAD event concerns: the network its owner-ref names, and networks
  // of its name in its namespace or in the operator namespace (as upstream maps them).
  std::vector<std::string> keysForNad(const api::NetworkAttachmentDefinition& nad) const;
  // The keys of the networks whose NAD belongs in namespace `ns`.
  std::vector<std::string> keysForNamespace(const std::string& ns) const;

 private:
  // The Ready condition a pass ends with; retry_after when it should look again by itself.
  struct Readiness {
    std::string status;  // True | False
    std::string reason;
    std::string message;
    std::optional<std::chrono::seconds> retry_after;
  };

  std::optional<api::Network> find(api::NetworkKind kind, const std::string& ns,
                                   const std::string& name) const;
  Result<kube::ReconcileResult> finalize(const api::Network& n);
  // Everything after the finalizer: the NAD rendered, written where it belongs, or why not.
  // An error is an API failure worth retrying.
  Result<Readiness> provision(const api::Network& n);
  // Deletes the NAD ns/name unless another network owns it; a missing NAD is fine.
  Status deleteOwnedNad(const api::Network& n, const std::string& ns);
  Status applyNad(const api::Network& n, const policy::NetAttachDef& nad);
  Status patchMetadata(const api::Network& n, const json::Document& patch);
  // Sets the Ready condition (status subresource) when it differs; Events on a change.
  Status report(const api::Network& n, const Readiness& ready);

  kube::Client& client_;
  const OperatorOptions& options_;
  kube::EventRecorder& events_;
  const NetworkCaches& caches_;
};

}  // namespace sriovdra::op
