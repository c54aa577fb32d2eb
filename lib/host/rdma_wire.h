#pragma once
// The RDMA netlink messages (NETLINK_RDMA, client RDMA_NL_NLDEV, <rdma/rdma_netlink.h>) that
// rdma.h's KernelRdma sends and reads, as bytes (pure: no sockets, no globals). The message type
// is RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, command); attributes follow the nlmsghdr directly (no family
// header).
//   rdmaSysGetRequest       RDMA_NLDEV_CMD_SYS_GET, as `rdma system show`
//   rdmaDeviceDumpRequest   RDMA_NLDEV_CMD_GET of every device (NLM_F_DUMP), as `rdma dev show`
//   rdmaSetNetnsRequest     RDMA_NLDEV_CMD_SET of one device (RDMA_NLDEV_ATTR_DEV_INDEX) with
//                           RDMA_NLDEV_NET_NS_FD, as `rdma dev set DEV netns NS`
// The answers are read with netlink_wire.h's parseReply; the readers below take one payload.
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sriovdra::host::netlink {

std::string rdmaSysGetRequest(uint32_t seq);
std::string rdmaDeviceDumpRequest(uint32_t seq);
std::string rdmaSetNetnsRequest(uint32_t seq, uint32_t device_index, uint32_t netns_fd);

// One device of an RDMA_NLDEV_CMD_GET answer. kInvalidArgument without its index or name.
struct RdmaDeviceInfo {
  uint32_t index = 0;  // RDMA_NLDEV_ATTR_DEV_INDEX
  std::string name;    // RDMA_NLDEV_ATTR_DEV_NAME
  bool operator==(const RdmaDeviceInfo&) const = default;
};
Result<RdmaDeviceInfo> rdmaDeviceOf(std::string_view payload);

// From an RDMA_NLDEV_CMD_SYS_GET answer: RDMA_NLDEV_SYS_ATTR_NETNS_MODE, "shared" (1) or
// "exclusive" (0). kInvalidArgument when the kernel did not send it (kernels before 5.2 have no
// network namespace modes at all).
Result<std::string> rdmaNetnsModeOf(std::string_view payload);

}  // namespace sriovdra::host::netlink
