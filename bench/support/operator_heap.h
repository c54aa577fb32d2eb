#pragma once
// What the operator's caches and decoded objects take on the heap, measured in the bench's own
// process (glibc's count after giving free pages back): the least an operator can hold for a
// cluster, beside which operator_scale prints the operator's resident memory.
#include <string>
#include <utility>
#include <vector>

#include "kube/client.h"
#include "support/control_plane.h"

namespace sriovdra::bench {

// What the operator's caches keep for this cluster: the heap its own cache types take when
// filled in this process from the same API server (the bench's other allocations are idle),
// informer by informer ("SriovNodeStates 12.1 MiB").
struct Kept {
  size_t total = 0;
  std::vector<std::pair<std::string, size_t>> parts;
};
Kept heapOfOperatorCaches(const testing::ControlPlane& cp, const std::string& ns);

// What the operator keeps of a SriovNodeState whose hardware and spec no other node shares: the
// heap of `copies` decoded copies of the node's state, each with its PFs renamed.
double heapPerDistinctState(kube::Client& client, const std::string& ns, const std::string& node,
                            size_t copies);

}  // namespace sriovdra::bench
