#pragma once
// The alignment metrics of the cluster: sriov_dra_allocated_pairs{alignment} (how aligned the
// GPU/VF pairs of allocated claims are, scheduling/alignment.h) and sriov_dra_claims_sharing_pf,
// from every ResourceClaim and ResourceSlice and the SriovNodeStates. One key (kKey): any change of
// those recomputes everything, from the caches without copying them.
#include <string>

#include "kube/controller.h"
#include "operator/caches.h"

namespace sriovdra::op {

class AlignmentReconciler {
 public:
  static constexpr const char* kKey = "allocated-pairs";
  explicit AlignmentReconciler(const Caches& caches) : caches_(caches) {}
  Result<kube::ReconcileResult> reconcile(const std::string& key);

 private:
  const Caches& caches_;
};

}  // namespace sriovdra::op
