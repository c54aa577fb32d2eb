// A device selector as a claim or DeviceClass author writes it: compiled, then evaluated against
// a VF with the attributes the reference driver publishes, within the default cost limit.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "api/names.h"
#include "scheduling/cel.h"

using namespace sriovdra;

namespace {

api::SliceDevice vf() {
  auto s = [](const char* v) { return api::AttributeValue::ofString(v); };
  api::SliceDevice d{"0000-0e-00-1", {}, {}};
  d.attributes = {
      {std::string(api::attr::kPciAddress), s("0000:0e:00.1")},
      {std::string(api::attr::kPfName), s("ibp14s0")},
      {std::string(api::attr::kPcieRoot), s("pci0000:00")},
      {std::string(api::attr::kVendor), s("15b3")},
      {std::string(api::attr::kNumaNode), api::AttributeValue::ofInt(0)},
      {std::string(api::attr::kRdmaCapable), api::AttributeValue::ofBool(true)},
  };
  return d;
}

}  // namespace

// The libFuzzer entry point: its name is fixed by libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  static const api::SliceDevice device = vf();
  auto program = scheduling::cel::Program::compile({reinterpret_cast<const char*>(data), size});
  if (!program.ok()) return 0;
  (void)program->matches({api::kDriverName, device});
  return 0;
}
