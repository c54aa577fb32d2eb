#pragma once
// Admission review for the policy kinds (pure): AdmissionReview v1 in, AdmissionReview out.
// Mutating (SriovNetworkNodePolicy): the upstream defaults, priority 99 and isRdma (true for
// InfiniBand netdevice VFs), as a JSON patch.
// Validating: the rules of policy/validate.h, with messages that say what to change; a policy
// outside the operator's namespace is admitted with a warning that it is not used. SriovNetwork
// and SriovIBNetwork: policy::validateNetwork (they count in every namespace).
// SriovOperatorConfig and SriovNetworkPoolConfig: policy/operator_config.h, with upstream's
// refusal of disableDrain turning true while a node is being reconfigured.
// Objects of sriovnetwork.openshift.io in the SR-IOV network operator's namespace (when running
// side by side) are admitted as they are: they are that operator's, and its webhook's to judge.
#include <string>
#include <string_view>
#include <vector>

#include "api/node_state.h"
#include "api/objects.h"
#include "api/operator_config.h"
#include "api/policies.h"
#include "policy/validate.h"

namespace sriovdra::op {

struct AdmissionRequest {
  std::string uid;
  std::string kind;       // request.kind.kind
  std::string operation;  // CREATE, UPDATE, DELETE, CONNECT
  std::string namespace_;
  json::Document object;  // request.object (null for DELETE)
};

struct AdmissionDecision {
  bool allowed = true;
  int code = 200;
  std::string message;
  std::vector<std::string> warnings;
  std::string json_patch;  // a JSON array, "" = none
};

Result<AdmissionRequest> parseAdmissionReview(std::string_view body);
std::string admissionReviewResponse(const std::string& uid, const AdmissionDecision& d);

AdmissionDecision mutatePolicy(const AdmissionRequest& req);

struct ValidationContext {
  std::string operator_namespace;
  std::string upstream_namespace;  // OperatorOptions::upstream_namespace
  // The policies of the operator namespace, the nodes and what their agents report.
  policy::ClusterView cluster;
  // For SriovOperatorConfig: the stored "default" (null: none) and the nodes being reconfigured.
  const api::SriovOperatorConfig* operator_config = nullptr;
  std::vector<std::string> nodes_in_progress;
};
AdmissionDecision validatePolicy(const AdmissionRequest& req, const ValidationContext& ctx);

}  // namespace sriovdra::op
