#include "operator/alignment_reconciler.h"

#include <algorithm>

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

// The cached objects (kept alive by `keep`) as plain pointers to As (T or a base of it).
template <typename T, typename As = T>
std::vector<const As*> cached(const kube::Informer<T>& informer,
                              std::vector<std::shared_ptr<const void>>& keep) {
  std::vector<const As*> out;
  for (auto& item : informer.list()) {
    out.push_back(item.get());
    keep.push_back(std::move(item));
  }
  return out;
}

}  // namespace

Result<kube::ReconcileResult> AlignmentReconciler::reconcile(const std::string&) {
  std::vector<std::shared_ptr<const void>> keep;
  scheduling::ClusterTopology topology(
      cached(caches_.slices, keep),
      cached<CachedNodeState, api::SriovNodeState>(caches_.states, keep));
  auto report = scheduling::alignmentReport(cached(caches_.claims, keep), topology);
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
