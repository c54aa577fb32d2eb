#pragma once
// The kubelet plugin's record of prepared claims, kept in <state-dir>/checkpoint.json so that
// unprepare and the agent's "never tear down a VF in use" rule work after a restart. A claim is
// recorded as Preparing (with each VF's original driver) before the host is touched and as
// Prepared once its CDI spec is written, so a crash in between is finished or undone later.
// The file carries a SHA-256 of its content: a corrupt or edited file is refused, never read
// half. Pure: the plugin reads and writes the file.
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "dra/vf_config.h"
#include "host/prepared.h"

namespace sriovdra::dra {

// What the SR-IOV network device plugin's info providers said of one VF beyond its generic part,
// by provider: "rdma" {uverbs, umad, issm, rdma_cm: device nodes in the container; rdma_dev: the
// RDMA device}, "vfio" {mount: /dev/vfio/vfio, dev-mount: /dev/vfio/<group>}, "vhost"
// {net-mount, tun-mount}. The `_INFO` variable of a pod's resource carries it (cdi.h).
using PluginInfo = std::map<std::string, std::map<std::string, std::string>>;

struct PreparedDevice {
  std::vector<std::string> request_names;
  std::string pool;
  std::string device;       // "0000-11-00-1"
  std::string pci_address;  // "0000:11:00.1"
  std::vector<std::string> cdi_device_ids;
  VfConfig config;  // effective; a target driver means unprepare restores original_driver
  std::string original_driver;   // "" = none was bound
  std::string device_info_path;  // Multus device-info file written for it ("" = none)
  // Its k8s.cni.cncf.io/resourceName attribute when prepared ("" = none): an extended-resource
  // claim's VF takes the network of the pod's annotation that is for this resource
  // (dra/network_selection.h).
  std::string resource_name;
  PluginInfo plugin_info;  // from the container edits it was prepared with
  bool operator==(const PreparedDevice&) const = default;
};

struct PreparedClaim {
  enum class State { kPreparing, kPrepared };
  std::string uid;
  std::string namespace_;
  std::string name;
  std::string pod_uid;
  std::string pod_name;  // "" in checkpoints of agents before it was kept
  State state = State::kPreparing;
  std::vector<PreparedDevice> devices;
  // Made by the scheduler for a container's extended resource (KEP-5004): no VfConfig names the
  // network, the pod's k8s.v1.cni.cncf.io/networks annotation does.
  bool extended_resource = false;
  bool operator==(const PreparedClaim&) const = default;
};

// A VF prepared for a pod, as its pod-level CDI device names it.
struct PodVf {
  std::string pci_address;
  std::string resource_name;  // PreparedDevice::resource_name
  PluginInfo plugin_info;     // PreparedDevice::plugin_info
  bool operator==(const PodVf&) const = default;
};

struct Checkpoint {
  std::map<std::string, PreparedClaim> claims;  // by claim UID
  bool operator==(const Checkpoint&) const = default;

  std::string encode() const;
  // kInvalidArgument naming the problem when the text is not a checkpoint or its checksum
  // does not match.
  static Result<Checkpoint> decode(std::string_view text);
  // VF address -> "namespace/name (prepared for its pod)" of the claims holding it (for the
  // agent's plan and its Blocked message).
  host::PreparedVfs preparedVfs() const;
  // The VFs prepared for a pod, by PCI address.
  std::vector<PodVf> podVfs(const std::string& pod_uid) const;
};

}  // namespace sriovdra::dra
