#pragma once
// GPUs published as partitionable devices the way NVIDIA's DRA driver for GPUs publishes them with
// dynamic MIG (kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1, cmd/gpu-kubelet-plugin
// partitions.go and driver.go, feature gate DynamicMIG, Kubernetes 1.35 or later): one pool per
// node (driver gpu.nvidia.com, pool = node name) of 1 + G slices: the first holds only the
// counter sets, one per GPU ("gpu-<i>-counter-set": multiprocessors, copy-engines, decoders,
// encoders, jpeg-engines, ofa-engines, memory, memory-slice-0..7), then one slice of devices per
// GPU: the GPU whole ("gpu-<i>", type gpu, consuming every counter) and each MIG placement
// ("gpu-<i>-mig-<profile without dots>-<GI profile ID>-<first memory slice>", type mig, with its
// profile and the parent's UUID, consuming its profile's engines and memory and the memory slices
// of its placement). The profile table is an A100-40GB's (1g.5gb x7, 2g.10gb x3, 3g.20gb x2,
// 4g.20gb, 7g.40gb); its engine counts are NVIDIA's documented ones, not read from hardware.
// A test handle, which the real driver's dynamic MIG devices lack: every device's `uuid`
// attribute is unique ("<node>-<device>"), so that tests can hold one given device.
#include <string>
#include <vector>

#include "api/node_state.h"
#include "api/resource.h"

namespace sriovdra::testing {

struct MigProfile {
  std::string name;             // 1g.5gb
  int gi_profile_id;            // the GPU instance profile ID in the device name
  int memory_slices;            // of the GPU's 8
  std::vector<int> placements;  // first memory slice of each placement
  int multiprocessors, copy_engines, decoders, jpeg_engines, ofa_engines;
};
const std::vector<MigProfile>& a100MigProfiles();

// A MIG device's name: gpu-0-mig-1g5gb-19-3.
std::string migDeviceName(size_t gpu, const MigProfile& p, int start);

// The slices (name, spec) of the node's partitionable GPUs; slice names start with `prefix`.
std::vector<std::pair<std::string, api::ResourceSliceSpec>> migGpuSlices(
    const std::string& node, const std::vector<api::Gpu>& gpus, const std::string& prefix);

}  // namespace sriovdra::testing
