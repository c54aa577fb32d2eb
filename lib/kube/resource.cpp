#include "kube/resource.h"

namespace sriovdra::kube {

std::string ResourceType::collectionPath(std::string_view ns) const {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !ns.empty()) {
    path += "/namespaces/";
    path += ns;
  }
  path += "/";
  path += plural;
  return path;
}

std::string ResourceType::objectPath(std::string_view ns, std::string_view name,
                                     std::string_view subresource) const {
  std::string path = collectionPath(ns);
  path += "/";
  path += name;
  if (!subresource.empty()) {
    path += "/";
    path += subresource;
  }
  return path;
}

namespace resources {
const ResourceType kNamespaces{"", "v1", "namespaces", "Namespace", false};
const ResourceType kConfigMaps{"", "v1", "configmaps", "ConfigMap", true};
const ResourceType kSecrets{"", "v1", "secrets", "Secret", true};
const ResourceType kNodes{"", "v1", "nodes", "Node", false};
const ResourceType kPods{"", "v1", "pods", "Pod", true};
const ResourceType kEvents{"", "v1", "events", "Event", true};
const ResourceType kServiceAccounts{"", "v1", "serviceaccounts", "ServiceAccount", true};
const ResourceType kLeases{"coordination.k8s.io", "v1", "leases", "Lease", true};
const ResourceType kCustomResourceDefinitions{
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};
const ResourceType kClusterRoles{"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
                                 false};
const ResourceType kClusterRoleBindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings",
                                        "ClusterRoleBinding", false};
const ResourceType kRoles{"rbac.authorization.k8s.io", "v1", "roles", "Role", true};
const ResourceType kRoleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding",
                                 true};
const ResourceType kValidatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                    "validatingwebhookconfigurations",
                                                    "ValidatingWebhookConfiguration", false};
const ResourceType kMutatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                  "mutatingwebhookconfigurations",
                                                  "MutatingWebhookConfiguration", false};
}  // namespace resources

}  // namespace sriovdra::kube
