#pragma once
// What a DRA driver implements to be served to kubelet (grpc_server.h): the node agent's
// KubeletPlugin, and in the real-node tests a stand-in for another driver on the same kubelet.
// As with upstream's kubeletplugin helper, the driver gets decoded claims: the helper (helper.h),
// which the gRPC server calls, has read each one, checked it is the claim kubelet named (same
// UID) and allocated, answered the others itself, and calls the driver one call at a time.
#include <map>
#include <string>
#include <vector>

#include "api/resource.h"

namespace sriovdra::kubelet_plugin {

struct ClaimRef {
  std::string namespace_;
  std::string uid;
  std::string name;
};

struct PreparedDeviceResult {
  std::vector<std::string> request_names;
  std::string pool;
  std::string device;
  std::vector<std::string> cdi_device_ids;
  bool operator==(const PreparedDeviceResult&) const = default;
};

struct PrepareResult {
  std::vector<PreparedDeviceResult> devices;
  std::string error;  // non-empty: failed, kubelet retries
};

class DraDriver {
 public:
  virtual ~DraDriver() = default;
  // The claims as the API server has them, each allocated. Claim UID -> its devices, or its
  // error; a claim missing from the answer fails with a message saying so.
  virtual std::map<std::string, PrepareResult> prepare(
      const std::vector<api::ResourceClaim>& claims) = 0;
  // References only: the claims may be gone from the API server. Claim UID -> error ("" = done).
  virtual std::map<std::string, std::string> unprepare(const std::vector<ClaimRef>& claims) = 0;
};

}  // namespace sriovdra::kubelet_plugin
