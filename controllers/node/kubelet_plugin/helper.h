#pragma once
// The part of a kubelet plugin every DRA driver needs, as upstream's kubeletplugin helper does
// it, between kubelet's gRPC calls (grpc_server.h) and a DraDriver:
//
//   both       | a reference that is not a namespace, a name and a UUID-like UID fails with a
//              | message and never reaches the driver (the UID names files on the node)
//   prepare    | reads each ResourceClaim kubelet names; one that does not exist, has another
//              | UID (deleted and created again) or is not allocated fails with a message and
//              | never reaches the driver; the rest go to DraDriver::prepare in one call. As
//              | upstream's helper, every prepare reads its claims, also of a claim the driver
//              | prepared before: while the API server cannot be reached, prepare fails and
//              | kubelet retries
//   unprepare  | the references go to DraDriver::unprepare as kubelet sent them
//   both       | one call at a time (kubelet may call concurrently; drivers then need no lock of
//              | their own for it); every failed claim is logged with its name and UID; counted
//              | in sriov_dra_kubelet_plugin_claims_total{operation,result} and timed in
//              | sriov_dra_kubelet_plugin_request_duration_seconds{operation} (this product's
//              | names: every Helper of a process counts into the same series)
//
// Its metrics exist from construction (at 0). Thread-safety: both calls from any thread.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kube/client.h"
#include "node/kubelet_plugin/dra_driver.h"

namespace sriovdra::kubelet_plugin {

class Helper {
 public:
  Helper(DraDriver& driver, std::shared_ptr<kube::Client> client);

  std::map<std::string, PrepareResult> prepare(const std::vector<ClaimRef>& claims);
  std::map<std::string, std::string> unprepare(const std::vector<ClaimRef>& claims);

 private:
  Result<api::ResourceClaim> read(const ClaimRef& ref) const;

  DraDriver& driver_;
  std::shared_ptr<kube::Client> client_;
  std::mutex calls_mu_;  // one call at a time
};

// The helper's checks (pure): a reference kubelet may send; `claim` is the allocated claim
// kubelet named by `ref`.
Status checkRef(const ClaimRef& ref);
Status checkClaim(const ClaimRef& ref, const api::ResourceClaim& claim);

}  // namespace sriovdra::kubelet_plugin
