#include "support/operator_env.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "api/names.h"
#include "base/files.h"
#include "host/fixtures.h"
#include "support/discovery.h"
#include "support/fixtures.h"
#include "support/poll.h"

namespace sriovdra::testing {

ControlPlaneOptions OperatorEnv::controlPlaneOptions() {
  // --allow-privileged, as on every real cluster.
  // Multus's NetworkAttachmentDefinition CRD, as on clusters that run networks.
  return {.users = {{"operator", {}}, {"operator-b", {}}, {"restricted", {}}},
          .extra_apiserver_args = {"--allow-privileged=true"},
          .extra_yaml_files = {sourceDir() +
                               "/tests/fixtures/crds/network-attachment-definitions.yaml"},
          .audit_log = true};
}

ControlPlane& operatorControlPlane() {
  static std::unique_ptr<ControlPlane> cp = ControlPlane::start(OperatorEnv::controlPlaneOptions());
  return *cp;
}

OperatorEnv::OperatorEnv(const std::string& prefix) : OperatorEnv(prefix, operatorControlPlane()) {}

OperatorEnv::OperatorEnv(const std::string& prefix, ControlPlane& cp)
    : cp_(cp), ns_(cp_.newNamespace(prefix)), admin_(cp_.client()) {
  cp_.grantOperatorRbac("operator", ns_);
  cp_.grantOperatorRbac("operator-b", ns_);
  agent_user_ = cp_.grantAgentRbac(ns_);
}

std::string OperatorEnv::sysfsRoot(const std::string& node) const {
  return cp_.memoryDir() + "/sysfs-" + node;
}
std::string OperatorEnv::stateDir(const std::string& node) const {
  return cp_.dir() + "/state-" + node;
}

std::string OperatorEnv::kernelJournal(const std::string& node) const {
  return readFile(sysfsRoot(node) + "/simulated-kernel.log").valueOr("");
}

std::unique_ptr<OperatorProcess> OperatorEnv::startAgent(
    const std::string& node, const std::string& topology, const std::string& kubelet_dir,
    const std::string& metrics_cert_dir, std::vector<std::string> extra_args,
    std::vector<std::pair<std::string, std::string>> env) {
  if (!std::filesystem::exists(sysfsRoot(node))) {
    Status st = host::writeFixture(topology, sysfsRoot(node));
    if (!st.isOk()) throw std::runtime_error(st.toString());
  }
  return OperatorProcess::startAgent(cp_, {.namespace_ = ns_,
                                           .node = node,
                                           .sysfs_root = sysfsRoot(node),
                                           .state_dir = stateDir(node),
                                           .name = node + "-agent",
                                           .kubelet_dir = kubelet_dir,
                                           .metrics_cert_dir = metrics_cert_dir,
                                           .extra_args = std::move(extra_args),
                                           .env = std::move(env)});
}

std::unique_ptr<OperatorProcess> OperatorEnv::startOperator(OperatorProcessOptions o) {
  o.namespace_ = ns_;
  o.name = ns_ + "-" + o.name;
  o.extra_args.push_back("--agent-node-selector=sriov-dra-test=" + ns_);
  auto p = OperatorProcess::start(cp_, std::move(o));
  p->waitReady();
  return p;
}

std::string OperatorEnv::createNode(const std::string& suffix,
                                    std::map<std::string, std::string> labels) {
  std::string name = ns_ + "-" + suffix;
  labels["sriov-dra-test"] = ns_;
  cp_.createNode(name, labels);
  return name;
}

void OperatorEnv::setNodeLabel(const std::string& node, const std::string& key,
                               const std::optional<std::string>& value) {
  std::string patch = R"({"metadata":{"labels":{")" + key +
                      "\":" + (value ? "\"" + *value + "\"" : std::string("null")) + "}}}";
  auto r = admin_->patch(kube::resources::kNodes, "", node, kube::PatchType::kMerge, patch);
  if (!r.ok()) throw std::runtime_error("labelling node: " + r.status().toString());
}

void OperatorEnv::applyObject(json::Document obj) {
  retarget(obj, ns_);
  Discovery discovery(admin_);
  auto rt = discovery.resourceFor(obj);
  if (!rt.ok()) throw std::runtime_error(rt.status().toString());
  auto created = admin_->create(*rt, ns_, obj);
  if (!created.ok()) throw std::runtime_error("creating: " + created.status().toString());
}

void OperatorEnv::applyReferencePolicies() {
  applyFixture("reference/sriovnetworknodepolicy-cx6-vfs.yaml");
  applyFixture("reference/sriovresourcepolicy-cx6-advertise-vfs.yaml");
  applyFixture("reference/deviceattributes-cx6-vfs-attrs.yaml");
}

void OperatorEnv::applyFixture(const std::string& relative) {
  for (auto& doc : loadFixture(relative)) applyObject(std::move(doc));
}

std::optional<api::SriovNodeState> OperatorEnv::nodeState(const std::string& node) const {
  auto got = admin_->get(api::resources::kSriovNodeStates, ns_, node);
  if (!got.ok()) return std::nullopt;
  auto s = api::SriovNodeState::decode(*got);
  if (!s.ok()) return std::nullopt;
  return std::move(*s);
}

std::vector<api::ResourceSlice> OperatorEnv::slicesOf(const std::string& node) const {
  auto list = admin_->list(api::resources::kResourceSlices, "",
                           {.label_selector = "sriovnetwork.k8snetworkplumbingwg.io/node=" + node});
  std::vector<api::ResourceSlice> out;
  if (!list.ok()) return out;
  for (const auto& item : (*list)["items"].GetArray()) {
    auto s = api::ResourceSlice::decode(item);
    if (s.ok()) out.push_back(std::move(*s));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.metadata.name < b.metadata.name; });
  return out;
}

size_t OperatorEnv::deviceCount(const std::string& node) const {
  size_t n = 0;
  for (const auto& s : slicesOf(node)) n += s.spec.devices.size();
  return n;
}

std::optional<std::string> OperatorEnv::findEvent(const std::string& reason,
                                                  const std::string& type,
                                                  const std::string& involved_name) const {
  auto events = admin_->list(kube::resources::kEvents, ns_);
  if (!events.ok()) return std::nullopt;
  for (const auto& e : (*events)["items"].GetArray()) {
    const json::Value* involved = json::objectMember(e, "involvedObject");
    if (json::stringOr(e, "reason") == reason && json::stringOr(e, "type") == type &&
        involved != nullptr && json::stringOr(*involved, "name") == involved_name) {
      return std::string(json::stringOr(e, "message"));
    }
  }
  return std::nullopt;
}

void OperatorEnv::reportStatus(const std::string& node, api::SriovNodeStateStatus status) {
  std::optional<api::SriovNodeState> state;
  if (!pollUntil([&] { return (state = nodeState(node)).has_value(); }, std::chrono::seconds(30)))
    throw std::runtime_error("the operator never created the SriovNodeState of " + node);
  status.observed_generation = state->metadata.generation;
  if (status.sync_status.empty()) status.sync_status = "Succeeded";
  json::Document doc = kube::newObject(api::resources::kSriovNodeStates, ns_, node);
  status.encode(api::Writer(doc, doc.GetAllocator()).object("status"));
  auto r = admin_->apply(api::resources::kSriovNodeStates, ns_, doc,
                         {.field_manager = "sriov-dra-agent", .force = true}, "status");
  if (!r.ok()) throw std::runtime_error("writing status: " + r.status().toString());
}

std::optional<api::PolicyStatus> OperatorEnv::policyStatus(const kube::ResourceType& rt,
                                                           const std::string& name) const {
  auto got = admin_->get(rt, ns_, name);
  if (!got.ok()) return std::nullopt;
  return api::PolicyStatus::decode(api::Reader(&*got, "").object("status"));
}

bool OperatorEnv::deviceClassExists(const std::string& name) const {
  return admin_->get(api::resources::kDeviceClasses, "", name).ok();
}

std::string conditionSummary(const api::PolicyStatus& s) {
  std::string out = "nodes=" + std::to_string(s.matched_nodes) +
                    " devices=" + std::to_string(s.matched_devices) +
                    " conflicts=" + std::to_string(s.conflicts.size());
  for (const auto& c : s.conditions) {
    out += " " + c.type + "=" + c.status + "(" + c.reason + ": " + c.message + ")";
  }
  return out;
}

}  // namespace sriovdra::testing
