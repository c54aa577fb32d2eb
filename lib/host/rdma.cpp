#include "host/rdma.h"

#include <algorithm>
#include <cerrno>

#include <linux/netlink.h>

#include "host/netlink_socket.h"
#include "host/rdma_wire.h"

namespace sriovdra::host {

Result<std::string> KernelRdma::netnsMode() const {
  uint32_t seq = netlink::nextSeq();
  auto reply = netlink::transact(NETLINK_RDMA, netlink::rdmaSysGetRequest(seq), seq,
                                 "reading the RDMA subsystem's namespace mode", timeout_);
  if (!reply.ok()) return reply.status();
  if (reply->payloads.empty()) {
    return Status(Code::kInvalidArgument,
                  "reading the RDMA subsystem's namespace mode: the kernel sent no answer");
  }
  return netlink::rdmaNetnsModeOf(reply->payloads.front());
}

Result<uint32_t> KernelRdma::deviceIndex(std::string_view device) const {
  uint32_t seq = netlink::nextSeq();
  auto dump = netlink::transact(NETLINK_RDMA, netlink::rdmaDeviceDumpRequest(seq), seq,
                                "listing the RDMA devices", timeout_);
  if (!dump.ok()) return dump.status();
  for (const auto& payload : dump->payloads) {
    auto dev = netlink::rdmaDeviceOf(payload);
    if (!dev.ok()) return dev.status();
    if (dev->name == device) return dev->index;
  }
  return Status::fromErrno(
      ENODEV, "this namespace has no RDMA device " + std::string(device.substr(0, 64)));
}

Status KernelRdma::moveDevice(std::string_view device, const NetNamespace& target) {
  auto index = deviceIndex(device);
  if (!index.ok()) return index.status();
  uint32_t seq = netlink::nextSeq();
  auto set = netlink::transact(
      NETLINK_RDMA, netlink::rdmaSetNetnsRequest(seq, *index, static_cast<uint32_t>(target.fd())),
      seq, "moving RDMA device " + std::string(device) + " to another namespace", timeout_);
  return set.ok() ? Status::ok() : set.status();
}

std::vector<std::string> rdmaDevicesOf(const Sysfs& sysfs, std::string_view pci_address) {
  auto names = sysfs.list("sys/bus/pci/devices/" + std::string(pci_address) + "/infiniband");
  if (!names.ok()) return {};
  std::sort(names->begin(), names->end());
  return *names;
}

}  // namespace sriovdra::host
