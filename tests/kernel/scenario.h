#pragma once
// The host actions of the real-kernel test, run on a kernel given as its Sysfs and Netlink: in
// the VM on Linux itself (kernel_probe, against / and the guest's netlink) and in the test on the
// simulated kernel over the fixture that mirrors the guest, so that both reports can be compared
// step by step. Each step is what the agent does (lib/host's discovery, plan and apply), or a
// write the kernel must refuse; after it, the PF's state as discovery reads it.
//
// State lines leave out what differs between any two machines by design: MAC addresses, IOMMU
// group numbers, netdev names of VFs (the kernel names them ethN, udev renames them; the
// simulation names them after the PF), and the VFs' netdev existence is kept as "netdev" or
// "no netdev" (with what discovery makes of a VF whose netdev is elsewhere: "assigned=netns").
#include <functional>
#include <string>
#include <vector>

#include "host/netlink.h"
#include "host/sysfs.h"

namespace sriovdra::kernel_test {

struct Step {
  std::string name;                // "set sriov_numvfs 4", ...
  std::string result;              // "ok", or the errno's name ("EBUSY")
  std::vector<std::string> state;  // after the step
};

// A step's result: "ok", the errno's name ("EBUSY"), or the status code's name.
std::string resultOf(const Status& st);

// Moves a netdev into a pod's network namespace (`to_pod`) or back, as a CNI plugin does: in the
// VM through rtnetlink into a namespace of its own, in the test through the simulated kernel.
using NetdevMover = std::function<Status(const std::string& netdev, bool to_pod)>;

// Runs the scenario on the first SR-IOV PF discovery finds (an empty report, with one step
// naming the problem, when there is none).
std::vector<Step> runScenario(host::Sysfs& sysfs, host::Netlink& netlink,
                              const NetdevMover& move_netdev);

// What the agent publishes for every VF (dra::buildSlices over discovery), one line each, with
// the VF's own place as sysfs shows it:
// "<device> pcieRoot=<root> numaNode=<n> (sysfs: <root> numa_node <n>)".
std::vector<std::string> placements(const host::Sysfs& sysfs, const host::Netlink& netlink);

// The lines around the report on the guest's serial console.
inline constexpr const char* kReportBegin = "--- sriov-dra kernel report ---";
inline constexpr const char* kReportEnd = "--- end of sriov-dra kernel report ---";

// What the probe prints: the scenario's steps, the placements, the CNI plugin's steps
// (cni_scenario.h) and the RDMA subsystem's (rdma_scenario.h).
struct Report {
  std::vector<Step> steps;
  std::vector<std::string> placements;
  std::vector<Step> cni_steps;
  std::vector<Step> rdma_steps;
};

// The report as one JSON object {"steps":[{"name","result","state"}], "placements":[...],
// "cniSteps":[...], "rdmaSteps":[...]}, and back (an error naming the field when it is not that
// shape).
std::string encodeReport(const Report& report);
Result<Report> decodeReport(std::string_view json_text);

}  // namespace sriovdra::kernel_test
