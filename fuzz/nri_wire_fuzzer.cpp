// What a container runtime sends an NRI plugin: mux frames carrying ttrpc messages carrying
// protobuf requests (Synchronize, RunPodSandbox, ...), in pieces of any size. The reader keeps its
// limits (never allocates past them) whatever the bytes; the input is fed whole and one byte at a
// time, and both feeds must see the same frames and messages.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "nri/api.pb.h"
#include "nri/wire.h"
#include "ttrpc/ttrpc.pb.h"

namespace {

namespace snri = sriovdra::nri;

// Feeds the bytes `step` at a time, parsing every request as the plugin would; the count of
// messages.
size_t feed(std::string_view bytes, size_t step) {
  snri::MuxReader mux;
  snri::MessageReader conn;
  size_t messages = 0;
  for (size_t at = 0; at < bytes.size(); at += step) {
    auto frames = mux.feed(bytes.substr(at, step));
    if (!frames.ok()) return messages;
    for (const auto& f : *frames) {
      if (f.payload.size() > snri::kMaxFramePayload) std::abort();
      auto got = conn.feed(f.payload);
      if (!got.ok()) return messages;
      for (const auto& m : *got) {
        if (m.payload.size() > snri::kMaxMessage) std::abort();
        ++messages;
        ttrpc::Request request;
        if (!request.ParseFromString(m.payload)) continue;
        ::nri::pkg::api::v1alpha1::SynchronizeRequest sync;
        (void)sync.ParseFromString(request.payload());
        ::nri::pkg::api::v1alpha1::RunPodSandboxRequest run;
        (void)run.ParseFromString(request.payload());
      }
    }
  }
  return messages;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (size == 0) return 0;
  if (feed(bytes, size) != feed(bytes, 1)) std::abort();
  return 0;
}
