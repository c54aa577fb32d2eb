#pragma once
// The VFs prepared for pods, shared by the node agent and the kubelet plugin of one process.
// The plugin's checkpoint is their source (dra/checkpoint.h); the agent never resets or rebinds a
// prepared VF, and holdHost() keeps the plugin from preparing while the agent changes VFs (and
// the agent from changing VFs while the plugin prepares).
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace sriovdra::host {

// VF address -> the claims ("namespace/name") it is prepared for.
using PreparedVfs = std::map<std::string, std::vector<std::string>>;

class PreparedSource {
 public:
  virtual ~PreparedSource() = default;
  // Any thread.
  virtual PreparedVfs prepared() const = 0;
  // The host lock: held while VFs are created, reset or rebound.
  virtual std::unique_lock<std::mutex> holdHost() = 0;
};

}  // namespace sriovdra::host
