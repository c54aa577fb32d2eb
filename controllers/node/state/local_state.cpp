#include "node/state/local_state.h"

#include <algorithm>
#include <ctime>
#include <filesystem>

#include <prometheus/gauge.h>

#include "api/names.h"
#include "base/files.h"
#include "dra/cdi.h"
#include "dra/device_metadata.h"
#include "dra/in_use.h"
#include "dra/slices.h"
#include "kube/manager.h"
#include "metrics/registry.h"
#include "node/state/claim_status.h"

namespace sriovdra::node {

LocalState::LocalState(std::shared_ptr<kube::Client> client, LocalStateOptions options)
    : client_(std::move(client)),
      options_(std::move(options)),
      states_(client_, api::resources::kSriovNodeStates,
              {.name = "sriovnodestate",
               .namespace_ = options_.namespace_,
               .field_selector = "metadata.name=" + options_.node_name}),
      records_(options_.state_dir + "/attach"),
      prepared_claims_(&prometheus::BuildGauge()
                            .Name("sriov_dra_prepared_claims")
                            .Help("ResourceClaims with VFs prepared on this node")
                            .Register(metrics::registry())
                            .Add({})) {}

LocalState::~LocalState() { stop(); }

void LocalState::start() { states_.start(); }

void LocalState::stop() { states_.stop(); }

bool LocalState::synced() const { return states_.hasSynced(); }

bool LocalState::waitForSync(std::chrono::milliseconds timeout, const std::stop_token& stop) const {
  return kube::waitUntil([this] { return synced(); }, timeout, stop);
}

namespace {

// The device as the agent publishes it from the state (dra::buildSlices of one device).
std::optional<api::SliceDevice> buildOne(const std::string& node, const api::Device& device,
                                         const api::SriovNodeState& state) {
  auto built = dra::buildSlices(node, {device}, state.status.interfaces, {});
  if (built.slices.empty() || built.slices[0].spec.devices.empty()) return std::nullopt;
  return std::move(built.slices[0].spec.devices[0]);
}

}  // namespace

std::optional<api::SliceDevice> LocalState::advertised(const std::string& device) const {
  auto state = states_.get(options_.namespace_, options_.node_name);
  if (!state) return std::nullopt;
  for (const auto& d : state->spec.devices) {
    if (d.name == device) return buildOne(options_.node_name, d, *state);
  }
  return std::nullopt;
}

std::optional<api::SliceDevice> LocalState::discovered(const std::string& device) const {
  std::string pci = dra::pciAddressOfDevice(device);
  auto state = states_.get(options_.namespace_, options_.node_name);
  if (pci.empty() || !state) return std::nullopt;
  return buildOne(options_.node_name, {.name = device, .pci_address = pci}, *state);
}

std::vector<api::InterfaceExt> LocalState::discoveredPfs() const {
  auto state = states_.get(options_.namespace_, options_.node_name);
  return state ? state->status.interfaces : std::vector<api::InterfaceExt>{};
}

std::vector<std::string> LocalState::driversOf(const std::string& device) const {
  auto state = states_.get(options_.namespace_, options_.node_name);
  if (!state) return {};
  for (const auto& d : state->spec.devices) {
    if (d.name == device) return d.drivers;
  }
  return {};
}

bool LocalState::needsVhostNet(const std::string& pci_address) const {
  auto state = states_.get(options_.namespace_, options_.node_name);
  if (!state) return false;
  // The VF's PF and index as discovered, then the spec's group for that index.
  for (const auto& pf : state->status.interfaces) {
    auto vf = std::find_if(pf.vfs.begin(), pf.vfs.end(),
                           [&](const auto& v) { return v.pci_address == pci_address; });
    if (vf == pf.vfs.end()) continue;
    for (const auto& itf : state->spec.interfaces) {
      if (itf.pci_address != pf.pci_address) continue;
      const api::VfGroup* group = itf.groupOf(vf->vf_id);
      return group != nullptr && group->need_vhost_net;
    }
    return false;
  }
  return false;
}

Status LocalState::load() {
  std::string path = options_.state_dir + "/checkpoint.json";
  auto text = readFile(path);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) return Status::ok();
    return text.status();
  }
  auto cp = dra::Checkpoint::decode(*text);
  if (!cp.ok()) {
    std::string aside = path + ".corrupt-" + std::to_string(std::time(nullptr));
    std::error_code ec;
    std::filesystem::rename(path, aside, ec);
    return Status(Code::kInvalidArgument,
                  path + " is not a valid checkpoint (" + cp.status().message() + "); moved to " +
                      aside + " and starting without prepared claims: claims prepared before " +
                      "must be checked by hand");
  }
  std::lock_guard lock(mu_);
  checkpoint_ = std::move(*cp);
  prepared_claims_->Set(static_cast<double>(checkpoint_.claims.size()));
  return Status::ok();
}

std::optional<dra::PreparedClaim> LocalState::claim(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = checkpoint_.claims.find(uid);
  if (it == checkpoint_.claims.end()) return std::nullopt;
  return it->second;
}

dra::Checkpoint LocalState::checkpoint() const {
  std::lock_guard lock(mu_);
  return checkpoint_;
}

Status LocalState::record(const dra::PreparedClaim& claim) {
  std::lock_guard lock(mu_);
  auto before = checkpoint_.claims.extract(claim.uid);
  checkpoint_.claims[claim.uid] = claim;
  Status saved = saveLocked();
  if (!saved.isOk()) {
    checkpoint_.claims.erase(claim.uid);
    if (!before.empty()) checkpoint_.claims.insert(std::move(before));
  }
  return saved;
}

Status LocalState::forget(const std::string& uid) {
  std::lock_guard lock(mu_);
  auto before = checkpoint_.claims.extract(uid);
  if (before.empty()) return Status::ok();
  Status saved = saveLocked();
  if (!saved.isOk()) checkpoint_.claims.insert(std::move(before));
  return saved;
}

Status LocalState::saveLocked() {
  std::error_code ec;
  std::filesystem::create_directories(options_.state_dir, ec);
  Status written =
      writeFileAtomic(options_.state_dir + "/checkpoint.json", checkpoint_.encode(), 0600);
  if (!written.isOk()) return written.prepend("saving the checkpoint");
  prepared_claims_->Set(static_cast<double>(checkpoint_.claims.size()));
  return Status::ok();
}

std::vector<dra::PodVf> LocalState::podVfs(const std::string& pod_uid) const {
  std::lock_guard lock(mu_);
  return checkpoint_.podVfs(pod_uid);
}

std::vector<dra::Attachment> LocalState::attachmentsFor(const std::string& pod_uid,
                                                        const std::string& interface_prefix) const {
  std::lock_guard lock(mu_);
  return dra::attachmentsFor(checkpoint_, pod_uid, interface_prefix);
}

Status LocalState::writeClaimStatus(const std::string& uid) const {
  auto prepared = claim(uid);
  if (!prepared) return Status::ok();
  auto statuses = dra::deviceStatuses(*prepared, options_.driver_name, records_.ofClaim(uid));
  Status written = writeMetadata(*prepared, statuses);
  if (written.isOk()) {
    written = writeDeviceStatuses(*client_, *prepared, options_.driver_name, statuses,
                                  options_.status_retry);
  }
  if (written.isOk()) return written;
  return written.prepend("writing status.devices of ResourceClaim " + prepared->namespace_ + "/" +
                         prepared->name);
}

Status LocalState::writeMetadata(const dra::PreparedClaim& claim,
                                 const std::vector<api::AllocatedDeviceStatus>& statuses) const {
  if (options_.metadata_dir.empty()) return Status::ok();
  std::map<std::string, api::NetworkDeviceData> network;
  for (const auto& s : statuses) {
    if (s.network_data) network[s.device] = *s.network_data;
  }
  std::set<std::string> requests;
  for (const auto& d : claim.devices) {
    for (const auto& r : d.request_names) requests.insert(dra::baseRequest(r));
  }
  for (const auto& request : requests) {
    std::string path = dra::metadataHostPath(
        options_.metadata_dir, {claim.namespace_, claim.name, claim.uid, ""}, request);
    auto before = readFile(path);
    if (!before.ok()) {
      // Prepared without metadata (the flag came later): nothing to update.
      if (before.status().code() == Code::kNotFound) continue;
      return Status(before.status().code(),
                    "reading the device metadata " + path + ": " + before.status().message());
    }
    auto after = dra::withNetworkData(*before, options_.driver_name, network);
    if (!after.ok()) {
      return Status(after.status().code(),
                    "updating the device metadata " + path + ": " + after.status().message());
    }
    SDRA_RETURN_IF_ERROR(writeFileAtomic(path, *after, 0644));
  }
  return Status::ok();
}

host::PreparedVfs LocalState::prepared() const {
  std::lock_guard lock(mu_);
  return checkpoint_.preparedVfs();
}

std::unique_lock<std::mutex> LocalState::holdHost() { return std::unique_lock(host_mu_); }

Result<host::PreparedVfs> LocalState::inUse() const {
  host::PreparedVfs out = prepared();
  auto listed = client_->listAll(api::resources::kResourceClaims, "");
  if (!listed.ok()) {
    std::string hint = listed.status().code() == Code::kForbidden
                           ? " (the agent's ServiceAccount needs list on resourceclaims: "
                             "config/rbac/agent_role.yaml)"
                           : "";
    return Status(listed.status().code(),
                  "listing ResourceClaims: " + listed.status().message() + hint);
  }
  std::vector<api::ResourceClaim> claims;
  if (const json::Value* items = json::at(*listed, {"items"}); items && items->IsArray()) {
    for (const auto& item : items->GetArray()) {
      auto claim = api::ResourceClaim::decode(item);
      if (!claim.ok()) {
        return Status(Code::kInvalidArgument,
                      "a ResourceClaim cannot be read: " + claim.status().message());
      }
      claims.push_back(std::move(*claim));
    }
  }
  dra::mergeInUse(out, dra::allocatedVfs(claims, options_.driver_name, options_.node_name));
  auto specs = ourCdiSpecs(options_.cdi_root);
  if (!specs.ok()) return specs.status();
  for (const auto& spec : *specs) {
    if (!spec.addresses.ok()) {
      return Status(Code::kInvalidArgument, "the CDI spec " + spec.path + " cannot be read: " +
                                                spec.addresses.status().message());
    }
    host::PreparedVfs on_disk;
    for (const auto& pci : *spec.addresses) on_disk[pci].push_back("CDI spec of " + spec.id);
    dra::mergeInUse(out, on_disk);
  }
  return out;
}

Result<std::vector<CdiSpecOnDisk>> ourCdiSpecs(const std::string& root) {
  std::vector<CdiSpecOnDisk> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    std::string id = dra::cdiSpecId(entry.path().filename().string());
    if (id.empty()) continue;
    auto text = readFile(entry.path().string());
    out.push_back({entry.path().string(), id,
                   text.ok() ? dra::cdiSpecAddresses(*text)
                             : Result<std::vector<std::string>>(text.status())});
  }
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return Status(Code::kIo, "listing " + root + ": " + ec.message());
  }
  return out;
}

}  // namespace sriovdra::node
