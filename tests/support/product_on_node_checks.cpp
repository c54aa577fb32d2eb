// ProductOnNode's fault points and its end-state check (product_on_node.h): what the node holds,
// read from the host, against what the API server says runs there.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "api/names.h"
#include "api/resource.h"
#include "base/files.h"
#include "base/json.h"
#include "base/strings.h"
#include "dra/attach.h"
#include "dra/cdi.h"
#include "dra/checkpoint.h"
#include "host/simulated_kernel.h"
#include "kube/resource.h"
#include "support/poll.h"
#include "support/product_on_node.h"

namespace sriovdra::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string faultPath(const std::string& point) {
  return ProductOnNode::fixtureRoot() + "/faults/" + point;
}

// 0000-11-00-1, the device name in our slices, is the VF 0000:11:00.1.
std::string pciOfDevice(std::string device) {
  if (device.size() != 12) return device;
  device[4] = device[7] = ':';
  device[10] = '.';
  return device;
}

std::string deviceOfPci(std::string pci) {
  std::replace(pci.begin(), pci.end(), ':', '-');
  std::replace(pci.begin(), pci.end(), '.', '-');
  return pci;
}

// A list's items (none when it has no such array).
const json::Value::ConstArray items(const json::Value& list) {
  static const json::Value kEmpty(rapidjson::kArrayType);
  const json::Value* v = json::arrayMember(list, "items");
  return (v != nullptr ? *v : kEmpty).GetArray();
}

// A string or boolean field, "" when absent.
std::string field(const json::Value& v, std::initializer_list<std::string_view> path) {
  const json::Value* f = json::at(v, path);
  if (f == nullptr) return "";
  if (f->IsBool()) return f->GetBool() ? "true" : "false";
  return f->IsString() ? std::string(f->GetString(), f->GetStringLength()) : "";
}

// Files (not directories) directly in dir, by name.
std::set<std::string> filesIn(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file()) out.insert(e.path().filename());
  }
  return out;
}

// A VF of the simulated server: its PF and index, and the netdev its sysfs names.
struct HostVf {
  std::string pf;
  int32_t index = 0;
  std::string netdev;
};

std::map<std::string, HostVf> vfsByPci() {
  const std::string root = ProductOnNode::fixtureRoot();
  std::map<std::string, HostVf> out;
  for (const auto& [pf, vf] : ProductOnNode::hostVfs()) {
    std::error_code ec;
    auto link = fs::read_symlink(
        root + "/sys/class/net/" + pf + "/device/virtfn" + std::to_string(vf.vf), ec);
    if (ec) continue;
    std::string pci = link.filename();
    HostVf h{pf, vf.vf, ""};
    for (const auto& e :
         fs::directory_iterator(root + "/sys/bus/pci/devices/" + pci + "/net", ec)) {
      h.netdev = e.path().filename();
    }
    out.emplace(pci, h);
  }
  return out;
}

}  // namespace

std::vector<ProductOnNode::PfVf> ProductOnNode::hostVfs() {
  host::SimulatedKernel kernel(fixtureRoot());
  std::vector<PfVf> out;
  auto links = kernel.links();
  if (!links.ok())
    throw std::runtime_error("links of the simulated server: " + links.status().toString());
  for (const auto& link : *links) {
    auto vfs = kernel.vfs(link.name);
    if (!vfs.ok()) continue;  // not a PF
    for (const auto& vf : *vfs) out.emplace_back(link.name, vf);
  }
  return out;
}

void ProductOnNode::armFault(const std::string& point) const {
  fs::create_directories(fs::path(faultPath(point)).parent_path());
  // A release no process took (the one stopped there was killed) must not release the next.
  std::error_code ec;
  fs::remove(faultPath(point) + ".release", ec);
  Status st = writeFileAtomic(faultPath(point), "", 0644);
  if (!st.isOk()) throw std::runtime_error("arming fault point " + point + ": " + st.toString());
}

void ProductOnNode::waitAtFault(const std::string& point, std::chrono::seconds timeout) const {
  if (pollUntil([&] { return fs::exists(faultPath(point) + ".reached"); }, timeout, 100ms)) return;
  throw std::runtime_error("nothing stopped at fault point " + point + "\n" + diagnostics());
}

void ProductOnNode::releaseFault(const std::string& point) const {
  std::error_code ec;
  fs::remove(faultPath(point), ec);
  fs::remove(faultPath(point) + ".reached", ec);
  Status st = writeFileAtomic(faultPath(point) + ".release", "", 0644);
  if (!st.isOk()) throw std::runtime_error("releasing fault point " + point + ": " + st.toString());
}

namespace {

// What the API server says runs on the node, and what the host must therefore hold.
struct Expected {
  std::set<std::string> existing_pods;      // UIDs, any namespace
  std::set<std::string> running;            // UIDs of the workloads' running pods
  size_t sandboxes = 0;                     // running pods off the host network
  std::map<std::string, std::string> held;  // VF PCI address -> claim UID
  std::set<std::string> held_claims;        // claims of running pods with our VFs
  std::set<std::string> advertised;         // our devices in the node's slices
  std::vector<std::string> problems;
};

void readPods(const json::Value& pods, const std::string& node, Expected& e) {
  for (const auto& pod : items(pods)) {
    const std::string uid = field(pod, {"metadata", "uid"});
    e.existing_pods.insert(uid);
    if (field(pod, {"spec", "nodeName"}) != node) continue;
    const bool phase_running = field(pod, {"status", "phase"}) == "Running";
    if (phase_running && field(pod, {"spec", "hostNetwork"}) != "true") ++e.sandboxes;
    if (field(pod, {"metadata", "namespace"}) == ProductOnNode::kWorkloads && phase_running &&
        json::at(pod, {"metadata", "deletionTimestamp"}) == nullptr) {
      e.running.insert(uid);
    }
  }
}

void readClaims(const json::Value& claims, Expected& e) {
  for (const auto& item : items(claims)) {
    auto rc = api::ResourceClaim::decode(item);
    if (!rc.ok()) {
      e.problems.push_back("a ResourceClaim did not decode: " + rc.status().toString());
      continue;
    }
    const std::string who = "ResourceClaim " + rc->metadata.name;
    bool for_running = false;
    for (const auto& consumer : rc->status.reserved_for) {
      if (!e.existing_pods.contains(consumer.uid)) {
        e.problems.push_back(who + " is reserved for pod " + consumer.name + ", which is gone");
      }
      for_running = for_running || e.running.contains(consumer.uid);
    }
    for (const auto& owner : rc->metadata.owner_references) {
      if (owner.kind == "Pod" && !e.existing_pods.contains(owner.uid)) {
        e.problems.push_back(who + " outlives its pod " + owner.name);
      }
    }
    if (!for_running || !rc->status.allocation) continue;
    for (const auto& r : rc->status.allocation->results) {
      if (r.driver != api::kDriverName) continue;
      const std::string pci = pciOfDevice(r.device);
      if (e.held.contains(pci)) {
        e.problems.push_back("VF " + pci + " is held by two running pods' claims");
      }
      e.held[pci] = rc->metadata.uid;
      e.held_claims.insert(rc->metadata.uid);
    }
  }
}

// Each VF of `free_vfs` is there; a held one is out of the host, a free one on the host as before
// any pod; all are advertised.
void checkVfs(const std::vector<ProductOnNode::PfVf>& free_vfs, Expected& e) {
  const auto now = ProductOnNode::hostVfs();
  auto settingsOf = [](const std::vector<ProductOnNode::PfVf>& vfs, const std::string& pf,
                       int32_t index) -> const host::VfInfo* {
    for (const auto& [name, vf] : vfs) {
      if (name == pf && vf.vf == index) return &vf;
    }
    return nullptr;
  };
  for (const auto& [pf, vf] : free_vfs) {
    if (settingsOf(now, pf, vf.vf) == nullptr) {
      e.problems.push_back("VF " + std::to_string(vf.vf) + " of " + pf + " is gone");
    }
  }
  for (const auto& [pci, v] : vfsByPci()) {
    const std::string vf = "VF " + pci + " (" + v.netdev + ")";
    if (!e.advertised.contains(deviceOfPci(pci))) e.problems.push_back(vf + " is not advertised");
    if (e.held.contains(pci)) {
      if (ProductOnNode::onHost(v.netdev)) {
        e.problems.push_back(vf + " is held by a running pod but on the host");
      }
      continue;
    }
    if (!ProductOnNode::onHost(v.netdev)) {
      e.problems.push_back(vf + " is free but its netdev is not on the host");
    }
    const host::VfInfo* before = settingsOf(free_vfs, v.pf, v.index);
    const host::VfInfo* after = settingsOf(now, v.pf, v.index);
    if (before != nullptr && after != nullptr && !(*before == *after)) {
      e.problems.push_back(vf + " is free but not reset: mac " + after->mac + " vlan " +
                           std::to_string(after->vlan) + " trust " + (after->trust ? "on" : "off"));
    }
  }
}

// Our CNI plugins' caches (<sandbox>-<ifName>) and allocations, host-local's leases (the file
// names the sandbox): each belongs to an attached interface of a recorded sandbox.
void checkCni(const std::vector<dra::AttachRecord>& records, Expected& e) {
  std::set<std::string> attached, sandboxes;
  for (const auto& r : records) {
    sandboxes.insert(r.sandbox);
    for (const auto& i : r.interfaces) attached.insert(r.sandbox + "-" + i.if_name);
  }
  for (const char* plugin : {"sriov", "ib-sriov"}) {
    const std::string dir = ProductOnNode::fixtureRoot() + "/var/lib/cni/" + plugin;
    for (const auto& pci : filesIn(dir + "/pci")) {
      if (!e.held.contains(pci)) e.problems.push_back("a CNI allocation of VF " + pci + " is left");
    }
    for (const auto& f : filesIn(dir)) {
      if (f != "cni.lock" && !attached.contains(f)) {
        e.problems.push_back("the " + std::string(plugin) + " cache " + f +
                             " belongs to no attached interface");
      }
    }
  }
  size_t leases = 0;
  const std::string networks = std::string(RealNode::kRoot) + "/cni-state/networks/cx6-vf";
  for (const auto& f : filesIn(networks)) {
    if (f.find_first_of(".:") == std::string::npos || f.starts_with("last_reserved_ip")) continue;
    ++leases;
    const std::string holder = readFile(networks + "/" + f).valueOr("");
    if (!sandboxes.contains(holder.substr(0, holder.find_first_of("\r\n")))) {
      e.problems.push_back("host-local lease " + f + " is held by no recorded sandbox");
    }
  }
  if (leases != 2 * e.held.size()) {
    e.problems.push_back(std::to_string(leases) + " host-local leases for " +
                         std::to_string(e.held.size()) + " attached VFs (IPv4 and IPv6 each)");
  }
}

// The agent's CDI specs, checkpoint and attach records.
void checkAgentState(const std::vector<dra::AttachRecord>& records, Expected& e) {
  for (const auto& f : filesIn(RealNode::cdiDir())) {
    std::string id = dra::cdiSpecId(f);
    if (!id.empty() && !e.held_claims.contains(id) && !e.running.contains(id)) {
      e.problems.push_back("CDI spec " + f + " belongs to no running pod or its claim");
    }
  }
  for (const auto& uid : e.held_claims) {
    if (!fs::exists(RealNode::cdiDir() + "/" + dra::cdiSpecFileName(uid))) {
      e.problems.push_back("claim " + uid + " of a running pod has no CDI spec");
    }
  }
  const std::string state = std::string(RealNode::kRoot) + "/agent-state";
  auto text = readFile(state + "/checkpoint.json");
  auto checkpoint =
      text.ok() ? dra::Checkpoint::decode(*text) : Result<dra::Checkpoint>(dra::Checkpoint{});
  if (!checkpoint.ok()) {
    e.problems.push_back("the checkpoint does not decode: " + checkpoint.status().toString());
  } else {
    for (const auto& [uid, claim] : checkpoint->claims) {
      if (!e.held_claims.contains(uid)) {
        e.problems.push_back("the checkpoint holds claim " + claim.name +
                             ", which no running pod has");
      }
    }
    for (const auto& uid : e.held_claims) {
      if (!checkpoint->claims.contains(uid)) {
        e.problems.push_back("the checkpoint lacks claim " + uid + " of a running pod");
      }
    }
  }
  std::map<std::string, int> attached;  // VF -> interfaces recorded
  for (const auto& r : records) {
    if (!e.running.contains(r.pod_uid)) {
      e.problems.push_back("attach record of pod " + r.pod_name + ", which does not run");
    }
    for (const auto& i : r.interfaces) ++attached[i.pci_address];
  }
  for (const auto& [pci, n] : attached) {
    if (n != 1 || !e.held.contains(pci)) {
      e.problems.push_back("VF " + pci + " is recorded attached " + std::to_string(n) +
                           " time(s), held " + (e.held.contains(pci) ? "once" : "by no pod"));
    }
  }
  for (const auto& [pci, claim] : e.held) {
    if (!attached.contains(pci)) e.problems.push_back("VF " + pci + " is held but not attached");
  }
}

std::vector<dra::AttachRecord> attachRecords(Expected& e) {
  std::vector<dra::AttachRecord> out;
  const std::string dir = std::string(RealNode::kRoot) + "/agent-state/attach";
  for (const auto& f : filesIn(dir)) {
    auto record = dra::AttachRecord::decode(readFile(dir + "/" + f).valueOr(""));
    if (record.ok()) {
      out.push_back(std::move(*record));
    } else {
      e.problems.push_back("attach record " + f + ": " + record.status().toString());
    }
  }
  return out;
}

}  // namespace

std::string ProductOnNode::leaks(const std::vector<PfVf>& free_vfs) const {
  auto admin = cp_->client();
  auto pods = admin->list(kube::resources::kPods, "");
  auto claims = admin->list(api::resources::kResourceClaims, kWorkloads);
  auto slices = admin->list(api::resources::kResourceSlices, "");
  if (!pods.ok() || !claims.ok() || !slices.ok()) return "the API server did not answer";
  Expected e;
  readPods(*pods, node_->name(), e);
  readClaims(*claims, e);
  for (const auto& item : items(*slices)) {
    auto slice = api::ResourceSlice::decode(item);
    if (!slice.ok() || slice->spec.driver != api::kDriverName ||
        slice->spec.node_name != node_->name()) {
      continue;
    }
    for (const auto& d : slice->spec.devices) e.advertised.insert(d.name);
  }
  checkVfs(free_vfs, e);
  const auto records = attachRecords(e);
  checkCni(records, e);
  checkAgentState(records, e);
  // Network namespaces: one per running pod sandbox off the host network.
  size_t netns = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/run/netns", ec)) {
    netns += entry.path().filename().string().starts_with("cni-");
  }
  if (netns != e.sandboxes) {
    e.problems.push_back(std::to_string(netns) + " pod network namespaces for " +
                         std::to_string(e.sandboxes) + " running pods off the host network");
  }
  return join(e.problems, "\n");
}

}  // namespace sriovdra::testing
