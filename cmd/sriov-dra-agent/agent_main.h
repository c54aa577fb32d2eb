#pragma once
// The sriov-dra-agent command line: flags -> process::runAgent, with the kernel `kernel` gives
// (empty: the real one). Shared by sriov-dra-agent and, for the demo and the tests,
// sriov-dra-agent-simulated (tools/agent_simulated.cpp). Call it first thing in main().
#include "node/agent_process.h"

namespace sriovdra {

int agentMain(int argc, char** argv, process::KernelFactory kernel);

}  // namespace sriovdra
