#include "kernel/rdma_scenario.h"

#include <cerrno>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "host/netlink_encoding.h"
#include "host/netlink_socket.h"
#include "host/netns.h"
#include "host/rdma.h"

namespace sriovdra::kernel_test {
namespace {

namespace nl = host::netlink;
using namespace host::netlink::encoding;

constexpr std::chrono::seconds kTimeout{5};

Status request(int command, const std::string& attrs, const std::string& what) {
  uint32_t seq = nl::nextSeq();
  std::string msg =
      message(static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, command)), seq, attrs);
  auto reply = nl::transact(NETLINK_RDMA, msg, seq, what, kTimeout);
  return reply.ok() ? Status::ok() : reply.status();
}

// `rdma link add NAME type rxe netdev NETDEV`.
Status addRxe(const std::string& name, const std::string& netdev) {
  std::string attrs;
  stringAttribute(attrs, RDMA_NLDEV_ATTR_DEV_NAME, name);
  stringAttribute(attrs, RDMA_NLDEV_ATTR_LINK_TYPE, "rxe");
  stringAttribute(attrs, RDMA_NLDEV_ATTR_NDEV_NAME, netdev);
  return request(RDMA_NLDEV_CMD_NEWLINK, attrs, "rdma link add " + name);
}

// `rdma system set netns shared|exclusive`.
Status setMode(bool shared) {
  std::string attrs;
  attribute(attrs, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, raw(static_cast<uint8_t>(shared ? 1 : 0)));
  return request(RDMA_NLDEV_CMD_SYS_SET, attrs, "rdma system set netns");
}

// `rdma link delete NAME`.
Status deleteLink(const host::KernelRdma& rdma, const std::string& name) {
  auto index = rdma.deviceIndex(name);
  if (!index.ok()) return index.status();
  std::string attrs;
  attribute(attrs, RDMA_NLDEV_ATTR_DEV_INDEX, raw(*index));
  return request(RDMA_NLDEV_CMD_DELLINK, attrs, "rdma link delete " + name);
}

std::string modeResult(const host::Rdma& rdma) {
  auto mode = rdma.netnsMode();
  return mode.ok() ? "netns " + *mode : resultOf(mode.status());
}

}  // namespace

std::vector<Step> runRdmaScenario(const std::string& netdev) {
  host::KernelRdma rdma;
  std::vector<Step> steps;
  auto step = [&](std::string name, std::string result) {
    steps.push_back({std::move(name), std::move(result), {}});
  };
  auto self = host::NetNamespace::current();
  if (!self.ok()) return {{"this namespace", resultOf(self.status()), {}}};
  step("rdma link add rxe0 type rxe netdev " + netdev, resultOf(addRxe("rxe0", netdev)));
  step("rdma system show", modeResult(rdma));
  step("rdma dev set rxe0 netns (its own), shared mode", resultOf(rdma.moveDevice("rxe0", *self)));
  step("rdma system set netns exclusive", resultOf(setMode(false)));
  step("rdma system show, after", modeResult(rdma));
  auto pod = host::NetNamespace::createTemporary();
  if (!pod.ok()) {
    step("a pod namespace", resultOf(pod.status()));
    return steps;
  }
  step("rdma dev set rxe0 netns pod", resultOf(rdma.moveDevice("rxe0", *pod)));
  step("rdma dev set mlx5_9 netns pod (the dump lists no such device)",
       resultOf(rdma.moveDevice("mlx5_9", *pod)));
  step("in the pod: rdma dev set rxe0 netns (the host's)",
       resultOf(pod->run([&] { return rdma.moveDevice("rxe0", *self); })));
  step("rdma system set netns shared, a pod namespace exists", resultOf(setMode(true)));
  step("rdma link delete rxe0", resultOf(deleteLink(rdma, "rxe0")));
  return steps;
}

}  // namespace sriovdra::kernel_test
