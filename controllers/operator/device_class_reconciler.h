#pragma once
// Keeps the DeviceClasses of the driver: the class of all our VFs and one per resourceName the
// valid policies use (policy::renderDeviceClasses), labelled as ours; a class no policy uses any
// more is deleted, and one changed by hand is put back. There is one key (kKey): every change
// reconciles all classes. A class the API server refuses as such (kube::errorResult) keeps what
// it was, and the pass goes on with the others; the refusal is a terminal error, tried again on
// the next change or after 10 minutes (an admission policy may have changed).
#include <string>

#include "kube/controller.h"
#include "operator/caches.h"
#include "operator/options.h"
#include "operator/policy_snapshot.h"

namespace sriovdra::op {

class DeviceClassReconciler {
 public:
  static constexpr const char* kKey = "device-classes";
  DeviceClassReconciler(kube::Client& client, const OperatorOptions& options, const Caches& caches,
                        PolicySnapshots& policies)
      : client_(client), options_(options), caches_(caches), policies_(policies) {}
  Result<kube::ReconcileResult> reconcile(const std::string& key);

 private:
  kube::Client& client_;
  const OperatorOptions& options_;
  const Caches& caches_;
  PolicySnapshots& policies_;
};

}  // namespace sriovdra::op
