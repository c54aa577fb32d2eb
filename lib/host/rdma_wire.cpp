#include "host/rdma_wire.h"

#include <rdma/rdma_netlink.h>

#include "host/netlink_encoding.h"

namespace sriovdra::host::netlink {
namespace {

using namespace encoding;

constexpr uint16_t nldev(int command) {
  return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, command));
}

}  // namespace

std::string rdmaSysGetRequest(uint32_t seq) {
  return message(nldev(RDMA_NLDEV_CMD_SYS_GET), seq, "");
}

std::string rdmaDeviceDumpRequest(uint32_t seq) {
  return message(nldev(RDMA_NLDEV_CMD_GET), seq, "", NLM_F_REQUEST | NLM_F_DUMP);
}

std::string rdmaSetNetnsRequest(uint32_t seq, uint32_t device_index, uint32_t netns_fd) {
  std::string body;
  attribute(body, RDMA_NLDEV_ATTR_DEV_INDEX, raw(device_index));
  attribute(body, RDMA_NLDEV_NET_NS_FD, raw(netns_fd));
  return message(nldev(RDMA_NLDEV_CMD_SET), seq, body);
}

Result<RdmaDeviceInfo> rdmaDeviceOf(std::string_view payload) {
  auto attrs = attributes(payload);
  if (!attrs.ok()) return attrs.status();
  RdmaDeviceInfo out;
  bool has_index = false;
  for (const auto& a : *attrs) {
    if (a.type == RDMA_NLDEV_ATTR_DEV_INDEX && a.value.size() >= sizeof(uint32_t)) {
      out.index = get<uint32_t>(a.value, 0);
      has_index = true;
    } else if (a.type == RDMA_NLDEV_ATTR_DEV_NAME) {
      out.name = cString(a.value);
    }
  }
  if (!has_index || out.name.empty()) return malformed("an RDMA device without index or name");
  return out;
}

Result<std::string> rdmaNetnsModeOf(std::string_view payload) {
  auto attrs = attributes(payload);
  if (!attrs.ok()) return attrs.status();
  for (const auto& a : *attrs) {
    if (a.type == RDMA_NLDEV_SYS_ATTR_NETNS_MODE && !a.value.empty()) {
      return std::string(a.value[0] != 0 ? "shared" : "exclusive");
    }
  }
  return malformed("no RDMA_NLDEV_SYS_ATTR_NETNS_MODE (a kernel without RDMA namespace modes)");
}

}  // namespace sriovdra::host::netlink
