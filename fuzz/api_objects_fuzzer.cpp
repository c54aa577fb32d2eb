// Every API object codec against arbitrary JSON: the first byte picks the kind, the rest is the
// object. A decoded object encodes again without crashing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/node_state.h"
#include "api/objects.h"
#include "api/policies.h"
#include "api/resource.h"

using namespace sriovdra;

namespace {

template <typename T>
void decode(const json::Value& v) {
  auto obj = T::decode(v);
  if (!obj.ok()) return;
  if constexpr (requires(const T& t, api::Writer w) { t.encode(w); }) {
    json::Document out(rapidjson::kObjectType);
    obj->encode(api::Writer(out, out.GetAllocator()));
    (void)json::dump(out);
  }
}

}  // namespace

// The libFuzzer entry point: its name is fixed by libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto doc = json::parse({reinterpret_cast<const char*>(data) + 1, size - 1});
  if (!doc.ok()) return 0;
  switch (data[0] % 9) {
    case 0:
      decode<api::SriovNetworkNodePolicy>(*doc);
      break;
    case 1:
      decode<api::SriovResourcePolicy>(*doc);
      break;
    case 2:
      decode<api::DeviceAttributes>(*doc);
      break;
    case 3:
      decode<api::SriovNodeState>(*doc);
      break;
    case 4:
      decode<api::ResourceSlice>(*doc);
      break;
    case 5:
      decode<api::ResourceClaim>(*doc);
      break;
    case 6:
      decode<api::ResourceClaimTemplate>(*doc);
      break;
    case 7:
      decode<api::Node>(*doc);
      break;
    default:
      decode<api::DeviceClass>(*doc);
      break;
  }
  return 0;
}
