#pragma once
// Names a REST resource (group, version, plural, kind, scope) and builds its request paths:
//   /api/v1/namespaces/ns/configmaps/name, /apis/group/version/plural/name/status.
// The kinds the project talks to are listed in resources::.
#include <string>
#include <string_view>

namespace sriovdra::kube {

struct ResourceType {
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string plural;   // "configmaps"
  std::string kind;     // "ConfigMap"
  bool namespaced = true;

  std::string apiVersion() const { return group.empty() ? version : group + "/" + version; }
  // Collection path; ns is ignored for cluster-scoped kinds and "" lists all namespaces.
  std::string collectionPath(std::string_view ns) const;
  std::string objectPath(std::string_view ns, std::string_view name,
                         std::string_view subresource = {}) const;
  // "configmaps" or "leases.coordination.k8s.io", as kubectl and RBAC name it.
  std::string qualifiedName() const { return group.empty() ? plural : plural + "." + group; }
};

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
