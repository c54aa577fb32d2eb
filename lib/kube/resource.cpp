#include "kube/resource.h"

#include <algorithm>

#include "base/strings.h"

namespace sriovdra::kube {

namespace {

constexpr size_t kMaxSegmentBytes = 253;

bool pathChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-._~!$&'()*+,;=:@").find(c) != std::string_view::npos;
}

}  // namespace

Status checkPathSegment(std::string_view value, std::string_view what) {
  auto refuse = [&](std::string_view why) {
    return Status(Code::kInvalidArgument,
                  std::string(what) + " \"" + printable(value) + "\" " + std::string(why));
  };
  if (value.empty()) return refuse("is empty");
  if (value == "." || value == "..") return refuse("may not be \".\" or \"..\"");
  if (value.size() > kMaxSegmentBytes) {
    return refuse("is longer than " + std::to_string(kMaxSegmentBytes) + " bytes");
  }
  if (!std::all_of(value.begin(), value.end(), pathChar)) {
    return refuse(
        "is not a Kubernetes object name (letters, digits and \"-._~!$&'()*+,;=:@\" only; no "
        "\"/\", \"%\", spaces or control characters)");
  }
  return Status::ok();
}

Result<std::string> ResourceType::collectionPath(std::string_view ns) const {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !ns.empty()) {
    SDRA_RETURN_IF_ERROR(checkPathSegment(ns, "namespace"));
    path += "/namespaces/";
    path += ns;
  }
  path += "/";
  path += plural;
  return path;
}

Result<std::string> ResourceType::objectPath(std::string_view ns, std::string_view name,
                                             std::string_view subresource) const {
  auto path = collectionPath(ns);
  if (!path.ok()) return path;
  SDRA_RETURN_IF_ERROR(checkPathSegment(name, kind + " name"));
  *path += "/";
  *path += name;
  if (!subresource.empty()) {
    SDRA_RETURN_IF_ERROR(checkPathSegment(subresource, "subresource"));
    *path += "/";
    *path += subresource;
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
