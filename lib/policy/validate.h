#pragma once
// The admission rules for the three policy kinds, shared by the validating webhook, the
// operator (which marks invalid objects Degraded when the webhook is off) and
// `sriov-dra validate`. Each problem is one sentence naming the field and what to change.
// Warnings are admitted but reported (AdmissionReview warnings, policy conditions).
#include <string>
#include <vector>

#include "api/node_state.h"
#include "api/objects.h"
#include "api/policies.h"

namespace sriovdra::policy {

struct Findings {
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  bool ok() const { return errors.empty(); }
  void merge(Findings other);
};

// The most VFs a PF can have: TotalVFs is a 16-bit field of the SR-IOV capability.
inline constexpr int64_t kMaxNumVfs = 65535;

Findings validateNodePolicy(const api::SriovNetworkNodePolicy& p);
// Rules between policies on nodes both select (a node that exists, or any node when their
// nodeSelectors are identical or one is empty): pfNames VF ranges must not overlap (as upstream:
// two entries without a range on one PF overlap; an entry without a range does not conflict
// with a ranged one), rootDevices must differ, externallyManaged must agree on a shared PF, and
// excludeTopology must agree for one resourceName. Two pfNames name one PF when they are equal
// or are the name and an altName of a PF an agent reports on a shared node (stricter than
// upstream, which compares the strings only). The first kMaxConflictsListed conflicts are
// errors of their own, the rest one error that counts them.
inline constexpr size_t kMaxConflictsListed = 10;
Findings validateNodePolicyAgainst(const api::SriovNetworkNodePolicy& p,
                                   const std::vector<const api::SriovNetworkNodePolicy*>& others,
                                   const std::vector<const api::Node*>& nodes,
                                   const std::vector<api::NodeReport>& states = {});
// Rules against what nodes report (their SriovNodeStates), as the upstream webhook checks, with
// its wording: on every node the policy selects, a PF it selects must offer numVfs VFs
// ("numVfs(N) in CR X exceed the maximum allowed value(T) ..."); an externallyManaged policy
// must not ask for more VFs than the PF has ("... is higher than the virtual functions allocated
// for the PF externally value(V) ..."), nor a higher MTU ("MTU(M) in CR X is higher than the MTU
// for the PF externally value(V) ..."), nor another link type ("LinkType(L) in CR X is not equal
// to the LinkType for the PF externally value(V) ...").
Findings validateNodePolicyAgainstStates(const api::SriovNetworkNodePolicy& p,
                                         const std::vector<const api::Node*>& nodes,
                                         const std::vector<api::NodeReport>& states);

// Everything the webhook checks for a policy in the operator namespace, and `sriov-dra validate`
// for the files it is given: the policy alone, against the other policies, against the nodes'
// reports. One function, so both always decide alike.
struct ClusterView {
  std::vector<const api::SriovNetworkNodePolicy*> node_policies;
  std::vector<const api::Node*> nodes;
  std::vector<api::NodeReport> states;
};
Findings validateNodePolicyInCluster(const api::SriovNetworkNodePolicy& p, const ClusterView& c);
Findings validateResourcePolicy(const api::SriovResourcePolicy& p);
Findings validateDeviceAttributes(const api::DeviceAttributes& d);

// DRA rules for attribute names and values (resource.k8s.io/v1 validation).
std::vector<std::string> validateAttributeName(const std::string& name);
std::vector<std::string> validateAttributeValue(const std::string& name,
                                                const api::AttributeValue& v);
// The attribute name with the driver's domain made explicit ("vfID" -> "<driver>/vfID").
std::string qualifiedAttributeName(const std::string& name);

// The defaults the mutating webhook writes (and the operator assumes when it is off).
struct NodePolicyDefaults {
  bool set_priority = false;        // priority: 99
  std::optional<bool> set_is_rdma;  // isRdma value to write, if any
};
NodePolicyDefaults nodePolicyDefaults(const api::SriovNetworkNodePolicySpec& spec);
// isRdma as the operator applies it: explicit value, else true for InfiniBand netdevice VFs.
bool effectiveIsRdma(const api::SriovNetworkNodePolicySpec& spec);

}  // namespace sriovdra::policy
