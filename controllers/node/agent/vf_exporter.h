#pragma once
// The per-VF metrics of the SR-IOV network operator's metrics exporter
// (sriov-network-metrics-exporter, its vfstats and kubepoddevice collectors), under its names and
// labels, served on the agent's own /metrics (HTTPS, TokenReview + SubjectAccessReview) rather
// than by a DaemonSet of its own:
//   sriov_vf_<stat>{numa_node, pciAddr, pf, vf}   counter per VF of every PF with VFs, from its
//       PF driver's IFLA_VF_STATS (host::Netlink::vfStats): rx_bytes, tx_bytes, rx_packets,
//       tx_packets, rx_dropped, tx_dropped, rx_broadcast, rx_multicast (upstream's netlink
//       reader); `vf` the VF's index, `pciAddr` its address, `numa_node` the PF's ("" for none).
//   sriov_kubepoddevice{container, dev_type, namespace, pciAddr, pod}   1 per VF prepared for a
//       pod (the node's checkpoint): `dev_type` the VF's k8s.cni.cncf.io/resourceName
//       ("openshift.io/cx6_vfs"; "" without a resource prefix), `pod` the pod the claim is
//       reserved for ("" for claims prepared by agents that did not keep its name), `container`
//       always "": a claim is the pod's, not one container's.
// As upstream documents, the two join on pciAddr:
//   sriov_vf_rx_bytes * on (pciAddr) group_left(pod, namespace) sriov_kubepoddevice
// The VFs and PFs are those the node's SriovNodeState status reported last; the counters are
// read from the kernel when scraped, one RTM_GETLINK per PF (the kernel holds its RTNL lock and
// asks the driver for every VF meanwhile), at most every kReuseFor: scrapes in between, and
// scrapes that arrive during a read, get the last read's. A PF the kernel does not answer for
// (renamed or gone since, or with too many VFs to report with counters) is left out, with a
// warning when it starts failing and a line when it answers again; a VF the kernel lists but
// the status does not (yet) is left out too, as is one the status lists but the kernel no longer
// has. The counters are matched to the PF by its netdev name.
// Thread-safety: Collect() may run on several threads at once.
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "api/node_state.h"
#include "dra/checkpoint.h"
#include "host/netlink.h"

namespace sriovdra::node {
class LocalState;
}  // namespace sriovdra::node

namespace sriovdra::agent {

// Pure: the families above from the PFs, each PF's counters by netdev name (absent: not read)
// and the checkpoint. Series in the order of the PFs and their VFs; labels sorted by name.
std::vector<prometheus::MetricFamily> vfFamilies(
    const std::vector<api::InterfaceExt>& pfs,
    const std::map<std::string, std::vector<host::VfStats>>& stats,
    const dra::Checkpoint& checkpoint);

class VfExporter : public prometheus::Collectable {
 public:
  static constexpr std::chrono::seconds kReuseFor{5};

  VfExporter(const node::LocalState& local, std::shared_ptr<const host::Netlink> netlink)
      : local_(local), netlink_(std::move(netlink)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  // The counters of `pfs`, read again when the last read is kReuseFor old. mu_ held.
  void refresh(const std::vector<api::InterfaceExt>& pfs) const;

  const node::LocalState& local_;
  std::shared_ptr<const host::Netlink> netlink_;
  mutable std::mutex mu_;  // held across a read: one read at a time, the others wait for it
  mutable std::optional<std::chrono::steady_clock::time_point> read_at_;  // guarded by mu_
  mutable std::map<std::string, std::vector<host::VfStats>> stats_;       // guarded by mu_
  mutable std::set<std::string> failing_;  // guarded by mu_: PFs whose last read failed
};

}  // namespace sriovdra::agent
