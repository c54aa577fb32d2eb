#pragma once
// Installs the CNI plugins the agent's image carries into the node's CNI bin directory, as the
// agent's init container runs it (`sriov-dra-agent install-cni-plugins`): each regular file of
// `from` (sriov, ib-sriov) written to a temporary file in `to`, made executable (0755), synced
// and renamed over the plugin's name (writeFileAtomic), so a runtime or Multus that runs a plugin
// meanwhile runs the old one or the new one, never half of one, and a running plugin's file is
// replaced, not written ("text file busy"). A plugin whose installed file is byte for byte the same
// is left alone. Returns what it did, one line per plugin, or the first failure (naming the file).
#include <string>
#include <vector>

#include "base/status.h"

namespace sriovdra::cni_plugin {

Result<std::vector<std::string>> installPlugins(const std::string& from, const std::string& to);

}  // namespace sriovdra::cni_plugin
