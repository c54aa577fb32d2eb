#include "host/rdma_mode.h"

#include <algorithm>

#include "base/strings.h"

namespace sriovdra::host {
namespace {

constexpr std::string_view kRebootPrefix = "the RDMA subsystem runs in ";
constexpr std::string_view kOwnMarker =
    "# Managed by sriov-dra-operator (SriovNetworkPoolConfig rdmaMode); removed when no pool "
    "asks for a mode.";
// The first line of the file the SR-IOV network operator writes.
constexpr std::string_view kUpstreamMarker =
    "# This file is managed by sriov-network-operator do not edit.";

std::string_view valueOf(bool exclusive) { return exclusive ? "0" : "1"; }

// The netns_mode the last "options ib_core ..." line of `text` sets, if any.
std::optional<std::string> optionIn(std::string_view text) {
  std::optional<std::string> out;
  for (std::string line : splitList(text, '\n')) {
    std::replace(line.begin(), line.end(), '\t', ' ');  // modprobe.d(5): any blanks
    auto words = splitList(line, ' ');
    if (words.size() < 3 || words[0] != "options" || words[1] != "ib_core") continue;
    for (size_t i = 2; i < words.size(); ++i) {
      if (words[i].starts_with("netns_mode=")) out = words[i].substr(11);
    }
  }
  return out;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> netnsModeAtBoot(
    std::vector<std::pair<std::string, std::string>> files, std::string_view cmdline) {
  std::sort(files.begin(), files.end());
  std::optional<std::pair<std::string, std::string>> out;
  for (const auto& [name, text] : files) {
    if (auto v = optionIn(text)) out = {*v, "/" + std::string(kModprobeDir) + "/" + name};
  }
  for (const auto& word : splitList(cmdline, ' ')) {
    std::string w(trimSpace(word));
    if (w.starts_with("ib_core.netns_mode=")) out = {w.substr(19), "the kernel command line"};
  }
  return out;
}

std::string modprobeContent(std::string_view mode) {
  return std::string(kOwnMarker) +
         "\noptions ib_core netns_mode=" + std::string(valueOf(mode == "exclusive")) + "\n";
}

RdmaModePlan planRdmaMode(const RdmaModeInput& in) {
  RdmaModePlan plan;
  if (in.desired.empty()) {
    std::string_view first =
        in.file ? std::string_view(*in.file).substr(0, in.file->find('\n')) : std::string_view();
    plan.remove = in.file && (first == kOwnMarker || first == kUpstreamMarker);
    return plan;
  }
  std::string content = modprobeContent(in.desired);
  if (in.file != content) plan.write = content;
  std::string wanted(valueOf(in.desired == "exclusive"));
  auto files = in.others;
  files.emplace_back(std::string(kModprobeName), content);
  auto next = netnsModeAtBoot(std::move(files), in.cmdline);
  if (next && next->first != wanted) {
    plan.error = "the node's SriovNetworkPoolConfig asks for " + in.desired +
                 " RDMA namespace mode, but " + next->second +
                 " sets ib_core netns_mode=" + next->first +
                 " at boot; remove that setting (no reboot is asked for meanwhile)";
    return plan;
  }
  if (!in.current.empty() && in.current != in.desired) {
    plan.reboot = std::string(kRebootPrefix) + in.current +
                  " network namespace mode and the node's SriovNetworkPoolConfig asks for " +
                  in.desired + " (ib_core netns_mode=" + wanted + " in /" +
                  std::string(kModprobeDir) + "/" + std::string(kModprobeName) + ", read at boot)";
  }
  return plan;
}

bool isRdmaModeReason(std::string_view reason) { return reason.starts_with(kRebootPrefix); }

}  // namespace sriovdra::host
