#pragma once
// Named points in the node's operations where a test stops a process mid-operation, to kill the
// agent, containerd or the kubelet right there (tests/node/node_faults_test.cpp, the kill
// matrix). In the product a point is a call to an empty hook: nothing happens and nothing is read
// from the environment. Only the test programs that run on the simulated kernel
// (sriov-dra-agent-simulated, cni-simulated; host/simulated_faults.h) install a handler.
//
// The points, in the order a pod's life meets them:
//   prepare       NodePrepareResources: the claim's CDI spec and files are written, the
//                 checkpoint still says Preparing
//   attach        RunPodSandbox: the pod's VFs are prepared, nothing of them is attached yet
//   cni-add       a CNI ADD of our plugins: the VF is configured and in the pod's namespace with
//                 its addresses; neither its cache nor the runtime's result is written
//   cni-del       a CNI DEL of our plugins: the VF is reset and back on the host; its cache and
//                 allocation are still there
//   unprepare     NodeUnprepareResources: the claim's files are removed, the checkpoint still
//                 holds it
//   vfs-removed   a policy change that recreates VFs: the PF's VFs are gone (sriov_numvfs 0),
//                 the new count is not written yet
//
// Thread-safety: setHandler() before the process starts threads; point() from any thread.
#include <string_view>

namespace sriovdra::fault {

using Handler = void (*)(std::string_view point);

void setHandler(Handler handler);
// Calls the handler, if one is set, which may block; otherwise returns at once.
void point(std::string_view name);

}  // namespace sriovdra::fault
