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

Status KernelRdma::moveDevice(std::string_view device, const NetNamespace& target) {
  std::string what = "moving RDMA device " + std::string(device) + " to another namespace";
  uint32_t seq = netlink::nextSeq();
  auto dump = netlink::transact(NETLINK_RDMA, netlink::rdmaDeviceDumpRequest(seq), seq,
                                "listing the RDMA devices", timeout_);
  if (!dump.ok()) return dump.status();
  for (const auto& payload : dump->payloads) {
    auto dev = netlink::rdmaDeviceOf(payload);
    if (!dev.ok()) return dev.status();
    if (dev->name != device) continue;
    seq = netlink::nextSeq();
    auto set = netlink::transact(
        NETLINK_RDMA,
        netlink::rdmaSetNetnsRequest(seq, dev->index, static_cast<uint32_t>(target.fd())), seq,
        what, timeout_);
    return set.ok() ? Status::ok() : set.status();
  }
  return Status::fromErrno(ENODEV, what + ": this namespace has no RDMA device of that name");
}

std::vector<std::string> rdmaDevicesOf(const Sysfs& sysfs, std::string_view pci_address) {
  auto names = sysfs.list("sys/bus/pci/devices/" + std::string(pci_address) + "/infiniband");
  if (!names.ok()) return {};
  std::sort(names->begin(), names->end());
  return *names;
}

}  // namespace sriovdra::host
