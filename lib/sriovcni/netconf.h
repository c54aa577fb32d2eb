#pragma once
// The `sriov` CNI plugin's configuration and its cache file, pure, compatible with upstream's
// k8snetworkplumbingwg/sriov-cni (docs/cni.md):
//   * decodeNetConf reads the network configuration with Go's encoding/json rules (cni/go_json.h)
//     into the keys upstream reads; checkNetConf makes LoadConf's checks that need no host, with
//     upstream's messages, and fills its defaults (vlanQoS 0 and vlanProto "802.1q" when a vlan
//     is set; the proto lower-cased);
//   * the cache (/var/lib/cni/sriov/<containerID>-<ifName>) is upstream's JSON: every key of its
//     NetConf, sorted, compact, "dns" left out when empty; plus "DPDKMode", which upstream does not
//     write (and ignores when it reads: its field is json:"-"), so that a DPDK VF's DEL knows it
//     has no netdev to move back. decodeCache reads files of either plugin.
//   * macFromArgs reads CNI_ARGS as containernetworking/cni's LoadArgs with upstream's envArgs:
//     "K=V;K2=V2", keys by exact Go field name (MAC, IgnoreUnknown), unknown keys refused unless
//     IgnoreUnknown is 1 or true.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sriovdra::sriovcni {

// The VF as it was before ADD changed it (upstream's OrigVfState).
struct VfState {
  std::string host_if_name;
  bool spoofchk = false;
  bool trust = false;
  std::string admin_mac;
  std::string effective_mac;
  int64_t vlan = 0;
  int64_t vlan_qos = 0;
  int64_t vlan_proto = 0;  // 33024 (0x8100) or 34984 (0x88a8); 0 in old caches: 802.1Q
  int64_t min_tx_rate = 0;
  int64_t max_tx_rate = 0;
  uint32_t link_state = 0;
  int64_t mtu = 0;  // the VF netdev's, 0 for a DPDK VF
  bool operator==(const VfState&) const = default;
};

// What every plugin's configuration has (containernetworking/cni's types.PluginConf).
struct PluginConf {
  std::string cni_version;
  std::string name;
  std::string type;
  std::string ipam_type;          // "ipam": {"type"}; "" = no IPAM
  std::string capabilities_json;  // the object, "" when absent
  std::string dns_json;           // the object, "" when absent or empty
  std::string prev_result_json;   // the object, "" when absent
  bool operator==(const PluginConf&) const = default;
};

struct NetConf {
  PluginConf plugin;
  // SriovNetConf
  std::string device_id;  // the VF's PCI address
  std::optional<int64_t> vlan;
  std::optional<int64_t> vlan_qos;
  std::optional<std::string> vlan_proto;  // "802.1q" or "802.1ad" after checkNetConf
  std::string spoofchk;                   // "on": on; anything else non-empty: off
  std::string trust;                      // ditto
  std::string link_state;                 // auto | enable | disable
  std::optional<int64_t> min_tx_rate;     // Mbps
  std::optional<int64_t> max_tx_rate;
  std::string mac;  // "mac"/"MAC"; ADD puts the effective MAC here (CNI_ARGS, runtimeConfig)
  std::string runtime_mac;  // "runtimeConfig": {"mac"}
  std::string log_level;
  std::string log_file;
  // What ADD found and did, kept in the cache for DEL.
  VfState orig;
  std::string master;  // the PF's netdev
  int64_t vf_id = 0;
  std::optional<int64_t> mtu;
  bool dpdk_mode = false;
  bool operator==(const NetConf&) const = default;
};

// kInvalidArgument "LoadConf(): failed to load netconf: <Go's words>" when a key has the wrong
// type.
Result<NetConf> decodeNetConf(std::string_view text);
// kInvalidArgument with upstream's message ("LoadConf(): vlan id 5000 invalid: ...").
Status checkNetConf(NetConf& conf);
// The VLAN protocol's number: 0x8100 for "802.1q", 0x88a8 for "802.1ad".
uint16_t vlanProtoNumber(std::string_view proto);
// IFLA_VF_LINK_STATE of a checked link_state: 0 auto, 1 enable, 2 disable.
uint32_t linkStateNumber(std::string_view link_state);

std::string encodeCache(const NetConf& conf);
Result<NetConf> decodeCache(std::string_view text);

// The MAC= of CNI_ARGS ("" when it names none); kInvalidArgument "ARGS: ..." as LoadArgs words it.
Result<std::string> macFromArgs(std::string_view args);

}  // namespace sriovdra::sriovcni
