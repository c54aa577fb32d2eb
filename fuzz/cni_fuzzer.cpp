// A NetworkAttachmentDefinition's CNI configuration (written by whoever may write a NAD in a
// claim's namespace) and a plugin's ADD result (written by a plugin): what the agent checks, the
// deviceID it injects, the stdin each plugin gets, and the network data it shows. The input is
// tried as both. Invariants: an allowed configuration stays a configuration with the claim's VF
// as its deviceID after injection; a result that passes checkResult yields network data.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/json.h"
#include "cni/allow.h"
#include "cni/config.h"

using namespace sriovdra;

extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto config = cni::parseNetworkConfig(text);
  if (config.ok()) {
    cni::AllowList allowed;
    allowed.host_paths = {"/var/log/sriov-cni"};
    bool admitted = cni::checkAllowed(*config, allowed).isOk();
    auto injected = cni::withRuntimeConfig(text, {.device_id = "0000:11:00.1"});
    if (!injected.ok()) std::abort();  // it parsed as a configuration: it is a JSON object
    auto again = cni::parseNetworkConfig(*injected);
    if (!again.ok() || again->plugins.size() != config->plugins.size()) std::abort();
    auto doc = json::parse(*injected);
    if (!doc.ok() || json::stringOr(*doc, "deviceID") != "0000:11:00.1") std::abort();
    if (admitted) {
      for (size_t i = 0; i < again->plugins.size(); ++i) {
        if (!json::parse(cni::pluginInput(*again, i, "")).ok()) std::abort();
      }
    }
  }
  if (cni::checkResult(text).isOk() && !cni::networkDataOf(text, "net1").ok()) std::abort();
  return 0;
}
