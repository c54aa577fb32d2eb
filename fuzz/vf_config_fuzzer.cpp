// The opaque VfConfig parameters of a claim, read strictly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dra/vf_config.h"

using namespace sriovdra;

// The libFuzzer entry point: its name is fixed by libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  auto config = dra::parseVfConfig({reinterpret_cast<const char*>(data), size});
  if (config.ok()) (void)config->targetDriver();
  return 0;
}
