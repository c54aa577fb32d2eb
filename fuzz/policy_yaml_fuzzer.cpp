// Policy files as `sriov-dra validate` and `render` read them: YAML to JSON (aliases, sizes and
// duplicate keys bounded), each document decoded and validated as the kind it says it is.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/policies.h"
#include "base/yaml.h"
#include "policy/validate.h"

using namespace sriovdra;

// The libFuzzer entry point: its name is fixed by libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  auto docs = yamlToJson({reinterpret_cast<const char*>(data), size});
  if (!docs.ok()) return 0;
  for (const auto& doc : *docs) {
    std::string kind(json::stringOr(doc, "kind"));
    if (kind == "SriovNetworkNodePolicy") {
      if (auto p = api::SriovNetworkNodePolicy::decode(doc); p.ok()) {
        (void)policy::validateNodePolicy(*p);
      }
    } else if (kind == "SriovResourcePolicy") {
      if (auto p = api::SriovResourcePolicy::decode(doc); p.ok()) {
        (void)policy::validateResourcePolicy(*p);
      }
    } else if (kind == "DeviceAttributes") {
      if (auto p = api::DeviceAttributes::decode(doc); p.ok()) {
        (void)policy::validateDeviceAttributes(*p);
      }
    }
    (void)jsonToYaml(doc);
  }
  return 0;
}
