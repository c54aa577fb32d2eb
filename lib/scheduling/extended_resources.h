#pragma once
// Extended resources backed by DRA (DRAExtendedResource, GA in Kubernetes 1.37) as kube-scheduler
// 1.37 turns them into a ResourceClaim (plugins/dynamicresources/extendeddynamicresources.go):
// - A DeviceClass backs the extended resource named in its spec.extendedResourceName (when two
//   name the same one, the newer class wins, then the lower name) and, always, the implicit
//   "deviceclass.resource.kubernetes.io/<class name>".
// - On a node whose status.allocatable has the resource (a device plugin's), the node serves it
//   (NodeResourcesFit: "Insufficient X" when the allocatable is less than the pod's request); a
//   resource that no class backs and the node does not have keeps the pod off the node ("cannot
//   fit resource"). The claim may differ per node for that reason.
// - Differences: request indexes count the requests written in the file, not cpu or memory a
//   LimitRange adds; an older class that loses a name to a newer one keeps its implicit name
//   here, where kube-scheduler's cache may drop it depending on the order it saw the classes.
// - Each long-running container (regular, or an init container with restartPolicy Always) asks
//   for its own devices: request "container-<i>-request-<j>" (i: the container's index, init
//   containers first; j: the resource's index among the container's sorted request names),
//   exactly `count` devices of the class, no selectors, constraints or tolerations. An init
//   container that runs to completion first reuses the requests of the long-running containers
//   after it and asks only for the rest; of those, the largest request serves every init
//   container. Requests are sorted by name. Quantities that are zero or not whole are skipped.
// Pure.
#include <map>
#include <string>
#include <vector>

#include "api/objects.h"
#include "api/pod_resources.h"
#include "api/resource.h"

namespace sriovdra::scheduling {

inline constexpr std::string_view kImplicitExtendedResourcePrefix =
    "deviceclass.resource.kubernetes.io/";

// Whether kube-scheduler reads `name` as an extended resource DRA may serve: a domain-qualified
// name outside kubernetes.io, or an implicit class name.
bool isDraExtendedResourceName(const std::string& name);

// Extended resource name -> the DeviceClass that backs it (pointers into `classes`).
std::map<std::string, const api::DeviceClass*> extendedResourceClasses(
    const std::vector<api::DeviceClass>& classes);

struct ExtendedResourceClaim {
  api::ResourceClaimSpec spec;  // no requests: nothing for DRA to allocate on the node
  struct Mapping {
    std::string container, resource, request;
  };
  std::vector<Mapping> mappings;           // which request serves which container's resource
  std::vector<std::string> device_plugin;  // resources the node's allocatable serves instead
  // Why the node cannot take the pod: "cannot fit resource X" (nothing serves it) or
  // "Insufficient X" (the node's allocatable is less than the pod asks for; the pods already on
  // the node are not counted).
  std::string unfit;
  bool any = false;     // the pod asks for a resource some DeviceClass backs (else nothing applies)
  std::string invalid;  // a quantity of an extended resource that does not parse
};

// The claim kube-scheduler makes for the pod on a node with this allocatable (extended
// resources only: name -> quantity).
ExtendedResourceClaim extendedResourceClaim(
    const api::PodResources& pod, const std::map<std::string, const api::DeviceClass*>& classes,
    const std::map<std::string, std::string>& allocatable);

}  // namespace sriovdra::scheduling
