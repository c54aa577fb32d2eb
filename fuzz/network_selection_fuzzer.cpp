// A pod's k8s.v1.cni.cncf.io/networks annotation, written by whoever may create pods: whatever it
// holds, the agent's reading never crashes, and what it accepts names only what a request path
// and a CNI_IFNAME may carry (a DNS-1123 NAD name and namespace, a CNI interface name), in
// annotation order.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/names.h"
#include "cni/skel.h"
#include "dra/network_selection.h"

using namespace sriovdra;

extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto got = dra::parseNetworkSelection(text, "pods");
  if (!got.ok()) {
    if (got.status().code() != Code::kInvalidArgument) std::abort();
    return 0;
  }
  int position = 0;
  for (const auto& n : *got) {
    if (n.position != position++) std::abort();
    if (!isDnsSubdomain(n.name) || !isDnsLabel(n.namespace_)) std::abort();
    if (!n.interface.empty() && cni::validateInterfaceName(n.interface).code != 0) std::abort();
  }
  // Matching never takes more VFs than there are, whatever the NADs say.
  std::vector<dra::ResourceVf> vfs = {{"c", "0000-11-00-1", "p/r"}};
  std::map<std::string, std::string> nads;
  for (const auto& n : *got) nads[n.namespace_ + "/" + n.name] = "p/r";
  auto assigned = dra::assignNetworks(vfs, *got, nads);
  if (assigned.ok() && assigned->size() > vfs.size()) std::abort();
  return 0;
}
