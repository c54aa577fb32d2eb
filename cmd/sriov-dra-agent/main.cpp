// sriov-dra-agent: configures SR-IOV VFs on its node, reports the PCIe topology, publishes the
// node's ResourceSlices and is the kubelet DRA plugin of the driver. Flags (agent_main.h) ->
// process::runAgent, on this machine's kernel.
#include "sriov-dra-agent/agent_main.h"

int main(int argc, char** argv) { return sriovdra::agentMain(argc, argv, nullptr); }
