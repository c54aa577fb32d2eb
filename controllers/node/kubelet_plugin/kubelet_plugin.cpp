#include "node/kubelet_plugin/kubelet_plugin.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "api/attributes.h"
#include "api/names.h"
#include "base/fault_point.h"
#include "base/files.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "dra/cdi.h"
#include "dra/device_metadata.h"
#include "dra/in_use.h"
#include "dra/prepare.h"
#include "dra/vf_config.h"
#include "host/apply.h"
#include "host/discovery.h"
#include "host/pci.h"
#include "kube/object_meta.h"

namespace sriovdra::kubelet_plugin {
namespace {

// A driver for messages: "" is the VF's default driver.
std::string driverText(const std::string& driver) {
  return driver.empty() ? "its default driver" : driver;
}

Status removeIfPresent(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec) return Status(Code::kIo, "removing " + path + ": " + ec.message());
  return Status::ok();
}

}  // namespace

KubeletPlugin::KubeletPlugin(std::shared_ptr<kube::Client> client,
                             std::shared_ptr<host::Sysfs> sysfs, node::LocalState& local,
                             KubeletPluginOptions options)
    : client_(std::move(client)),
      sysfs_(std::move(sysfs)),
      local_(local),
      options_(std::move(options)) {}

KubeletPlugin::~KubeletPlugin() = default;

std::map<std::string, PrepareResult> KubeletPlugin::prepare(
    const std::vector<api::ResourceClaim>& claims) {
  std::map<std::string, PrepareResult> out;
  for (const auto& claim : claims) {
    auto devices = prepareClaim(claim);
    auto& result = out[claim.metadata.uid];
    if (devices.ok()) {
      result.devices = std::move(*devices);
    } else {
      result.error = devices.status().message();
    }
  }
  return out;
}

std::map<std::string, std::string> KubeletPlugin::unprepare(const std::vector<ClaimRef>& claims) {
  std::map<std::string, std::string> out;
  for (const auto& ref : claims) {
    Status st = unprepareClaim(ref.uid);
    out[ref.uid] = st.isOk() ? "" : st.message();
  }
  return out;
}

std::vector<PreparedDeviceResult> KubeletPlugin::results(const dra::PreparedClaim& claim) const {
  std::vector<PreparedDeviceResult> out;
  for (const auto& d : claim.devices) {
    out.push_back({d.request_names, d.pool, d.device, d.cdi_device_ids});
  }
  return out;
}

// Prepare = fetch what planPrepare() needs, call it, then apply the plan: record the claim
// (Preparing), bind, write the CDI specs and device-info files, record it Prepared, report.
Result<std::vector<PreparedDeviceResult>> KubeletPlugin::prepareClaim(
    const api::ResourceClaim& claim) {
  auto host = local_.holdHost();
  // Prepared earlier: answered from the record while the host still has what prepare made;
  // prepared again when it lost it, and never undone when that fails (its pod may run).
  std::optional<dra::PreparedClaim> was_prepared = local_.claim(claim.metadata.uid);
  if (was_prepared && was_prepared->state != dra::PreparedClaim::State::kPrepared) {
    was_prepared.reset();
  }
  if (was_prepared) {
    if (stillApplied(*was_prepared)) return results(*was_prepared);
    SDRA_LOG_INFO << "ResourceClaim " << was_prepared->namespace_ << "/" << was_prepared->name
                  << " is recorded prepared but the host lost what prepare made (a reboot "
                  << "empties /var/run/cdi and recreates the VFs): preparing it again";
  }
  dra::PreparedClaim earlier;
  auto plan = dra::planPrepare(gather(claim, earlier));
  if (!plan.ok()) return plan.status();
  dra::PreparedClaim& pc = plan->claim;
  if (pc.devices.empty()) return std::vector<PreparedDeviceResult>{};
  SDRA_RETURN_IF_ERROR(local_.record(pc));
  if (Status st = applyPlan(*plan, claim); !st.isOk()) {
    if (!was_prepared) return undo(pc, st);
    if (Status kept = local_.record(*was_prepared); !kept.isOk()) {
      SDRA_LOG_ERROR << "keeping the record of " << pc.namespace_ << "/" << pc.name << ": "
                     << kept.message();
    }
    return st.prepend("preparing it again (the claim stays prepared as it was)");
  }
  fault::point("prepare");
  pc.state = dra::PreparedClaim::State::kPrepared;
  SDRA_RETURN_IF_ERROR(local_.record(pc));
  if (Status st = writePodSpec(pc.pod_uid); !st.isOk()) {
    return st.prepend("writing the pod's CDI spec");
  }
  host.unlock();
  if (Status st = local_.writeClaimStatus(pc.uid); !st.isOk()) {
    SDRA_LOG_ERROR << st.message() << " (the VFs are prepared; only the status is missing)";
  }
  return results(pc);
}

dra::PrepareInput KubeletPlugin::gather(const api::ResourceClaim& claim,
                                        dra::PreparedClaim& earlier) {
  dra::PrepareInput input{.claim = &claim,
                          .driver = options_.driver_name,
                          .node = options_.node_name,
                          .allowed_drivers = options_.allowed_drivers,
                          .attaches = options_.attaches};
  if (claim.status.allocation) {
    for (const auto& r : claim.status.allocation->results) {
      if (r.driver != options_.driver_name) continue;
      input.device_drivers[r.device] = local_.driversOf(r.device);
      if (auto adv = local_.advertised(r.device)) {
        input.devices.emplace(r.device, std::move(*adv));
      } else if (auto found = local_.discovered(r.device)) {
        SDRA_LOG_INFO << "ResourceClaim " << claim.metadata.namespace_ << "/" << claim.metadata.name
                      << ": device " << r.device
                      << " is no longer advertised; it is allocated to the claim, so it is "
                      << "prepared as the node discovered it";
        input.devices.emplace(r.device, std::move(*found));
      }
    }
  }
  for (const auto& pci : dra::addressesToRead(claim, options_.driver_name, input.devices)) {
    input.host.emplace(pci, host::readVfAccess(*sysfs_, pci));
    if (local_.needsVhostNet(pci)) input.vhost_net_vfs.insert(pci);
  }
  if (auto recorded = local_.claim(claim.metadata.uid)) {
    earlier = std::move(*recorded);
    input.earlier = &earlier;
  }
  return input;
}

Status KubeletPlugin::applyPlan(dra::PreparePlan& plan, const api::ResourceClaim& claim) {
  dra::PreparedClaim& pc = plan.claim;
  const std::string who = "ResourceClaim " + pc.namespace_ + "/" + pc.name;
  std::vector<dra::CdiDevice> cdi_devices;
  for (size_t i = 0; i < pc.devices.size(); ++i) {
    dra::PreparedDevice& d = pc.devices[i];
    if (const auto& target = plan.vfs[i].rebind_to) {
      auto current = host::readVfAccess(*sysfs_, d.pci_address);
      if (!current.ok()) return current.status();
      if (Status st = host::bindDriver(*sysfs_, d.pci_address, *target, current->driver);
          !st.isOk()) {
        return Status(st.code(), "binding " + d.pci_address + " to " + driverText(*target) + ": " +
                                     st.message());
      }
      SDRA_LOG_INFO << "bound " << d.pci_address << " to " << driverText(*target) << " for " << who;
    }
    auto current = host::readVfAccess(*sysfs_, d.pci_address);
    if (!current.ok()) return current.status();
    auto artifacts = dra::deviceArtifacts(pc, d, *current, plan.vfs[i].device, options_.driver_name,
                                          options_.device_info_dir);
    if (!artifacts.ok()) return artifacts.status();
    cdi_devices.push_back(std::move(artifacts->cdi));
    d.cdi_device_ids = std::move(artifacts->cdi_device_ids);
    d.plugin_info = std::move(artifacts->plugin_info);
    if (!artifacts->device_info_path.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(options_.device_info_dir, ec);
      if (Status st =
              writeFileAtomic(artifacts->device_info_path, artifacts->device_info_json, 0444);
          !st.isOk()) {
        return Status(st.code(), "writing the Multus device-info file: " + st.message());
      }
      d.device_info_path = artifacts->device_info_path;
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.cdi_root, ec);
  if (Status st = writeFileAtomic(options_.cdi_root + "/" + dra::cdiSpecFileName(pc.uid),
                                  json::dump(dra::cdiSpec(cdi_devices)) + "\n", 0644);
      !st.isOk()) {
    return Status(st.code(), "writing the CDI spec: " + st.message());
  }
  return writeMetadata(plan, claim);
}

Status KubeletPlugin::writeMetadata(dra::PreparePlan& plan, const api::ResourceClaim& claim) {
  if (options_.metadata_dir.empty()) return Status::ok();
  dra::PreparedClaim& pc = plan.claim;
  auto named = dra::metadataClaimOf(claim);
  if (!named.ok()) return named.status();
  const dra::MetadataClaim& who = *named;
  std::map<std::string, std::vector<size_t>> by_request;  // base request -> devices
  for (size_t i = 0; i < pc.devices.size(); ++i) {
    for (const auto& r : pc.devices[i].request_names) by_request[dra::baseRequest(r)].push_back(i);
  }
  for (const auto& [request, indexes] : by_request) {
    std::vector<dra::MetadataDevice> devices;
    for (size_t i : indexes) {
      devices.push_back(
          {pc.devices[i].pool, pc.devices[i].device, plan.vfs[i].device.attributes, std::nullopt});
    }
    std::string file = dra::metadataHostPath(options_.metadata_dir, who, request);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(file).parent_path(), ec);
    Status written = writeFileAtomic(
        file, dra::deviceMetadataStream(who, options_.driver_name, request, 1, devices), 0644);
    if (written.isOk()) {
      written = writeFileAtomic(
          options_.cdi_root + "/" +
              dra::metadataCdiSpecFileName(options_.driver_name, pc.uid, request),
          json::dump(dra::metadataCdiSpec(who, options_.driver_name, request, file)) + "\n", 0644);
    }
    if (!written.isOk()) {
      return Status(written.code(),
                    "writing the device metadata of request " + request + ": " + written.message());
    }
    for (size_t i : indexes) {
      pc.devices[i].cdi_device_ids.push_back(
          dra::metadataCdiId(options_.driver_name, pc.uid, request));
    }
  }
  return Status::ok();
}

Status KubeletPlugin::removeMetadata(const std::string& uid, const std::string& ns,
                                     const std::string& name) {
  if (options_.metadata_dir.empty()) return Status::ok();
  std::string prefix = dra::metadataCdiSpecPrefix(options_.driver_name, uid);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.cdi_root, ec)) {
    if (!entry.path().filename().string().starts_with(prefix)) continue;
    // A claim the checkpoint lost: its files are where its spec mounts them from.
    if (ns.empty()) {
      if (auto file = mountedMetadataFile(entry.path().string())) {
        std::filesystem::remove_all(file->parent_path(), ec);
        std::filesystem::remove(file->parent_path().parent_path(), ec);  // only when empty
      }
    }
    SDRA_RETURN_IF_ERROR(removeIfPresent(entry.path().string()));
  }
  if (ns.empty()) return Status::ok();
  std::filesystem::remove_all(dra::metadataClaimDir(options_.metadata_dir, {ns, name, uid, ""}),
                              ec);
  if (ec) {
    return Status(Code::kIo,
                  "removing the device metadata of " + ns + "/" + name + ": " + ec.message());
  }
  return Status::ok();
}

std::optional<std::filesystem::path> KubeletPlugin::mountedMetadataFile(
    const std::string& spec_path) const {
  auto text = readFile(spec_path);
  auto spec = text.ok() ? json::parse(*text) : Result<json::Document>(text.status());
  if (!spec.ok()) return std::nullopt;
  const json::Value* devices = json::arrayMember(*spec, "devices");
  if (devices == nullptr || devices->Empty()) return std::nullopt;
  const json::Value* mounts = json::at((*devices)[0], {"containerEdits", "mounts"});
  if (mounts == nullptr || !mounts->IsArray() || mounts->Empty()) return std::nullopt;
  auto file = std::filesystem::path(json::stringOr((*mounts)[0], "hostPath")).lexically_normal();
  auto root = std::filesystem::path(options_.metadata_dir + "/dra-device-metadata/");
  if (!file.string().starts_with(root.lexically_normal().string())) return std::nullopt;
  return file;
}

Status KubeletPlugin::undo(const dra::PreparedClaim& pc, Status error) {
  Status restored = restoreDrivers(pc);
  Status removed = removeFiles(pc);
  Status undone = !restored.isOk() ? restored : removed;
  if (undone.isOk()) undone = local_.forget(pc.uid);
  if (undone.isOk()) undone = writePodSpec(pc.pod_uid);
  if (undone.isOk()) return error;
  return Status(error.code(), error.message() + "; undoing it failed too (the claim stays " +
                                  "recorded, unprepare retries): " + undone.message());
}

bool KubeletPlugin::stillApplied(const dra::PreparedClaim& claim) const {
  if (!std::filesystem::exists(options_.cdi_root + "/" + dra::cdiSpecFileName(claim.uid))) {
    return false;
  }
  for (const auto& d : claim.devices) {
    // The driver it was bound to, or left on when that was a user-space one (a vfio-pci group's
    // VF comes back on its kernel driver after a reboot); a kernel driver is the VF's own.
    const auto& target = d.config.targetDriver();
    std::string want = target ? *target : d.original_driver;
    if (want.empty() || (!target && !host::isUserspaceDriver(want))) continue;
    auto current = host::readVfAccess(*sysfs_, d.pci_address);
    if (!current.ok() || current->driver != want) return false;
  }
  return true;
}

Status KubeletPlugin::restoreDrivers(const dra::PreparedClaim& claim) {
  for (const auto& d : claim.devices) {
    if (!d.config.targetDriver()) continue;  // the plugin never changed its driver
    auto current = host::readVfAccess(*sysfs_, d.pci_address);
    if (!current.ok()) {
      if (current.status().code() == Code::kNotFound) continue;  // the VF is gone
      return current.status();
    }
    if (current->driver == d.original_driver) continue;
    // Back to a kernel driver by clearing driver_override (the kernel picks the VF's own), so no
    // override sticks; a user-space original (a vfio-pci VF group) is set again by name.
    std::string target = host::isUserspaceDriver(d.original_driver) ? d.original_driver : "";
    if (Status st = host::bindDriver(*sysfs_, d.pci_address, target, current->driver); !st.isOk()) {
      return Status(st.code(), "restoring " + d.pci_address + " to " +
                                   driverText(d.original_driver) + ": " + st.message());
    }
    SDRA_LOG_INFO << "restored " << d.pci_address << " to " << driverText(d.original_driver);
  }
  return Status::ok();
}

Status KubeletPlugin::removeFiles(const dra::PreparedClaim& claim) {
  for (const auto& d : claim.devices) {
    if (!d.device_info_path.empty()) SDRA_RETURN_IF_ERROR(removeIfPresent(d.device_info_path));
  }
  SDRA_RETURN_IF_ERROR(removeMetadata(claim.uid, claim.namespace_, claim.name));
  return removeIfPresent(options_.cdi_root + "/" + dra::cdiSpecFileName(claim.uid));
}

Status KubeletPlugin::writePodSpec(const std::string& pod_uid) {
  std::string path = options_.cdi_root + "/" + dra::cdiSpecFileName(pod_uid);
  auto vfs = local_.podVfs(pod_uid);
  if (vfs.empty()) return removeIfPresent(path);
  return writeFileAtomic(path, json::dump(dra::cdiSpec({dra::podCdiDevice(pod_uid, vfs)})) + "\n",
                         0644);
}

Status KubeletPlugin::unprepareClaim(const std::string& uid) {
  if (options_.detach_claim) SDRA_RETURN_IF_ERROR(options_.detach_claim(uid));
  std::optional<dra::PreparedClaim> recorded = local_.claim(uid);
  if (!recorded) return cleanUpUnrecorded(uid);
  auto host = local_.holdHost();
  SDRA_RETURN_IF_ERROR(restoreDrivers(*recorded));
  SDRA_RETURN_IF_ERROR(removeFiles(*recorded));
  fault::point("unprepare");
  SDRA_RETURN_IF_ERROR(local_.forget(uid));
  return writePodSpec(recorded->pod_uid);
}

Status KubeletPlugin::cleanUpUnrecorded(const std::string& uid) {
  const std::string spec_path = options_.cdi_root + "/" + dra::cdiSpecFileName(uid);
  auto text = readFile(spec_path);
  if (!text.ok()) {
    // Never prepared here, or already undone.
    return text.status().code() == Code::kNotFound ? Status::ok() : text.status();
  }
  auto addresses = dra::cdiSpecAddresses(*text);
  if (!addresses.ok()) {
    return Status(Code::kInvalidArgument, spec_path + " is not a CDI spec of ours (" +
                                              addresses.status().message() +
                                              "); left in place for a person to check");
  }
  auto host = local_.holdHost();
  std::set<std::string> vfs(addresses->begin(), addresses->end());
  for (const auto& pci : vfs) {
    auto current = host::readVfAccess(*sysfs_, pci);
    if (!current.ok() || !host::isUserspaceDriver(current->driver)) continue;
    if (Status st = host::bindDriver(*sysfs_, pci, "", current->driver); !st.isOk()) {
      return Status(st.code(), "restoring " + pci + " to its default driver: " + st.message());
    }
    SDRA_LOG_INFO << "restored " << pci << " (of the unrecorded claim " << uid << ") from "
                  << current->driver << " to its default driver";
  }
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.device_info_dir, ec)) {
    auto info = readFile(entry.path().string());
    auto doc = info.ok() ? json::parse(*info) : Result<json::Document>(info.status());
    if (!doc.ok()) continue;
    const json::Value* address = json::at(*doc, {"pci", "pci-address"});
    if (address != nullptr && address->IsString() && vfs.count(address->GetString()) != 0) {
      SDRA_RETURN_IF_ERROR(removeIfPresent(entry.path().string()));
    }
  }
  std::set<std::string> recorded_pods;
  for (const auto& [_, c] : local_.checkpoint().claims) recorded_pods.insert(c.pod_uid);
  auto specs = node::ourCdiSpecs(options_.cdi_root);
  if (!specs.ok()) return specs.status();
  for (const auto& spec : *specs) {
    if (spec.id == uid || recorded_pods.count(spec.id) != 0) continue;
    if (!spec.addresses.ok() || spec.addresses->empty()) continue;
    if (std::all_of(spec.addresses->begin(), spec.addresses->end(),
                    [&](const std::string& a) { return vfs.count(a) != 0; })) {
      SDRA_RETURN_IF_ERROR(removeIfPresent(spec.path));
    }
  }
  SDRA_RETURN_IF_ERROR(removeMetadata(uid, "", ""));
  SDRA_RETURN_IF_ERROR(removeIfPresent(spec_path));
  SDRA_LOG_WARN << "unprepared claim " << uid << ", which the checkpoint did not hold, from its "
                << "CDI spec on disk (" << join(*addresses, ", ") << ")";
  return Status::ok();
}

}  // namespace sriovdra::kubelet_plugin
