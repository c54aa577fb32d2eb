// The netlink messages byte for byte (the kernel's UAPI layout, little-endian as on the machines
// we run on), and the parsers against well-formed, hostile and truncated answers.
#include "host/netlink_wire.h"

#include <cerrno>
#include <cstring>

#include <catch2/catch.hpp>
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>

#include "host/rdma_wire.h"

using namespace sriovdra;
namespace nl = sriovdra::host::netlink;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string out;
  for (int c : b) out.push_back(static_cast<char>(c));
  return out;
}

template <typename T>
std::string raw(const T& v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

// A C string as the kernel sends it: with its terminating NUL.
std::string nul(const char* s) { return std::string(s) + '\0'; }

std::string attr(uint16_t type, const std::string& value) {
  nlattr a{static_cast<uint16_t>(4 + value.size()), type};
  std::string out = raw(a) + value;
  out.append((4 - value.size() % 4) % 4, '\0');
  return out;
}

std::string msg(uint16_t type, uint32_t seq, const std::string& payload, uint16_t flags = 0) {
  nlmsghdr h{static_cast<uint32_t>(16 + payload.size()), type, flags, seq, 0};
  std::string out = raw(h) + payload;
  out.append((4 - out.size() % 4) % 4, '\0');
  return out;
}

std::string errorMsg(uint32_t seq, int error, const std::string& tlvs = "") {
  nlmsghdr echoed{16, 0, 0, seq, 0};
  uint16_t flags = NLM_F_CAPPED | (tlvs.empty() ? 0 : NLM_F_ACK_TLVS);
  return msg(NLMSG_ERROR, seq, raw(error) + raw(echoed) + tlvs, flags);
}

std::string genl(uint8_t cmd, const std::string& attrs) {
  genlmsghdr g{cmd, 1, 0};
  return raw(g) + attrs;
}

}  // namespace

TEST_CASE("requests are laid out as the kernel reads them", "[host][netlink][unit]") {
  SECTION("RTM_GETLINK dump without statistics") {
    std::string r = nl::linkDumpRequest(7);
    REQUIRE(r.size() == 40);  // nlmsghdr 16 + ifinfomsg 16 + IFLA_EXT_MASK 8
    CHECK(r.substr(0, 8) == bytes({40, 0, 0, 0, RTM_GETLINK, 0, NLM_F_REQUEST, NLM_F_DUMP >> 8}));
    CHECK(r.substr(8, 8) == bytes({7, 0, 0, 0, 0, 0, 0, 0}));  // seq, pid 0
    CHECK(r.substr(16, 16) == std::string(16, '\0'));          // ifinfomsg: any family, index 0
    CHECK(r.substr(32) == bytes({8, 0, IFLA_EXT_MASK, 0, RTEXT_FILTER_SKIP_STATS, 0, 0, 0}));
  }
  SECTION("CTRL_CMD_GETFAMILY devlink") {
    std::string r = nl::familyRequest(1, "devlink");
    REQUIRE(r.size() == 16 + 4 + 12);
    CHECK(r.substr(4, 2) == bytes({GENL_ID_CTRL, 0}));
    CHECK(r.substr(16, 4) == bytes({CTRL_CMD_GETFAMILY, 1, 0, 0}));
    CHECK(r.substr(20) ==
          bytes({12, 0, CTRL_ATTR_FAMILY_NAME, 0, 'd', 'e', 'v', 'l', 'i', 'n', 'k', 0}));
  }
  SECTION("DEVLINK_CMD_ESWITCH_SET pci/0000:3b:00.0 switchdev") {
    auto r = nl::eswitchSetRequest(0x1a, 9, "0000:3b:00.0", "switchdev");
    REQUIRE(r.ok());
    CHECK(r->substr(4, 2) == bytes({0x1a, 0}));
    CHECK(r->substr(16, 4) == bytes({DEVLINK_CMD_ESWITCH_SET, DEVLINK_GENL_VERSION, 0, 0}));
    std::string attrs = r->substr(20);
    CHECK(attrs ==
          attr(DEVLINK_ATTR_BUS_NAME, nul("pci")) +
              attr(DEVLINK_ATTR_DEV_NAME, nul("0000:3b:00.0")) +
              bytes({6, 0, DEVLINK_ATTR_ESWITCH_MODE, 0, DEVLINK_ESWITCH_MODE_SWITCHDEV, 0, 0, 0}));
    CHECK(nl::eswitchGetRequest(0x1a, 9, "0000:3b:00.0").substr(16, 1) ==
          bytes({DEVLINK_CMD_ESWITCH_GET}));
  }
  SECTION("RTM_GETLINK of one netdev with its VFs, RTM_SETLINK of a VF's GUIDs") {
    std::string get = nl::vfInfoRequest(3, "ib0");
    CHECK(get.substr(4, 4) == bytes({RTM_GETLINK, 0, NLM_F_REQUEST | NLM_F_ACK, 0}));
    uint32_t mask = RTEXT_FILTER_VF | RTEXT_FILTER_SKIP_STATS;
    CHECK(get.substr(32) == attr(IFLA_IFNAME, nul("ib0")) + attr(IFLA_EXT_MASK, raw(mask)));
    // With the counters: the same request without RTEXT_FILTER_SKIP_STATS.
    uint32_t with_stats = RTEXT_FILTER_VF;
    CHECK(nl::vfStatsRequest(3, "ib0").substr(32) ==
          attr(IFLA_IFNAME, nul("ib0")) + attr(IFLA_EXT_MASK, raw(with_stats)));
    std::string set = nl::vfGuidRequest(4, "ib0", 5, 0x0200000000000001, 0x0200000000000002);
    CHECK(set.substr(4, 4) == bytes({RTM_SETLINK, 0, NLM_F_REQUEST | NLM_F_ACK, 0}));
    ifla_vf_guid node{}, port{};  // value-initialized: the padding after vf is zero
    node.vf = port.vf = 5;
    node.guid = 0x0200000000000001;
    port.guid = 0x0200000000000002;
    CHECK(set.substr(32) ==
          attr(IFLA_IFNAME, nul("ib0")) +
              attr(IFLA_VFINFO_LIST | NLA_F_NESTED,
                   attr(IFLA_VF_INFO | NLA_F_NESTED, attr(IFLA_VF_IB_NODE_GUID, raw(node)) +
                                                         attr(IFLA_VF_IB_PORT_GUID, raw(port)))));
  }
  SECTION("an unknown mode is refused before anything is sent") {
    auto r = nl::eswitchSetRequest(0x1a, 9, "0000:3b:00.0", "offload");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("must be legacy or switchdev"));
  }
}

TEST_CASE("answers: data, acknowledgement and the kernel's errors", "[host][netlink][unit]") {
  ifinfomsg header{};
  header.ifi_index = 12;
  header.ifi_type = ARPHRD_ETHER;
  header.ifi_flags = IFF_UP | IFF_BROADCAST;
  uint32_t mtu = 9000;
  std::string link =
      raw(header) + attr(IFLA_IFNAME, nul("ens1f0")) +
      attr(IFLA_ADDRESS, bytes({0x3c, 0xfd, 0xfe, 0xa0, 0x00, 0x0b})) + attr(IFLA_MTU, raw(mtu)) +
      attr(IFLA_PARENT_DEV_NAME, nul("0000:3b:00.0")) + attr(IFLA_PARENT_DEV_BUS_NAME, nul("pci")) +
      attr(IFLA_PROP_LIST | NLA_F_NESTED,
           attr(IFLA_ALT_IFNAME, nul("enp59s0f0np0")) + attr(IFLA_ALT_IFNAME, nul("uplink0")));
  SECTION("a dump: links, then done, in one buffer; others' messages are skipped") {
    auto r =
        nl::parseReply(msg(RTM_NEWLINK, 99, "noise") + msg(RTM_NEWLINK, 5, link) +
                           msg(RTM_NEWLINK, 5, raw(ifinfomsg{}) + attr(IFLA_IFNAME, nul("lo"))) +
                           msg(NLMSG_DONE, 5, raw(0)),
                       5, "reading");
    REQUIRE(r.ok());
    CHECK(r->acked);
    CHECK_FALSE(r->interrupted);
    REQUIRE(r->payloads.size() == 2);
    auto l = nl::linkOf(r->payloads[0]);
    REQUIRE(l.ok());
    CHECK(*l == host::LinkInfo{12,
                               "ens1f0",
                               "3c:fd:fe:a0:00:0b",
                               9000,
                               IFF_UP | IFF_BROADCAST,
                               ARPHRD_ETHER,
                               "pci",
                               "0000:3b:00.0",
                               {"enp59s0f0np0", "uplink0"}});
    auto lo = nl::linkOf(r->payloads[1]);
    REQUIRE(lo.ok());
    CHECK(lo->name == "lo");
    CHECK(lo->parent_device.empty());  // virtual, or a kernel that names no parents
    CHECK(lo->alt_names.empty());
  }
  SECTION("a dump the interfaces changed under says so") {
    auto r = nl::parseReply(
        msg(RTM_NEWLINK, 5, link, NLM_F_MULTI | NLM_F_DUMP_INTR) + msg(NLMSG_DONE, 5, raw(0)), 5,
        "reading");
    REQUIRE(r.ok());
    CHECK(r->interrupted);
  }
  SECTION("an InfiniBand address is its 20 bytes") {
    std::string ib(20, '\x80');
    auto l = nl::linkOf(raw(ifinfomsg{}) + attr(IFLA_ADDRESS, ib));
    REQUIRE(l.ok());
    CHECK(l->mac.size() == 20 * 3 - 1);
    CHECK(l->mac.substr(0, 6) == "80:80:");
  }
  SECTION("an error keeps errno and the extended-ack text") {
    auto r = nl::parseReply(errorMsg(3, -EBUSY, attr(NLMSGERR_ATTR_MSG, nul("VFs are enabled"))), 3,
                            "setting the eSwitch mode");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().sysErrno() == EBUSY);
    CHECK_THAT(r.status().message(),
               Catch::StartsWith("setting the eSwitch mode (VFs are enabled)"));
    auto enodev = nl::parseReply(errorMsg(3, -ENODEV), 3, "reading pci/0000:ff:00.0");
    CHECK(enodev.status().sysErrno() == ENODEV);
  }
  SECTION("the family id and the eSwitch mode") {
    uint16_t id = 0x15, mode = DEVLINK_ESWITCH_MODE_SWITCHDEV, bogus = 7;
    auto family =
        nl::familyIdOf(genl(CTRL_CMD_NEWFAMILY, attr(CTRL_ATTR_FAMILY_NAME, nul("devlink")) +
                                                    attr(CTRL_ATTR_FAMILY_ID, raw(id))));
    REQUIRE(family.ok());
    CHECK(*family == 0x15);
    auto m = nl::eswitchModeOf(
        genl(DEVLINK_CMD_ESWITCH_GET,
             attr(DEVLINK_ATTR_BUS_NAME, "pci") + attr(DEVLINK_ATTR_ESWITCH_MODE, raw(mode))));
    REQUIRE(m.ok());
    CHECK(*m == "switchdev");
    CHECK_FALSE(nl::eswitchModeOf(
                    genl(DEVLINK_CMD_ESWITCH_GET, attr(DEVLINK_ATTR_ESWITCH_MODE, raw(bogus))))
                    .ok());
    CHECK_FALSE(nl::familyIdOf(genl(CTRL_CMD_NEWFAMILY, "")).ok());
  }
}

TEST_CASE("a PF's VF information: the GUIDs of each VF that has them", "[host][netlink][unit]") {
  ifinfomsg info{};
  ifla_vf_mac mac{};
  auto vf = [&](uint32_t id, uint64_t node, uint64_t port) {
    mac.vf = id;
    ifla_vf_guid n{id, node}, p{id, port};
    return attr(IFLA_VF_INFO, attr(IFLA_VF_MAC, raw(mac)) + attr(IFLA_VF_IB_NODE_GUID, raw(n)) +
                                  attr(IFLA_VF_IB_PORT_GUID, raw(p)));
  };
  mac.vf = 2;
  std::string ethernet_vf = attr(IFLA_VF_INFO, attr(IFLA_VF_MAC, raw(mac)));
  std::string payload = raw(info) + attr(IFLA_IFNAME, nul("ib0")) +
                        attr(IFLA_VFINFO_LIST, vf(0, 0, 0) + vf(1, 7, 8) + ethernet_vf);
  auto vfs = nl::vfInfosOf(payload);
  REQUIRE(vfs.ok());
  REQUIRE(vfs->size() == 3);
  CHECK(vfs->at(0).has_guids);
  CHECK(vfs->at(1).vf == 1);
  CHECK(vfs->at(1).node_guid == 7);
  CHECK(vfs->at(1).port_guid == 8);
  CHECK(vfs->at(2).vf == 2);
  CHECK_FALSE(vfs->at(2).has_guids);
  CHECK(nl::vfInfosOf(raw(info))->empty());
  ifla_vf_guid whole{1, 9};
  std::string short_guid =
      raw(info) + attr(IFLA_VFINFO_LIST,
                       attr(IFLA_VF_INFO, attr(IFLA_VF_IB_NODE_GUID, raw(whole).substr(0, 12))));
  CHECK_FALSE(nl::vfInfosOf(short_guid).ok());
  CHECK(host::guidText(0x0211223344556677) == "02:11:22:33:44:55:66:77");
  CHECK(host::parseGuid("02:11:22:33:44:55:66:77").value() == 0x0211223344556677);
  CHECK(host::parseGuid("02:11:22:33:44:55:66:7G").status().code() == Code::kInvalidArgument);
  CHECK_FALSE(host::parseGuid("02:11:22:33:44:55:66").ok());
  CHECK_FALSE(host::parseGuid("02-11-22-33-44-55-66-77").ok());
}

TEST_CASE("a PF's VF counters: each VF's IFLA_VF_STATS under its index", "[host][netlink][unit]") {
  ifinfomsg info{};
  auto u64 = [](uint16_t type, uint64_t v) { return attr(type, raw(v)); };
  auto vf = [&](uint32_t id, const std::string& stats) {
    ifla_vf_mac mac{};
    mac.vf = id;
    return attr(IFLA_VF_INFO, attr(IFLA_VF_MAC, raw(mac)) + stats);
  };
  // As rtnl_fill_vfinfo() nests them, a padding attribute among the 64-bit values.
  std::string busy =
      attr(IFLA_VF_STATS, u64(IFLA_VF_STATS_RX_PACKETS, 10) + u64(IFLA_VF_STATS_TX_PACKETS, 20) +
                              attr(IFLA_VF_STATS_PAD, "") + u64(IFLA_VF_STATS_RX_BYTES, 1500) +
                              u64(IFLA_VF_STATS_TX_BYTES, 3000) + u64(IFLA_VF_STATS_BROADCAST, 1) +
                              u64(IFLA_VF_STATS_MULTICAST, 2) + u64(IFLA_VF_STATS_RX_DROPPED, 3) +
                              u64(IFLA_VF_STATS_TX_DROPPED, 4));
  std::string payload = raw(info) + attr(IFLA_IFNAME, nul("ens1f0")) +
                        attr(IFLA_VFINFO_LIST, vf(3, busy) + vf(4, ""));
  auto stats = nl::vfStatsOf(payload);
  REQUIRE(stats.ok());
  REQUIRE(stats->size() == 2);
  CHECK(stats->at(0) == host::VfStats{.vf = 3,
                                      .rx_packets = 10,
                                      .tx_packets = 20,
                                      .rx_bytes = 1500,
                                      .tx_bytes = 3000,
                                      .broadcast = 1,
                                      .multicast = 2,
                                      .rx_dropped = 3,
                                      .tx_dropped = 4});
  CHECK(stats->at(1) == host::VfStats{.vf = 4});  // no IFLA_VF_STATS: all zero
  // A counter shorter than 64 bits, or a VF without its index, is refused.
  std::string short_counter =
      raw(info) + attr(IFLA_VFINFO_LIST,
                       vf(0, attr(IFLA_VF_STATS, attr(IFLA_VF_STATS_RX_BYTES, raw(uint32_t{7})))));
  CHECK(nl::vfStatsOf(short_counter).status().code() == Code::kInvalidArgument);
  std::string no_index = raw(info) + attr(IFLA_VFINFO_LIST, attr(IFLA_VF_INFO, busy));
  CHECK_THAT(nl::vfStatsOf(no_index).status().message(), Catch::Contains("without IFLA_VF_MAC"));
  // The kernel says how many VFs there are before the list: a list that overflowed its 16-bit
  // length (some 200 VFs with counters) lists fewer, cut short or broken, and is refused.
  std::string counted = raw(info) + attr(IFLA_NUM_VF, raw(uint32_t{2})) +
                        attr(IFLA_VFINFO_LIST, vf(3, busy) + vf(4, ""));
  CHECK(nl::vfStatsOf(counted).value().size() == 2);
  std::string wrapped =
      raw(info) + attr(IFLA_NUM_VF, raw(uint32_t{256})) + attr(IFLA_VFINFO_LIST, vf(0, busy));
  auto cut = nl::vfStatsOf(wrapped);
  CHECK(cut.status().code() == Code::kTooLarge);
  CHECK_THAT(cut.status().message(), Catch::StartsWith("256 VFs with their counters exceed"));
  std::string broken = raw(info) + attr(IFLA_NUM_VF, raw(uint32_t{256})) +
                       attr(IFLA_VFINFO_LIST, vf(0, busy).substr(0, 40));
  CHECK(nl::vfStatsOf(broken).status().code() == Code::kTooLarge);
}

TEST_CASE("hostile answers are refused, never read past their end", "[host][netlink][unit]") {
  std::string good = msg(RTM_NEWLINK, 1, raw(ifinfomsg{}));
  std::string too_long = good;
  too_long[0] = static_cast<char>(200);  // nlmsg_len beyond the buffer
  CHECK(nl::parseReply(too_long, 1, "x").status().code() == Code::kInvalidArgument);
  std::string too_short = good;
  too_short[0] = 4;  // shorter than its own header
  CHECK(nl::parseReply(too_short, 1, "x").status().code() == Code::kInvalidArgument);
  CHECK(nl::parseReply(msg(NLMSG_ERROR, 1, "ab"), 1, "x").status().code() ==
        Code::kInvalidArgument);
  // Error codes no kernel sends (found by the fuzzer: -INT_MIN overflowed).
  for (int bogus : {INT32_MIN, 5}) {
    CHECK(nl::parseReply(errorMsg(1, bogus), 1, "x").status().code() == Code::kInvalidArgument);
  }
  // An attribute whose length runs past the payload, at top level and nested.
  std::string bad_attr = raw(ifinfomsg{}) + bytes({40, 0, IFLA_IFNAME, 0, 'x', 0, 0, 0});
  CHECK(nl::linkOf(bad_attr).status().code() == Code::kInvalidArgument);
  std::string bad_nested =
      raw(ifinfomsg{}) + attr(IFLA_PROP_LIST | NLA_F_NESTED, bytes({3, 0, IFLA_ALT_IFNAME, 0}));
  CHECK(nl::linkOf(bad_nested).status().code() == Code::kInvalidArgument);
  CHECK(nl::linkOf("short").status().code() == Code::kInvalidArgument);
  CHECK(nl::linkOf(raw(ifinfomsg{}) + attr(IFLA_MTU, "ab")).status().code() ==
        Code::kInvalidArgument);
  // A last message whose padding is cut off ends the buffer (found by the fuzzer: the offset
  // once ran past the end).
  std::string unpadded = msg(RTM_NEWLINK, 1, raw(ifinfomsg{}) + "abc");
  unpadded.resize(unpadded.size() - 1);
  unpadded[0] = static_cast<char>(unpadded.size());
  auto cut = nl::parseReply(unpadded, 1, "x");
  REQUIRE(cut.ok());
  CHECK(cut->payloads.size() == 1);
  // A trailing partial header is not a message; an empty buffer holds nothing.
  auto partial = nl::parseReply(good + "abc", 1, "x");
  REQUIRE(partial.ok());
  CHECK(partial->payloads.size() == 1);
  CHECK_FALSE(nl::parseReply("", 1, "x")->acked);
}

TEST_CASE("RDMA netlink: the namespace mode, the devices and a device's move",
          "[host][netlink][unit]") {
  const auto nldev = [](int cmd) { return static_cast<uint16_t>((RDMA_NL_NLDEV << 10) + cmd); };
  SECTION("requests: no family header, attributes right after the nlmsghdr") {
    CHECK(nl::rdmaSysGetRequest(3) ==
          msg(nldev(RDMA_NLDEV_CMD_SYS_GET), 3, "", NLM_F_REQUEST | NLM_F_ACK));
    CHECK(nl::rdmaDeviceDumpRequest(4) ==
          msg(nldev(RDMA_NLDEV_CMD_GET), 4, "", NLM_F_REQUEST | NLM_F_DUMP));
    CHECK(nl::rdmaSetNetnsRequest(5, 7, 42) ==
          msg(nldev(RDMA_NLDEV_CMD_SET), 5,
              attr(RDMA_NLDEV_ATTR_DEV_INDEX, raw(uint32_t{7})) +
                  attr(RDMA_NLDEV_NET_NS_FD, raw(uint32_t{42})),
              NLM_F_REQUEST | NLM_F_ACK));
  }
  SECTION("answers") {
    // What `rdma system show` reads: 1 is shared, 0 exclusive (a u8).
    CHECK(nl::rdmaNetnsModeOf(attr(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, bytes({1}))).value() ==
          "shared");
    CHECK(nl::rdmaNetnsModeOf(attr(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, bytes({0}))).value() ==
          "exclusive");
    auto dev = nl::rdmaDeviceOf(attr(RDMA_NLDEV_ATTR_DEV_INDEX, raw(uint32_t{3})) +
                                attr(RDMA_NLDEV_ATTR_DEV_NAME, nul("mlx5_3")) +
                                attr(RDMA_NLDEV_ATTR_FW_VERSION, nul("20.31.1014")));
    REQUIRE(dev.ok());
    CHECK(*dev == nl::RdmaDeviceInfo{3, "mlx5_3"});
  }
  SECTION("answers without what they must carry, or running past their end") {
    // A kernel before 5.2 has no namespace modes: no attribute at all.
    CHECK_THAT(nl::rdmaNetnsModeOf("").status().message(),
               Catch::Contains("no RDMA_NLDEV_SYS_ATTR_NETNS_MODE"));
    CHECK(nl::rdmaNetnsModeOf(attr(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, "")).status().code() ==
          Code::kInvalidArgument);
    CHECK(nl::rdmaDeviceOf(attr(RDMA_NLDEV_ATTR_DEV_NAME, nul("mlx5_3"))).status().code() ==
          Code::kInvalidArgument);
    CHECK(nl::rdmaDeviceOf(attr(RDMA_NLDEV_ATTR_DEV_INDEX, "ab") +
                           attr(RDMA_NLDEV_ATTR_DEV_NAME, nul("mlx5_3")))
              .status()
              .code() == Code::kInvalidArgument);
    CHECK(nl::rdmaDeviceOf(bytes({40, 0, RDMA_NLDEV_ATTR_DEV_NAME, 0, 'x', 0, 0, 0}))
              .status()
              .code() == Code::kInvalidArgument);
  }
}
