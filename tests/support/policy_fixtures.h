#pragma once
// Builders for policy tests: the reference A100 node (8 ConnectX-6 InfiniBand PFs with one VF
// each, as on the reference cluster) and fluent policy builders.
#include <string>
#include <vector>

#include "api/node_state.h"
#include "api/objects.h"
#include "api/policies.h"

namespace sriovdra::testing::fixture {

struct ReferencePf {
  std::string name;
  std::string pci;
  std::string root;
  int numa;
};
// ibp14s0 0000:0e:00.0 ... ibp202s0 0000:ca:00.0, with their PCIe roots and NUMA nodes.
const std::vector<ReferencePf>& referencePfs();

// Discovered status of an A100 reference node with `vfs_per_pf` VFs on each PF.
api::SriovNodeStateStatus a100Status(int vfs_per_pf = 1);
// An Intel E810 Ethernet node: PFs ens1f0/ens1f1 (8086:1593, VF 1889, iavf).
api::SriovNodeStateStatus e810Status(int vfs_per_pf = 4);

// A synthetic Ethernet node: `pfs` ConnectX PFs ens0.. (15b3:101d, VF 101e) with `vfs_per_pf`
// VFs each, at 0000:10:00.0, 0000:11:00.0, ... (benchmarks).
api::SriovNodeStateStatus ethernetStatus(int pfs, int vfs_per_pf);

api::Node node(const std::string& name, std::map<std::string, std::string> labels = {});

class NodePolicy {
 public:
  explicit NodePolicy(std::string name);
  NodePolicy& priority(int64_t p);
  NodePolicy& resource(std::string r);
  NodePolicy& numVfs(int64_t n);
  NodePolicy& mtu(int64_t m);
  NodePolicy& pf(std::string entry);
  NodePolicy& vendor(std::string v);
  NodePolicy& deviceId(std::string d);
  NodePolicy& rootDevice(std::string pci);
  NodePolicy& linkType(std::string t);
  NodePolicy& deviceType(std::string t);
  NodePolicy& nodeSelector(std::map<std::string, std::string> s);
  NodePolicy& rdma(bool on);
  operator const api::SriovNetworkNodePolicy&() const { return p_; }  // NOLINT
  const api::SriovNetworkNodePolicy& get() const { return p_; }

 private:
  api::SriovNetworkNodePolicy p_;
};

class ResourcePolicy {
 public:
  explicit ResourcePolicy(std::string name);
  // Adds a config; filters empty = every VF; attrs_selector unset = no DeviceAttributes.
  ResourcePolicy& config(std::vector<api::ResourceFilter> filters,
                         std::optional<std::map<std::string, std::string>> attrs_selector = {});
  ResourcePolicy& nodeSelector(api::NodeSelector s);
  operator const api::SriovResourcePolicy&() const { return p_; }  // NOLINT
  const api::SriovResourcePolicy& get() const { return p_; }

 private:
  api::SriovResourcePolicy p_;
};

api::DeviceAttributes deviceAttributes(const std::string& name,
                                       std::map<std::string, std::string> labels,
                                       api::Attributes attributes);

}  // namespace sriovdra::testing::fixture
