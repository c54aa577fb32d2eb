#pragma once
// What the operator would write for a node, computed by the bench itself with the operator's own
// pure render (policy::render), so a floor issues the very objects the product does.
#include <string>

#include "api/node_state.h"
#include "api/objects.h"
#include "base/json.h"

namespace sriovdra::bench {

// The spec of `node` under the SriovNetworkNodePolicies, SriovResourcePolicies and
// DeviceAttributes of `policies_yaml` (other kinds are ignored), given what its agent reported.
// Exits with a message when the YAML does not decode.
api::SriovNodeStateSpec renderFromYaml(const api::Node& node, const std::string& policies_yaml,
                                       const api::SriovNodeStateStatus& discovered);

// The node's SriovNodeState in namespace `ns` with `spec_json` (op::encodeSpec) as the operator
// creates it (op::NodeStateDocument): an object to create, update or apply.
json::Document nodeStateObject(const std::string& ns, const api::Node& node,
                               const std::string& spec_json);

}  // namespace sriovdra::bench
