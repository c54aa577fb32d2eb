#include "node/kubelet_plugin/helper.h"

#include <chrono>

#include <prometheus/counter.h>
#include <prometheus/histogram.h>

#include "api/names.h"
#include "api/resource_limits.h"
#include "base/log.h"
#include "base/strings.h"
#include "metrics/registry.h"

namespace sriovdra::kubelet_plugin {
namespace {

using Steady = std::chrono::steady_clock;

std::string claimName(const ClaimRef& r) {
  return "ResourceClaim " + printable(r.namespace_) + "/" + printable(r.name);
}

prometheus::Counter& claimsCounter(const char* operation, bool ok) {
  static auto& f = prometheus::BuildCounter()
                       .Name("sriov_dra_kubelet_plugin_claims_total")
                       .Help("Claims the kubelet asked to prepare or unprepare, by outcome")
                       .Register(metrics::registry());
  return f.Add({{"operation", operation}, {"result", ok ? "success" : "error"}});
}

prometheus::Histogram& callSeconds(const char* operation) {
  static auto& f =
      prometheus::BuildHistogram()
          .Name("sriov_dra_kubelet_plugin_request_duration_seconds")
          .Help("Time to answer one NodePrepareResources / NodeUnprepareResources call")
          .Register(metrics::registry());
  return f.Add({{"operation", operation}}, metrics::reconcileTimeBuckets());
}

// Observes the time from construction to destruction under the request duration histogram.
class CallTimer {
 public:
  explicit CallTimer(const char* operation) : operation_(operation) {}
  ~CallTimer() {
    callSeconds(operation_).Observe(std::chrono::duration<double>(Steady::now() - start_).count());
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

 private:
  const char* operation_;
  Steady::time_point start_ = Steady::now();
};

}  // namespace

Status checkRef(const ClaimRef& ref) {
  if (!api::isDnsLabel(ref.namespace_) || !api::isDnsSubdomain(ref.name)) {
    return Status(Code::kInvalidArgument,
                  claimName(ref) + ": kubelet named no valid namespace and name");
  }
  // The UID names files (CDI specs, metadata): a UUID's characters only.
  if (ref.uid.empty() || ref.uid.size() > 64 ||
      ref.uid.find_first_not_of("0123456789abcdefABCDEF-") != std::string::npos) {
    return Status(Code::kInvalidArgument,
                  claimName(ref) + ": kubelet named no valid UID (" + printable(ref.uid) + ")");
  }
  return Status::ok();
}

Status checkClaim(const ClaimRef& ref, const api::ResourceClaim& claim) {
  if (claim.metadata.uid != ref.uid) {
    return Status(Code::kInvalidArgument, claimName(ref) + " has UID " + claim.metadata.uid +
                                              ", not " + ref.uid + " (deleted and created again?)");
  }
  if (!claim.status.allocation) {
    return Status(Code::kInvalidArgument, claimName(ref) + " is not allocated");
  }
  return Status::ok();
}

Helper::Helper(DraDriver& driver, std::shared_ptr<kube::Client> client)
    : driver_(driver), client_(std::move(client)) {
  // Every series exists from the start, at 0, so dashboards and alerts see them.
  for (const char* operation : {"prepare", "unprepare"}) {
    claimsCounter(operation, true);
    claimsCounter(operation, false);
    callSeconds(operation);
  }
}

Result<api::ResourceClaim> Helper::read(const ClaimRef& ref) const {
  SDRA_RETURN_IF_ERROR(checkRef(ref));
  auto got = client_->get(api::resources::kResourceClaims, ref.namespace_, ref.name);
  if (!got.ok()) {
    if (got.status().code() == Code::kNotFound) {
      return Status(Code::kInvalidArgument, claimName(ref) + " does not exist");
    }
    return Status(got.status().code(), "reading " + claimName(ref) + ": " + got.status().message());
  }
  auto claim = api::ResourceClaim::decode(*got);
  if (!claim.ok()) {
    return Status(Code::kInvalidArgument, claimName(ref) + ": " + claim.status().message());
  }
  SDRA_RETURN_IF_ERROR(checkClaim(ref, *claim));
  return claim;
}

std::map<std::string, PrepareResult> Helper::prepare(const std::vector<ClaimRef>& claims) {
  std::lock_guard calls(calls_mu_);
  CallTimer timer("prepare");
  std::map<std::string, PrepareResult> out;
  std::vector<api::ResourceClaim> read_claims;
  for (const auto& ref : claims) {
    auto claim = read(ref);
    if (claim.ok()) {
      read_claims.push_back(std::move(*claim));
    } else {
      out[ref.uid].error = claim.status().message();
    }
  }
  if (!read_claims.empty()) out.merge(driver_.prepare(read_claims));
  for (const auto& ref : claims) {
    auto [it, missing] = out.try_emplace(ref.uid);
    PrepareResult& result = it->second;
    if (missing)
      result.error = "the driver did not answer for this claim (a driver bug; kubelet retries)";
    claimsCounter("prepare", result.error.empty()).Increment();
    if (!result.error.empty()) {
      SDRA_LOG_WARN << "preparing " << claimName(ref) << " (" << printable(ref.uid)
                    << "): " << result.error;
    }
  }
  return out;
}

std::map<std::string, std::string> Helper::unprepare(const std::vector<ClaimRef>& claims) {
  std::lock_guard calls(calls_mu_);
  CallTimer timer("unprepare");
  std::vector<ClaimRef> valid;
  std::map<std::string, std::string> out;
  for (const auto& ref : claims) {
    if (Status st = checkRef(ref); !st.isOk()) {
      out[ref.uid] = st.message();
    } else {
      valid.push_back(ref);
    }
  }
  if (!valid.empty()) out.merge(driver_.unprepare(valid));
  for (const auto& ref : claims) {
    auto it =
        out.try_emplace(ref.uid,
                        "the driver did not answer for this claim (a driver bug; kubelet retries)")
            .first;
    claimsCounter("unprepare", it->second.empty()).Increment();
    if (!it->second.empty()) {
      SDRA_LOG_WARN << "unpreparing " << claimName(ref) << " (" << printable(ref.uid)
                    << "): " << it->second;
    }
  }
  return out;
}

}  // namespace sriovdra::kubelet_plugin
