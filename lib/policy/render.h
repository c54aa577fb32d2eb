#pragma once
// Renders the desired configuration of one node (SriovNodeState.spec) from the policies that
// select it and what the agent discovered there. Pure: no I/O, no clocks, no globals; the same
// inputs give byte-identical output whatever order they come in.
//
// interfaces: SriovNetworkNodePolicy semantics of the SR-IOV network operator: policies apply
//   from priority 99 down to 0 (0 is the highest), ties by name; a PF takes one VF group per
//   policy; an earlier group survives a later policy only with a different resourceName and a
//   disjoint VF range; mtu and numVfs are the maximum when groups are kept or priorities are
//   equal; linkType, eSwitchMode and externallyManaged come from the last (winning) policy.
//   Unlike upstream, "equal priority" compares the priority of the policies that configured
//   the PF, not of the previous policy in the sort.
// devices: as the SR-IOV DRA driver, only VFs a SriovResourcePolicy selects are advertised
//   (without one, the node's ResourceSlices stay empty), unless advertise_node_policy_vfs also
//   advertises every VF of a node policy's VF group. VFs of a VF group carry
//   sriovnetwork.k8snetworkplumbingwg.io/resourceName (and k8s.cni.cncf.io/resourceName =
//   <prefix>/<resourceName> when a resource prefix is set), and those of a policy whose isRdma
//   is false are marked no_rdma (published rdmaCapable false). SriovResourcePolicies (by name, then
//   configs in order; the first match wins a VF) may advertise any discovered VF and stamp the
//   attributes of the DeviceAttributes their selector picks (merged by name, the later name
//   wins a key). Where both apply, DeviceAttributes win a key and a differing resourceName is
//   reported. Built-in discovery attributes are never overridden.
// Conflicts never fail the render: they are returned with the policy that lost, the winner and
// why. Invalid policies must be filtered out by the caller (see validate.h).
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "api/node_state.h"
#include "api/objects.h"
#include "api/policies.h"

namespace sriovdra::policy {

inline constexpr const char* kNodePolicyKind = "SriovNetworkNodePolicy";
inline constexpr const char* kResourcePolicyKind = "SriovResourcePolicy";
inline constexpr const char* kDeviceAttributesKind = "DeviceAttributes";

struct PolicyRef {
  std::string kind;
  std::string name;
  // NOLINTNEXTLINE(modernize-use-nullptr): a false positive of clang-tidy on a defaulted <=>
  auto operator<=>(const PolicyRef&) const = default;
};

struct Conflict {
  PolicyRef loser;
  std::string winner;
  std::string target;  // "ibp14s0 (0000:0e:00.0)" or "3 VFs on ibp14s0"
  std::string reason;
  bool operator==(const Conflict&) const = default;
  auto operator<=>(const Conflict&) const = default;  // NOLINT(modernize-use-nullptr)
};

struct Warning {
  PolicyRef policy;
  std::string message;
  bool operator==(const Warning&) const = default;
  auto operator<=>(const Warning&) const = default;  // NOLINT(modernize-use-nullptr)
};

// The default of --resource-prefix, as the SR-IOV network operator's RESOURCE_PREFIX: rendered NADs
// and VFs then carry the same Multus name without a flag (multus mode works with defaults).
inline constexpr const char* kDefaultResourcePrefix = "openshift.io";

// Why a --resource-prefix is unusable ("" when it is fine): it is "" or a DNS subdomain, the
// domain part of <prefix>/<resourceName> names (CLI11's check signature).
std::string resourcePrefixError(std::string_view prefix);

struct RenderOptions {
  std::string resource_prefix;  // --resource-prefix; "" = no k8s.cni.cncf.io/resourceName
  // --advertise-node-policy-vfs: a node policy's VF groups are advertised without a
  // SriovResourcePolicy (off: the SR-IOV DRA driver's rule).
  bool advertise_node_policy_vfs = false;
};

// A set of policies, as the operator's caches and the CLI's files hold them.
struct Policies {
  std::vector<const api::SriovNetworkNodePolicy*> node_policies;
  std::vector<const api::SriovResourcePolicy*> resource_policies;
  std::vector<const api::DeviceAttributes*> device_attributes;
};

struct RenderInput {
  const api::Node& node;
  std::vector<const api::SriovNetworkNodePolicy*> node_policies;
  std::vector<const api::SriovResourcePolicy*> resource_policies;
  std::vector<const api::DeviceAttributes*> device_attributes;
  const api::SriovNodeStateStatus& discovered;
  RenderOptions options;
};

struct RenderResult {
  api::SriovNodeStateSpec spec;
  std::vector<Conflict> conflicts;
  std::vector<Warning> warnings;
  // Policies that apply to this node (node selector matched; for DeviceAttributes: picked for at
  // least one VF), with the number of VFs they configure or advertise here.
  std::map<PolicyRef, int64_t> matches;
};

RenderResult render(const RenderInput& in);
// The same with the (valid) policies of a set.
RenderResult render(const api::Node& node, const Policies& valid,
                    const api::SriovNodeStateStatus& discovered, const RenderOptions& options);

}  // namespace sriovdra::policy
