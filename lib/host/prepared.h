#pragma once
// The VFs prepared for pods, shared by the node agent and the kubelet plugin of one process.
// The plugin's checkpoint is the quick answer (prepared()); before the agent destroys or rebinds
// a VF it asks inUse(), which also reads the API server and the host (dra/in_use.h), so a lost
// checkpoint never lets it tear down a VF a pod uses. holdHost() keeps the plugin from preparing
// while the agent changes VFs (and the agent from changing VFs while the plugin prepares).
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace sriovdra::host {

// VF address -> the claims ("namespace/name") it is prepared for.
using PreparedVfs = std::map<std::string, std::vector<std::string>>;

class PreparedSource {
 public:
  virtual ~PreparedSource() = default;
  // Any thread.
  virtual PreparedVfs prepared() const = 0;
  // prepared() and every VF the API server or the host shows in use. An error when that cannot
  // be known (the API server unreachable, the claims not readable): destructive changes wait.
  // Any thread; it blocks on the API server.
  virtual Result<PreparedVfs> inUse() const = 0;
  // The host lock: held while VFs are created, reset or rebound.
  virtual std::unique_lock<std::mutex> holdHost() = 0;
};

}  // namespace sriovdra::host
