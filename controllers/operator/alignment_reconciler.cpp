#include "operator/alignment_reconciler.h"

#include <algorithm>

#include "base/pointers.h"
#include "metrics/registry.h"
#include "scheduling/alignment.h"

namespace sriovdra::op {
namespace {

prometheus::Family<prometheus::Gauge>& pairsGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_allocated_pairs")
                       .Help(
                           "GPU/VF pairs in allocated ResourceClaims by alignment: same_switch, "
                           "same_root, same_numa (different root), cross_numa, unknown")
                       .Register(metrics::registry());
  return f;
}
prometheus::Family<prometheus::Gauge>& sharedPfGauge() {
  static auto& f = prometheus::BuildGauge()
                       .Name("sriov_dra_claims_sharing_pf")
                       .Help("Allocated ResourceClaims that hold more than one VF of one PF")
                       .Register(metrics::registry());
  return f;
}

}  // namespace

Result<kube::ReconcileResult> AlignmentReconciler::reconcile(const std::string&) {
  auto slices = caches_.slices.list();
  auto states = caches_.states.list();
  auto claims = caches_.claims.list();
  scheduling::ClusterTopology topology(pointers(slices), reportsOf(states));
  auto report = scheduling::alignmentReport(pointers(claims), topology);
  for (const auto& [alignment, n] : scheduling::countPairs(report)) {
    pairsGauge()
        .Add({{"alignment", std::string(scheduling::alignmentLabel(alignment))}})
        .Set(static_cast<double>(n));
  }
  double shared = static_cast<double>(std::count_if(
      report.begin(), report.end(), [](const auto& c) { return !c.shared_pfs.empty(); }));
  sharedPfGauge().Add({}).Set(shared);
  return kube::ReconcileResult::done();
}

}  // namespace sriovdra::op
