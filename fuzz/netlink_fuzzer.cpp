// What the kernel answers over netlink, as the agent parses it: one recv() buffer for each
// request kind (link dump, a PF's VF information, family, eSwitch, RDMA devices and namespace
// mode), never read past its end.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "host/netlink_wire.h"
#include "host/rdma_wire.h"

using namespace sriovdra;

// The libFuzzer entry point: its name is fixed by libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  std::string_view buffer(reinterpret_cast<const char*>(data), size);
  auto reply = host::netlink::parseReply(buffer, 1, "fuzz");
  if (!reply.ok()) return 0;
  for (const auto& payload : reply->payloads) {
    (void)host::netlink::linkOf(payload);
    (void)host::netlink::vfInfosOf(payload);
    (void)host::netlink::familyIdOf(payload);
    (void)host::netlink::eswitchModeOf(payload);
    (void)host::netlink::rdmaDeviceOf(payload);
    (void)host::netlink::rdmaNetnsModeOf(payload);
  }
  return 0;
}
