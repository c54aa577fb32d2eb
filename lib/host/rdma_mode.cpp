#include "host/rdma_mode.h"

namespace sriovdra::host {
namespace {

constexpr std::string_view kRebootPrefix = "the RDMA subsystem runs in ";

}  // namespace

std::string modprobeContent(std::string_view mode) {
  return "# Managed by sriov-dra-operator (SriovNetworkPoolConfig rdmaMode: " + std::string(mode) +
         "); removed when no pool asks for a mode.\noptions ib_core netns_mode=" +
         (mode == "exclusive" ? "0" : "1") + "\n";
}

RdmaModePlan planRdmaMode(const RdmaModeInput& in) {
  RdmaModePlan plan;
  if (in.desired.empty()) {
    // Ours, or the SR-IOV network operator's before us (the same file).
    plan.remove = in.file && (in.file->find("sriov-dra-operator") != std::string::npos ||
                              in.file->find("sriov-network-operator") != std::string::npos);
    return plan;
  }
  std::string content = modprobeContent(in.desired);
  if (in.file != content) plan.write = content;
  if (!in.current.empty() && in.current != in.desired) {
    plan.reboot = std::string(kRebootPrefix) + in.current +
                  " network namespace mode and the node's SriovNetworkPoolConfig asks for " +
                  in.desired + " (ib_core netns_mode=" + (in.desired == "exclusive" ? "0" : "1") +
                  " in /" + std::string(kModprobeFile) + ", read at boot)";
  }
  return plan;
}

bool isRdmaModeReason(std::string_view reason) { return reason.starts_with(kRebootPrefix); }

}  // namespace sriovdra::host
