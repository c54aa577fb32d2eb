#pragma once
// A gRPC client acting as kubelet towards a DRA plugin: finds the registration socket, calls
// GetInfo and NotifyRegistrationStatus, then NodePrepareResources / NodeUnprepareResources of
// DRA v1 or v1beta1 on the endpoint the plugin named. Messages are encoded and decoded by hand
// from kubelet's method names and field numbers (not with this project's generated code), so a
// wire incompatibility with kubelet shows up here.
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace sriovdra::testing {

struct KubeletClaim {
  std::string namespace_;
  std::string uid;
  std::string name;
};

struct KubeletDevice {
  std::vector<std::string> request_names;
  std::string pool;
  std::string device;
  std::vector<std::string> cdi_device_ids;
};

struct KubeletPrepared {
  std::vector<KubeletDevice> devices;
  std::string error;
};

struct KubeletPluginInfo {
  std::string type;
  std::string name;
  std::string endpoint;
  std::vector<std::string> supported_versions;
};

class KubeletClient {
 public:
  // Waits for <registry_dir>/<driver>-reg.sock, calls GetInfo, then reports the registration
  // (plugin_registered = accept, with `error` when not).
  static Result<KubeletPluginInfo> registerPlugin(
      const std::string& registry_dir, const std::string& driver, bool accept = true,
      const std::string& error = "", std::chrono::seconds timeout = std::chrono::seconds(60));
  // version: "v1" or "v1beta1". Every claim UID is a key of the answer.
  static Result<std::map<std::string, KubeletPrepared>> prepare(
      const std::string& endpoint, const std::string& version,
      const std::vector<KubeletClaim>& claims);
  static Result<std::map<std::string, std::string>> unprepare(
      const std::string& endpoint, const std::string& version,
      const std::vector<KubeletClaim>& claims);
};

}  // namespace sriovdra::testing
