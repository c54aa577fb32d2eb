#pragma once
// What a user does on a cluster with DRA, against the real kube-scheduler and
// kube-controller-manager of the shared e2e control plane: pods that use a ResourceClaimTemplate
// or a named ResourceClaim, and what became of them (the node they were bound to, the claim the
// resourceclaim controller made, the scheduler's reason when they stay Pending).
#include <map>
#include <string>

#include "api/resource.h"
#include "support/control_plane.h"

namespace sriovdra::testing {

// One control plane per e2e binary: etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler, with the users of OperatorEnv::controlPlaneOptions().
ControlPlane& schedulingControlPlane();

class Workloads {
 public:
  // Pods go to namespace `ns` and to nodes carrying `node_selector`.
  Workloads(ControlPlane& cp, std::string ns, std::map<std::string, std::string> node_selector);

  // A pod whose one claim "gpu-nic" comes from the template (resourceClaimTemplateName) or is
  // the named ResourceClaim (resourceClaimName).
  void podFromTemplate(const std::string& pod, const std::string& claim_template);
  void podWithClaim(const std::string& pod, const std::string& claim);
  // A pod without claims whose containers (a JSON array) ask for extended resources.
  void podWithContainers(const std::string& pod, const std::string& containers_json);
  // A ResourceClaim with the given spec (YAML of the claim's spec).
  void claim(const std::string& name, const std::string& spec_yaml);

  struct Outcome {
    std::string node;                   // bound to this node, or
    std::string unschedulable_message;  // the scheduler's reason for leaving it Pending, or
    std::string error;                  // the error it failed the pod with (SchedulerError)
  };
  // Waits until the scheduler bound the pod, marked it Unschedulable (which is final only when
  // the scheduler had seen the pod's nodes and slices before) or failed it with an error.
  Outcome waitOutcome(const std::string& pod);
  // Waits until the scheduler bound the pod; returns the node.
  std::string waitScheduled(const std::string& pod);
  // Waits until the scheduler marked the pod Unschedulable; returns its message.
  std::string waitUnschedulable(const std::string& pod);
  // The claim of the pod (made by the resourceclaim controller for a template).
  api::ResourceClaim claimOf(const std::string& pod);

  // An attribute's value as a string, as the device's ResourceSlice publishes it ("" if none).
  std::string attribute(const api::DeviceRequestAllocationResult& device,
                        const std::string& name) const;

 private:
  json::Document pod(const std::string& name) const;
  // `spec` holds the members of the pod's spec besides nodeSelector (JSON, without braces).
  void createPod(const std::string& pod, const std::string& spec);

  ControlPlane& cp_;
  std::shared_ptr<kube::Client> admin_;
  std::string ns_;
  std::map<std::string, std::string> node_selector_;
};

}  // namespace sriovdra::testing
