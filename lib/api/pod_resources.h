#pragma once
// What `explain` reads of a Pod, or of a workload's pod template (Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job: spec.template; CronJob: spec.jobTemplate.spec.template): its
// containers' resource requests, with which kube-scheduler makes a ResourceClaim for the
// extended resources DeviceClasses back (scheduling/extended_resources.h), and the claims the pod
// names. A container's limit stands for a missing request of the same resource, as the API
// server defaults it. Pure.
#include <map>
#include <string>
#include <vector>

#include "api/codec.h"
#include "kube/object_meta.h"

namespace sriovdra::api {

struct ContainerResources {
  std::string name;
  bool init = false;     // an init container
  bool sidecar = false;  // an init container with restartPolicy Always: runs beside the others
  std::map<std::string, std::string> requests;  // resource name -> quantity, as written
};

struct PodResources {
  std::string kind;                            // Pod, Deployment, ...
  kube::ObjectMeta metadata;                   // of the object read (the workload for a template)
  std::vector<ContainerResources> containers;  // init containers first, in order, then the rest
  std::vector<std::string> claims;             // the pod's spec.resourceClaims, by name
  // Whether the object is a Pod (v1) or one of the workloads above (apps/v1, batch/v1).
  static bool reads(const json::Value& v);
  static Result<PodResources> decode(const json::Value& v);
};

}  // namespace sriovdra::api
