#pragma once
// The `ib-sriov` CNI plugin's configuration and its cache file, pure, compatible with upstream's
// k8snetworkplumbingwg/ib-sriov-cni: the keys it reads with Go's rules, LoadConf's check of
// link_state, and its cache (/var/lib/cni/ib-sriov/<containerID>-<ifName>: every key of its
// NetConf, sorted, compact), which either plugin reads.
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"
#include "sriovcni/netconf.h"

namespace sriovdra::sriovcni {

// rdma-cni's RdmaNetState: the VF's RDMA device moved into the pod (rdmaIsolation).
struct RdmaNetState {
  std::string version;
  std::string device_id;
  std::string sandbox_rdma_dev_name;
  std::string container_rdma_dev_name;
  bool operator==(const RdmaNetState&) const = default;
};

struct IbNetConf {
  PluginConf plugin;
  std::string device_id;
  std::string pkey;        // read and kept, never used (ib-kubernetes reads it from the NAD)
  std::string link_state;  // auto | enable | disable
  bool rdma_isolation = false;
  bool ib_kubernetes_enabled = false;
  bool vfio_pci_mode = false;
  std::string runtime_guid;                     // "runtimeConfig": {"infinibandGUID"}
  std::map<std::string, std::string> args_cni;  // "args": {"cni": {...}}
  bool args_cni_set = false;                    // "args": {"cni"} was an object, not null
  // What ADD found and did, kept in the cache for DEL.
  std::string master;
  int64_t vf_id = 0;
  std::string host_if_name;  // the VF's netdev before ADD
  std::string host_if_guid;  // its GUID before ADD, when ADD set one; "" otherwise
  std::string cont_if_name;  // CNI_IFNAME once moved
  RdmaNetState rdma_net_state;
  bool operator==(const IbNetConf&) const = default;
};

// kInvalidArgument "failed to load netconf: <Go's words>" or "invalid link_state value: X".
Result<IbNetConf> decodeIbNetConf(std::string_view text);
std::string encodeIbCache(const IbNetConf& conf);
Result<IbNetConf> decodeIbCache(std::string_view text);

// The GUID ADD sets: runtimeConfig.infinibandGUID, else args.cni.guid ("" = none).
std::string guidOf(const IbNetConf& conf);
// "02:00:00:00:00:00:00:01": eight hex bytes separated by colons (upstream's IsValidGUID).
bool isValidGuid(std::string_view guid);
bool isAllZeroGuid(std::string_view guid);
bool isAllOnesGuid(std::string_view guid);

}  // namespace sriovdra::sriovcni
