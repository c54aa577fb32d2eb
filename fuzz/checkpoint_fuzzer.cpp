// The kubelet plugin's checkpoint file, and the NRI attacher's attach records, as a crash or a
// person may have left them. The input is taken as the file (first byte even) or as its claims
// object, wrapped with a correct checksum so that the claim decoder is reached (odd). What
// decodes encodes to text that decodes to the same checkpoint or record (anything else aborts).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/digest.h"
#include "base/json.h"
#include "dra/attach.h"
#include "dra/checkpoint.h"

using namespace sriovdra;

// The libFuzzer entry point: its name is fixed by libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string text(input);
  if (auto record = dra::AttachRecord::decode(input); record.ok()) {
    auto again = dra::AttachRecord::decode(record->encode());
    if (!again.ok() || !(*again == *record)) std::abort();
  }
  if (data[0] % 2 == 1) {
    auto claims = json::parse(input);
    if (!claims.ok()) return 0;
    std::string body = json::dump(*claims);
    text = R"({"version":1,"checksum":"sha256:)" + sha256Hex(body) + R"(","claims":)" + body + "}";
  }
  auto cp = dra::Checkpoint::decode(text);
  if (!cp.ok()) return 0;
  auto again = dra::Checkpoint::decode(cp->encode());
  if (!again.ok() || !(*again == *cp)) std::abort();
  (void)cp->preparedVfs();
  return 0;
}
