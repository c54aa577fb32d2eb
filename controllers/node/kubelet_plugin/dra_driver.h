#pragma once
// What kubelet's DRA calls reach (grpc_server.h serves them): the node agent's Plugin, and in the
// real-node tests a stand-in for another driver on the same kubelet. Implementations are called
// from gRPC threads, concurrently; each serializes what it must.
#include <map>
#include <string>
#include <vector>

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
  // claim UID -> the claim's devices, or its error
  virtual std::map<std::string, PrepareResult> prepare(const std::vector<ClaimRef>& claims) = 0;
  // claim UID -> error ("" = done)
  virtual std::map<std::string, std::string> unprepare(const std::vector<ClaimRef>& claims) = 0;
};

}  // namespace sriovdra::kubelet_plugin
