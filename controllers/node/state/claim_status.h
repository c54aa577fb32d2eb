#pragma once
// Writes our driver's entries of a ResourceClaim's status.devices, keeping every other driver's
// entry as it is. Called by LocalState::writeClaimStatus (local_state.h) only: the one writer of
// those entries, for the kubelet plugin (prepare) and the NRI attacher (network data).
//
// Written with a JSON merge patch guarded by the claim's resourceVersion, not with server-side
// apply: an apply to the status of a claim whose opaque parameters were not stored as canonical
// JSON (a template written with its keys in document order, say) re-encodes status.allocation,
// and the API server refuses that as a change of an immutable field (Kubernetes 1.37). A 409
// reads the claim again; transient errors are retried, 5 attempts in all, the delay doubling from
// `retry` up to 2 s. Nothing is written when the status already says it. A claim that was
// deleted (or deleted and created again under the same name) is kNotFound.
#include <chrono>
#include <string>
#include <vector>

#include "api/resource.h"
#include "dra/checkpoint.h"
#include "kube/client.h"

namespace sriovdra::node {

Status writeDeviceStatuses(kube::Client& client, const dra::PreparedClaim& claim,
                           const std::string& driver,
                           const std::vector<api::AllocatedDeviceStatus>& ours,
                           std::chrono::milliseconds retry);

}  // namespace sriovdra::node
