#pragma once
// Names a REST resource (group, version, plural, kind, scope) and builds its request paths:
//   /api/v1/namespaces/ns/configmaps/name, /apis/group/version/plural/name/status.
// The kinds the project talks to are listed in resources::.
//
// A namespace, name or subresource is one path segment, and it usually comes from an object
// someone else wrote. It is checked, never encoded: kube-apiserver decodes "%2F" before it routes
// a request, so an encoded name still steers the path. A segment is refused (kInvalidArgument,
// the value escaped in the message) unless it is what kube-apiserver accepts as a name in a path
// (not "." or "..", no "/" or "%") written with URL path characters only (RFC 3986 pchar:
// letters, digits, "-._~!$&'()*+,;=:@"), at most 253 bytes. Every name Kubernetes validates
// (DNS labels and subdomains, RBAC's "system:node:x") passes; CR, LF, spaces, "?" and "#" never do.
#include <string>
#include <string_view>

#include "base/status.h"

namespace sriovdra::kube {

struct ResourceType {
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string plural;   // "configmaps"
  std::string kind;     // "ConfigMap"
  bool namespaced = true;

  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
  // Collection path; ns is ignored for cluster-scoped kinds and "" lists all namespaces.
  Result<std::string> collectionPath(std::string_view ns) const;
  // name is required; subresource "" leaves it out.
  Result<std::string> objectPath(std::string_view ns, std::string_view name,
                                 std::string_view subresource = {}) const;
  // "configmaps" or "leases.coordination.k8s.io", as kubectl and RBAC name it.
  std::string qualifiedName() const { return group.empty() ? plural : plural + "." + group; }
};

// Ok when value can be one segment of a request path (see above); what names it in the message
// ("name", "namespace").
Status checkPathSegment(std::string_view value, std::string_view what);

namespace resources {
extern const ResourceType kNamespaces;
extern const ResourceType kConfigMaps;
extern const ResourceType kSecrets;
extern const ResourceType kNodes;
extern const ResourceType kPods;
extern const ResourceType kEvents;
extern const ResourceType kServiceAccounts;
extern const ResourceType kLeases;
extern const ResourceType kCustomResourceDefinitions;
extern const ResourceType kClusterRoles;
extern const ResourceType kClusterRoleBindings;
extern const ResourceType kRoles;
extern const ResourceType kRoleBindings;
extern const ResourceType kValidatingWebhookConfigurations;
extern const ResourceType kMutatingWebhookConfigurations;
}  // namespace resources

}  // namespace sriovdra::kube
