// Our allocator against the real one: on generated clusters (random PCIe shapes, random GPU and
// VF occupancy, some nodes' GPUs partitionable into MIG devices that share counters, shared links
// whose bandwidth claims take in shares) and generated claims (whole GPUs or MIG partitions, a
// share of a link's bandwidth, matchAttribute on pcieRoot or numaNode, 1-4 devices or
// allocationMode All, a prioritized list (firstAvailable) under a constraint, CEL selectors on
// our attributes, one of them failing on the VFs that lack its attribute, VFs with a NoSchedule
// taint that half of the claims tolerate, published in the slice or added by a DeviceTaintRule,
// some nodes' GPUs tainted by a rule for their pool; admin access, in a namespace labelled for it
// or refused in one that is not; or instead of a claim a pod whose containers ask for GPUs and VFs
// as extended resources, which kube-scheduler turns into a claim), `sriov-dra explain` and
// kube-scheduler must agree, node by node, on whether the claim fits and on whether the scheduler
// meets an error there (and explain must refuse what the API server refuses). The seeds that
// exercise each feature are counted in the output.
// Seeded and reproducible: SRIOV_DRA_DIFF_SEED picks the first seed, SRIOV_DRA_DIFF_CASES how
// many; a disagreement prints the seed, the shape and both answers.
//
// Per case: kubelet-less nodes with VF slices built by the agent's own dra::buildSlices and GPU
// slices shaped like the NVIDIA driver's (partitionable ones as its dynamic MIG publishes them,
// support/mig_gpus.h: a slice of counter sets, and per GPU a slice of the GPU whole and its MIG
// placements); occupancy by pods the scheduler itself places (one per
// taken device, selected by an attribute only it has); a marker slice and pod published last, so
// that once the marker pod is bound the scheduler has seen every node and slice of the case (one
// watch stream per kind delivers in order); likewise a marker DeviceTaintRule after the case's
// rules, seen once a pod asking for a device only it taints stays Unschedulable; then explain, then
// one probe pod per node pinned to it.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "api/names.h"
#include "cli/commands.h"
#include "dra/in_use.h"
#include "dra/slices.h"
#include "e2e/workloads.h"
#include "support/dra_objects.h"
#include "support/eventually.h"
#include "support/fixtures.h"
#include "support/mig_gpus.h"
#include "support/operator_env.h"
#include "support/temp_dir.h"

using namespace sriovdra;
using namespace std::chrono_literals;

namespace {

const std::string kVfDriver(api::kDriverName);
constexpr const char* kMarkerDriver = "marker.sriov-dra.test";
constexpr const char* kMigClass = "mig.nvidia.com";
// Links that many claims share, each taking bandwidth (consumable capacity): 100G per link, a
// share is 10G (the default) to 60G in steps of 10G.
constexpr const char* kLinkDriver = "link.sriov-dra.test";

int envInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? static_cast<int>(std::strtol(v, nullptr, 10)) : fallback;
}

std::string hex2(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02x", v & 0xffu);
  return buf;
}

struct GeneratedNode {
  std::string name;
  std::vector<api::InterfaceExt> pfs;
  std::vector<api::Gpu> gpus;
  std::set<std::string> tainted;       // VFs published with a NoSchedule taint
  std::set<std::string> rule_tainted;  // VFs a DeviceTaintRule taints (NoSchedule)
  bool gpus_tainted = false;           // a DeviceTaintRule taints the node's GPU pool
  bool partitioned = false;            // GPUs published as partitionable devices
  int links = 0;                       // shared links (kLinkDriver)
};

// A device another pod holds: the one of the class whose attribute has this value.
struct Taken {
  std::string node;
  std::string klass;
  std::string attribute;  // fully qualified
  std::string value;
  std::string bandwidth = {};  // a share of a link: its capacity request
};

// What a share of a link takes for a request: the policy's min (10G) or the next 10G step.
int linkShare(int gbps) { return gbps <= 10 ? 10 : (gbps + 9) / 10 * 10; }

struct Case {
  uint32_t seed = 0;
  std::vector<GeneratedNode> nodes;
  std::vector<Taken> taken;
  std::string claim_spec;  // YAML of the claim's spec, indented for "spec:"
  // Or a pod without claims whose containers (JSON) ask for extended resources.
  std::string containers;
  bool admin = false;            // the claim's first request asks for admin access
  bool admin_namespace = false;  // in a namespace labelled for it
  std::string description;
};

// The implicit extended resource of our DeviceClass.
const std::string kVfResource = "deviceclass.resource.kubernetes.io/" + kVfDriver;

// Pod containers asking for 0-2 GPUs (nvidia.com/gpu, which the GPU class backs) and 0-2 VFs
// (our class's implicit name), at least one device in all.
std::string extendedContainers(const std::function<int(uint32_t)>& pick) {
  int gpus = pick(3), vfs = pick(3);
  if (gpus + vfs == 0) vfs = 1;
  auto container = [](const std::string& name, const std::string& resource, int n) {
    std::string limits =
        n == 0 ? "" : R"("limits":{")" + resource + R"(":")" + std::to_string(n) + "\"}";
    return R"({"name":")" + name + R"(","image":"registry.k8s.io/pause:3.10","resources":{)" +
           limits + "}}";
  };
  return "[" + container("app", "nvidia.com/gpu", gpus) + "," + container("nic", kVfResource, vfs) +
         "]";
}

// A cluster shape and a claim from the seed; the same seed gives the same case.
Case generate(uint32_t seed, const std::string& prefix) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<int>(rng() % n); };
  Case c;
  c.seed = seed;
  std::ostringstream shape;
  int node_count = 1 + pick(3);
  for (int n = 0; n < node_count; ++n) {
    GeneratedNode node{prefix + "-n" + std::to_string(n), {}, {}, {}, {}, false, false, 0};
    shape << node.name << ":";
    int roots = 1 + pick(4);
    for (int r = 0; r < roots; ++r) {
      std::string root = "pci0000:" + hex2(0x10u * static_cast<unsigned>(r + 1));
      int numa = r / 2;
      int gpus = pick(3), pfs = pick(3);
      shape << " " << root << "(numa " << numa << ", " << gpus << " GPU";
      for (int g = 0; g < gpus; ++g) {
        api::Gpu gpu;
        gpu.pci_address =
            "0000:" + hex2(0x10u * static_cast<unsigned>(r + 1) + 0x0cu + g) + ":00.0";
        gpu.pcie_root = root;
        node.gpus.push_back(gpu);
      }
      for (int k = 0; k < pfs; ++k) {
        api::InterfaceExt pf;
        unsigned bus = 0x10u * static_cast<unsigned>(r + 1) + 4u * static_cast<unsigned>(k) + 2u;
        pf.name = "p" + std::to_string(r) + std::to_string(k);
        pf.pci_address = "0000:" + hex2(bus) + ":00.0";
        pf.vendor = "15b3";
        pf.device_id = "101b";
        pf.link_type = pick(2) == 0 ? "IB" : "ETH";
        pf.pcie_root = root;
        pf.numa_node = numa;
        bool rdma = pick(2) == 0;
        int vfs = 1 + pick(3);
        shape << ", PF " << pf.name << " " << vfs << " VF" << (rdma ? " rdma" : "");
        for (int v = 0; v < vfs; ++v) {
          api::VirtualFunction vf;
          vf.pci_address = "0000:" + hex2(bus) + ":00." + std::to_string(v + 1);
          vf.vf_id = v;
          vf.device_id = "101c";
          if (rdma) vf.rdma_device = "mlx5_" + std::to_string(v);
          if (pick(6) == 0) {
            bool by_rule = pick(2) == 0;
            (by_rule ? node.rule_tainted : node.tainted).insert(vf.pci_address);
            shape << ", " << vf.pci_address << (by_rule ? " tainted by a rule" : " tainted");
          }
          pf.vfs.push_back(vf);
        }
        node.pfs.push_back(pf);
      }
      shape << ")";
    }
    node.gpus_tainted = !node.gpus.empty() && pick(8) == 0;
    node.partitioned = !node.gpus.empty() && pick(2) == 0;
    node.links = pick(3);
    shape << (node.gpus_tainted ? ", GPUs tainted by a rule" : "")
          << (node.partitioned ? ", GPUs partitionable (MIG)" : "") << ", " << node.links
          << " link(s)\n";
    // Shares of the links other pods hold: 0-2 per link, what fits its 100G.
    for (int l = 0; l < node.links; ++l) {
      int used = 0;
      for (int k = pick(4); k > 0; --k) {
        int gbps = 5 + 10 * pick(6);
        if (used + linkShare(gbps) > 100) continue;
        used += linkShare(gbps);
        c.taken.push_back({node.name, kLinkDriver, std::string(kLinkDriver) + "/uuid",
                           node.name + "-link-" + std::to_string(l), std::to_string(gbps) + "G"});
      }
    }
    // About a third of the devices are taken by other pods (a sixth of the MIG placements that
    // are still free).
    const std::string pci_bus_id = "resource.kubernetes.io/pciBusID";
    const std::string uuid = std::string(testing::kGpuDriver) + "/uuid";
    for (size_t g = 0; g < node.gpus.size(); ++g) {
      // Of the GPU's 8 memory slices, those taken: MIG placements that do not overlap fit the
      // GPU's other counters too.
      std::vector<bool> used(8, false);
      if (pick(3) == 0) {
        c.taken.push_back({node.name, testing::kGpuDriver, pci_bus_id, node.gpus[g].pci_address});
        used.assign(8, true);
      }
      for (const auto& p :
           node.partitioned ? testing::a100MigProfiles() : std::vector<testing::MigProfile>{}) {
        for (int start : p.placements) {
          auto first = used.begin() + start, last = first + p.memory_slices;
          if (pick(6) != 0 || std::find(first, last, true) != last) continue;
          std::fill(first, last, true);
          c.taken.push_back(
              {node.name, kMigClass, uuid, node.name + "-" + testing::migDeviceName(g, p, start)});
        }
      }
    }
    for (const auto& pf : node.pfs) {
      for (const auto& vf : pf.vfs) {
        if (pick(3) == 0) c.taken.push_back({node.name, kVfDriver, pci_bus_id, vf.pci_address});
      }
    }
    c.nodes.push_back(std::move(node));
  }
  for (const auto& t : c.taken) {
    shape << "taken: " << t.node << " " << t.value
          << (t.bandwidth.empty() ? "" : " (a share of " + t.bandwidth + ")") << "\n";
  }

  const std::vector<std::string> vf_selectors = {
      "",
      R"(device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].rdmaCapable == true)",
      R"(device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].vfID < 1)",
      R"(device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].PFName in ["p00", "p11", "p21"])",
      R"(device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].linkType == "infiniband")",
      R"(device.attributes["dra.net"].numaNode == 1)",
      R"(device.attributes["resource.kubernetes.io"].pcieRoot != "pci0000:10")",
      // Only the VFs of InfiniBand PFs carry "tier": fails where the search reaches another VF.
      R"(device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].tier == "fast")",
  };
  // Half of the claims tolerate the VFs' taint.
  const std::string toleration =
      pick(2) == 0 ? "        tolerations: [{key: example.com/maintenance, operator: Exists}]\n"
                   : "";
  // count 0: allocationMode All.
  auto request = [&](const std::string& name, const std::string& klass, int count,
                     const std::string& selector) {
    std::string out = "    - name: " + name +
                      "\n      exactly:\n        deviceClassName: " + klass +
                      (count == 0 ? std::string("\n        allocationMode: All\n")
                                  : "\n        count: " + std::to_string(count) + "\n");
    if (!selector.empty()) out += "        selectors: [{cel: {expression: '" + selector + "'}}]\n";
    if (klass == kVfDriver) out += toleration;
    return out;
  };
  const std::string& selector = vf_selectors[static_cast<size_t>(pick(8))];
  if (pick(3) == 0) {
    // VFs only, on one NUMA node: 1-4 of them, or all that match.
    int count = pick(5);
    c.claim_spec = "  devices:\n    requests:\n" + request("vf", kVfDriver, count, selector) +
                   "    constraints: [{requests: [vf], matchAttribute: dra.net/numaNode}]\n";
  } else {
    // GPUs and VFs under one PCIe root; the VFs sometimes as a prioritized list: two that match
    // the selector if a root has them, else one of any kind.
    std::string vfs =
        "    - name: vf\n      firstAvailable:\n      - name: two\n"
        "        deviceClassName: " +
        kVfDriver + "\n        count: 2\n";
    if (!selector.empty()) vfs += "        selectors: [{cel: {expression: '" + selector + "'}}]\n";
    vfs += toleration + "      - name: one\n        deviceClassName: " + kVfDriver +
           "\n        count: 1\n" + toleration;
    if (pick(3) != 0) vfs = request("vf", kVfDriver, 1 + pick(2), selector);
    // Half of them ask for MIG partitions instead of whole GPUs: 1-2, or all (of a profile).
    std::string gpus = request("gpu", testing::kGpuDriver, 1 + pick(2), "");
    if (pick(2) == 0) {
      int count = pick(4) == 0 ? 0 : 1 + pick(2);
      gpus =
          request("gpu", kMigClass, count,
                  pick(2) == 0 ? R"(device.attributes["gpu.nvidia.com"].profile == "1g.5gb")" : "");
    }
    c.claim_spec = "  devices:\n    requests:\n" + gpus + vfs +
                   "    constraints: [{requests: [gpu, vf], matchAttribute: "
                   "resource.kubernetes.io/pcieRoot}]\n";
  }
  // Shares of links: 1-2 links of 5G to 85G (past the largest share), or no amount (the default
  // share). A third of the claims above add one; a quarter of all claims are only link shares,
  // one or two requests (which may share one link).
  auto link = [&](const std::string& name) {
    int gbps = 5 + 10 * pick(10);  // 95: no amount
    std::string out = "    - name: " + name +
                      "\n      exactly:\n        deviceClassName: " + std::string(kLinkDriver) +
                      "\n        count: " + std::to_string(1 + pick(2)) + "\n";
    if (gbps < 95) {
      out += "        capacity: {requests: {bandwidth: " + std::to_string(gbps) + "G}}\n";
    }
    return out;
  };
  if (pick(4) == 0) {
    c.claim_spec =
        "  devices:\n    requests:\n" + link("link") + (pick(2) == 0 ? link("more") : "");
  } else if (pick(3) == 0) {
    c.claim_spec.insert(c.claim_spec.find("    constraints:"), link("link"));
  }
  // A sixth ask for admin access on their first request, in a namespace labelled for it or not;
  // a sixth of the others are pods asking for extended resources instead of a claim.
  if (pick(6) == 0) {
    c.admin = true;
    c.admin_namespace = pick(2) == 0;
    const std::string exactly = "      exactly:\n";
    c.claim_spec.insert(c.claim_spec.find(exactly) + exactly.size(), "        adminAccess: true\n");
  } else if (pick(6) == 0) {
    c.containers = extendedContainers(pick);
    c.claim_spec.clear();
  }
  c.description = "seed " + std::to_string(seed) + "\n" + shape.str() +
                  (c.containers.empty() ? "claim spec:\n" + c.claim_spec
                                        : "pod containers: " + c.containers + "\n") +
                  (!c.admin            ? ""
                   : c.admin_namespace ? "in a namespace labelled for admin access\n"
                                       : "in a namespace not labelled for admin access\n");
  return c;
}

void check(const Result<json::Document>& r, const std::string& what) {
  if (!r.ok()) throw std::runtime_error(what + ": " + r.status().toString());
}

json::Document parse(const std::string& text) {
  auto doc = json::parse(text);
  if (!doc.ok()) throw std::logic_error(doc.status().toString());
  return std::move(*doc);
}

// The classes every case uses: the GPU driver's (whole GPUs, and MIG partitions), ours (every VF
// of our driver) and the marker's.
void createClasses(kube::Client& admin) {
  testing::createGpuDeviceClass(admin);
  auto mig = admin.create(
      api::resources::kDeviceClasses, "",
      parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":")" +
            std::string(kMigClass) +
            R"("},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' )"
            R"(&& device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}})"));
  if (!mig.ok() && mig.status().code() != Code::kAlreadyExists) {
    throw std::runtime_error(mig.status().toString());
  }
  for (const std::string& driver :
       {kVfDriver, std::string(kMarkerDriver), std::string(kLinkDriver)}) {
    std::string text =
        R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":")";
    text.append(driver).append(
        R"("},"spec":{"selectors":[{"cel":{"expression":"device.driver == ')");
    text.append(driver).append(R"('"}}]}})");
    auto created = admin.create(api::resources::kDeviceClasses, "", parse(text));
    if (!created.ok() && created.status().code() != Code::kAlreadyExists) {
      throw std::runtime_error(created.status().toString());
    }
  }
}

void create(kube::Client& admin, const std::string& name, const api::ResourceSliceSpec& spec) {
  auto doc = kube::newObject(api::resources::kResourceSlices, "", name);
  spec.encode(api::Writer(doc, doc.GetAllocator()).object("spec"));
  check(admin.create(api::resources::kResourceSlices, "", doc), "slice " + name);
}

void publishSlices(kube::Client& admin, const GeneratedNode& node) {
  std::vector<api::Device> devices;
  for (const auto& pf : node.pfs) {
    for (const auto& vf : pf.vfs) {
      api::Device d{api::deviceName(vf.pci_address),
                    vf.pci_address,
                    {{std::string(api::attr::kResourceName),
                      api::AttributeValue::ofString(pf.link_type == "IB" ? "cx6_vfs" : "eth")}}};
      if (pf.link_type == "IB")
        d.attributes[kVfDriver + "/tier"] = api::AttributeValue::ofString("fast");
      devices.push_back(std::move(d));
    }
  }
  auto set = dra::buildSlices(node.name, devices, node.pfs, {});
  REQUIRE(set.refused.empty());
  for (auto& s : set.slices) {
    for (auto& d : s.spec.devices) {
      if (node.tainted.count(dra::pciAddressOfDevice(d.name)) != 0) {
        d.taints.push_back({"example.com/maintenance", "", "NoSchedule"});
      }
    }
    create(admin, s.name, s.spec);
  }
  if (node.links > 0) {
    api::ResourceSliceSpec links;
    links.driver = kLinkDriver;
    links.node_name = node.name;
    links.pool = {node.name, 1, 1};
    for (int l = 0; l < node.links; ++l) {
      std::string name = "link-" + std::to_string(l);
      api::SliceDevice d{name, {}, {{"bandwidth", "100G"}}};
      d.attributes["uuid"] = api::AttributeValue::ofString(node.name + "-" + name);
      d.allow_multiple_allocations = true;
      d.request_policies["bandwidth"] = {"10G", {}, "10G", "60G", "10G"};
      links.devices.push_back(std::move(d));
    }
    create(admin, "00000-link-" + node.name, links);
  }
  if (node.partitioned) {
    for (const auto& [name, spec] : testing::migGpuSlices(node.name, node.gpus, "00000-")) {
      create(admin, name, spec);
    }
  } else if (!node.gpus.empty()) {
    testing::publishGpuSlice(admin, node.name, node.gpus);
  }
}

// A DeviceTaintRule with a NoSchedule taint; `device` "" selects the whole pool.
void createRule(kube::Client& admin, const std::string& name, const std::string& driver,
                const std::string& pool, const std::string& device) {
  std::string text =
      R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceTaintRule","metadata":{"name":")";
  text.append(name).append(R"("},"spec":{"deviceSelector":{"driver":")").append(driver);
  text.append(R"(","pool":")").append(pool).append("\"");
  if (!device.empty()) text.append(R"(,"device":")").append(device).append("\"");
  text.append(R"(},"taint":{"key":"example.com/maintenance","effect":"NoSchedule"}}})");
  check(admin.create(api::resources::kDeviceTaintRules, "", parse(text)), "rule " + name);
}

// The case's DeviceTaintRules; returns their names.
std::vector<std::string> createRules(kube::Client& admin, const GeneratedNode& node) {
  std::vector<std::string> names;
  for (const auto& bdf : node.rule_tainted) {
    names.push_back(node.name + "-" + api::deviceName(bdf));
    createRule(admin, names.back(), kVfDriver, node.name, api::deviceName(bdf));
  }
  if (node.gpus_tainted) {
    names.push_back(node.name + "-gpus");
    createRule(admin, names.back(), testing::kGpuDriver, node.name, "");
  }
  return names;
}

// A claim for the one device taken (tainted or not).
std::string claimFor(const Taken& t) {
  auto slash = t.attribute.find('/');
  return "  devices:\n    requests:\n    - name: d\n      exactly:\n        deviceClassName: " +
         t.klass + "\n        selectors: [{cel: {expression: 'device.attributes[\"" +
         t.attribute.substr(0, slash) + "\"]." + t.attribute.substr(slash + 1) + " == \"" +
         t.value + "\"'}}]\n        tolerations: [{operator: Exists}]\n" +
         (t.bandwidth.empty() ? ""
                              : "        capacity: {requests: {bandwidth: " + t.bandwidth + "}}\n");
}

// The marker node's one slice: device "slices" (for the slice marker) and "t0".. (for the tries
// of the rule marker), each with its name as attribute "role".
constexpr int kMarkerTries = 8;

void publishMarkerSlice(kube::Client& admin, const std::string& marker) {
  api::ResourceSliceSpec spec;
  spec.driver = kMarkerDriver;
  spec.node_name = marker;
  spec.pool = {marker, 0, 1};
  for (int k = -1; k < kMarkerTries; ++k) {
    std::string role = k < 0 ? "slices" : "t" + std::to_string(k);
    spec.devices.push_back({role, {{"role", api::AttributeValue::ofString(role)}}, {}, {}});
  }
  auto doc = kube::newObject(api::resources::kResourceSlices, "", marker);
  spec.encode(api::Writer(doc, doc.GetAllocator()).object("spec"));
  check(admin.create(api::resources::kResourceSlices, "", doc), "marker slice");
}

// A claim for the marker device with this role; `tolerant`: it tolerates the marker rule.
std::string markerClaim(const std::string& role, bool tolerant) {
  return "  devices:\n    requests:\n    - name: m\n      exactly:\n        deviceClassName: " +
         std::string(kMarkerDriver) +
         "\n        selectors: [{cel: {expression: 'device.attributes[\"" + kMarkerDriver +
         "\"].role == \"" + role + "\"'}}]\n" +
         (tolerant ? "        tolerations: [{operator: Exists}]\n" : "");
}

struct Explained {
  std::map<std::string, std::string> fits;  // per node: "fits", "does not fit" or "error"
  std::string refused;                      // or why explain refused the claim
};

// explain of the case's claim, or of its pod's extended resources.
Explained explain(const std::string& kubeconfig, const std::string& ns, const Case& c,
                  const std::string& dir) {
  std::string path = dir + "/probe.yaml";
  if (c.containers.empty()) {
    std::ofstream(path) << "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: "
                           "{name: probe, namespace: "
                        << ns << "}\nspec:\n"
                        << c.claim_spec;
  } else {
    std::ofstream(path) << "apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: " << ns
                        << "}\nspec: {containers: " << c.containers << "}\n";
  }
  cli::ExplainArgs args;
  args.kubeconfig = kubeconfig;
  args.output = "json";
  args.file = path;
  std::istringstream in;
  std::ostringstream out, err;
  int rc = cli::runExplain(args, cli::Streams{in, out, err});
  Explained got;
  if (rc == 2) {
    got.refused = err.str();
    return got;
  }
  auto doc = json::parse(out.str());
  if (!doc.ok()) throw std::runtime_error("explain: " + err.str());
  for (const auto& n : (*doc)["nodeResults"].GetArray()) {
    bool error = n.HasMember("error") && n["error"].GetStringLength() > 0;
    got.fits[n["node"].GetString()] = error                 ? "error"
                                      : n["fits"].GetBool() ? "fits"
                                                            : "does not fit";
  }
  return got;
}

// What the cases exercise: how many seeds use each allocation feature.
struct Features {
  int partitionable = 0, capacity = 0, taints = 0, prioritized = 0, admin = 0, admin_refused = 0,
      extended = 0;
  void count(const Case& c) {
    bool partitioned = std::any_of(c.nodes.begin(), c.nodes.end(),
                                   [](const GeneratedNode& n) { return n.partitioned; });
    bool tainted = std::any_of(c.nodes.begin(), c.nodes.end(), [](const GeneratedNode& n) {
      return !n.tainted.empty() || !n.rule_tainted.empty() || n.gpus_tainted;
    });
    partitionable += partitioned && c.claim_spec.find(kMigClass) != std::string::npos ? 1 : 0;
    capacity += c.claim_spec.find(kLinkDriver) != std::string::npos ? 1 : 0;
    taints += tainted ? 1 : 0;
    prioritized += c.claim_spec.find("firstAvailable") != std::string::npos ? 1 : 0;
    admin += c.admin && c.admin_namespace ? 1 : 0;
    admin_refused += c.admin && !c.admin_namespace ? 1 : 0;
    extended += c.containers.empty() ? 0 : 1;
  }
};

const std::string kAdminRefusal =
    "admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on "
    "the containing namespace";

}  // namespace

TEST_CASE("sriov-dra explain and kube-scheduler agree on where generated claims fit", "[e2e]") {
  auto& cp = testing::schedulingControlPlane();
  auto admin = cp.client();
  createClasses(*admin);
  testing::TempDir dir;
  const int first = envInt("SRIOV_DRA_DIFF_SEED", 1);
  const int cases = envInt("SRIOV_DRA_DIFF_CASES", 100);
  std::printf("differential: seeds %d to %d\n", first, first + cases - 1);
  int fitting = 0, pending = 0, failing = 0, rule_count = 0;
  Features features;
  for (int i = 0; i < cases; ++i) {
    auto seed = static_cast<uint32_t>(first + i);
    std::string ns = cp.newNamespace("diff");
    Case c = generate(seed, ns);
    INFO(c.description);
    features.count(c);
    if (c.admin_namespace) {
      check(
          admin->patch(kube::resources::kNamespaces, "", ns, kube::PatchType::kMerge,
                       R"({"metadata":{"labels":{"resource.kubernetes.io/admin-access":"true"}}})"),
          "namespace " + ns);
    }
    std::vector<std::string> rules;
    for (const auto& node : c.nodes) {
      cp.createNode(node.name, {});
      publishSlices(*admin, node);
      for (auto& r : createRules(*admin, node)) rules.push_back(std::move(r));
    }
    // Occupancy, placed by the scheduler itself so that it knows of every allocation.
    int t = 0;
    for (const auto& taken : c.taken) {
      testing::Workloads on(cp, ns, {{"kubernetes.io/hostname", taken.node}});
      std::string name = "taken-" + std::to_string(t++);
      on.claim(name, claimFor(taken));
      on.podWithClaim(name, name);
      on.waitScheduled(name);
    }
    rule_count += static_cast<int>(rules.size());
    // The markers, last: once the marker pod is bound, the scheduler has seen every node and
    // slice above; once a pod for a device only the marker rule taints stays Unschedulable, every
    // rule above. Each try asks for a device no earlier try took.
    std::string marker = ns + "-marker";
    cp.createNode(marker, {});
    publishMarkerSlice(*admin, marker);
    createRule(*admin, marker, kMarkerDriver, marker, "");
    rules.push_back(marker);
    testing::Workloads at_marker(cp, ns, {{"kubernetes.io/hostname", marker}});
    at_marker.claim("marker", markerClaim("slices", true));
    at_marker.podWithClaim("marker", "marker");
    at_marker.waitScheduled("marker");
    bool rules_seen = false;
    for (int k = 0; k < kMarkerTries && !rules_seen; ++k) {
      std::string name = "marker-rule-" + std::to_string(k);
      at_marker.claim(name, markerClaim("t" + std::to_string(k), false));
      at_marker.podWithClaim(name, name);
      rules_seen = at_marker.waitOutcome(name).node.empty();
    }
    INFO("kube-scheduler bound " << kMarkerTries << " pods before it saw the marker rule");
    REQUIRE(rules_seen);

    auto explained = explain(cp.kubeconfig(), ns, c, dir.path());
    if (c.admin && !c.admin_namespace) {
      // The API server refuses the claim; explain refuses it with the same words.
      INFO("explain: " << explained.refused);
      CHECK(explained.refused.find(kAdminRefusal) != std::string::npos);
      testing::Workloads on(cp, ns, {});
      std::string refused;
      try {
        on.claim("probe", c.claim_spec);
      } catch (const std::runtime_error& e) {
        refused = e.what();
      }
      INFO("kube-apiserver: " << refused);
      CHECK(refused.find(kAdminRefusal) != std::string::npos);
    }
    REQUIRE(((c.admin && !c.admin_namespace) || explained.refused.empty()));
    const std::vector<GeneratedNode> none;
    const auto& probed = explained.refused.empty() ? c.nodes : none;
    auto& ours = explained.fits;
    std::map<std::string, std::string> theirs;
    std::map<std::string, std::string> why;
    for (const auto& node : probed) {
      testing::Workloads on(cp, ns, {{"kubernetes.io/hostname", node.name}});
      std::string probe = "probe-" + node.name.substr(node.name.rfind('-') + 1);
      if (!c.containers.empty()) {
        on.podWithContainers(probe, c.containers);
        continue;
      }
      on.claim(probe, c.claim_spec);
      on.podWithClaim(probe, probe);
    }
    for (const auto& node : probed) {
      testing::Workloads on(cp, ns, {{"kubernetes.io/hostname", node.name}});
      auto outcome = on.waitOutcome("probe-" + node.name.substr(node.name.rfind('-') + 1));
      theirs[node.name] = !outcome.node.empty()    ? "fits"
                          : !outcome.error.empty() ? "error"
                                                   : "does not fit";
      why[node.name] = outcome.error.empty() ? outcome.unschedulable_message : outcome.error;
    }
    for (const auto& node : probed) {
      INFO("node " << node.name << ": explain says " << ours[node.name] << ", kube-scheduler "
                   << theirs[node.name] << (why[node.name].empty() ? "" : ": " + why[node.name]));
      CHECK(ours[node.name] == theirs[node.name]);
      (theirs[node.name] == "fits"    ? fitting
       : theirs[node.name] == "error" ? failing
                                      : pending) += 1;
    }
    // Free the scheduler of this case's pending pods and rules before the next one.
    Status removed = admin->remove(kube::resources::kNamespaces, "", ns);
    REQUIRE(removed.isOk());
    for (const auto& r : rules)
      REQUIRE(admin->remove(api::resources::kDeviceTaintRules, "", r).isOk());
  }
  // Every answer occurs, or the comparison proves little.
  std::printf("differential: %d fit, %d pending, %d scheduler errors; %d DeviceTaintRules\n",
              fitting, pending, failing, rule_count);
  std::printf(
      "differential: seeds with partitionable GPUs asked for partitions %d, consumable capacity "
      "%d, device taints %d, a prioritized list %d, admin access %d (and %d refused in a "
      "namespace without the label), extended resources %d\n",
      features.partitionable, features.capacity, features.taints, features.prioritized,
      features.admin, features.admin_refused, features.extended);
  if (cases >= 50) {
    CHECK(features.partitionable > 0);
    CHECK(features.capacity > 0);
    CHECK(features.admin > 0);
    CHECK(features.admin_refused > 0);
    CHECK(features.extended > 0);
  }
  CHECK(rule_count > 0);
  CHECK(fitting > 0);
  CHECK(pending > 0);
  CHECK(failing > 0);
}
