#include "dra/prepare.h"

#include <algorithm>

#include "api/attributes.h"
#include "api/names.h"
#include "base/strings.h"
#include "dra/network_selection.h"
#include "host/pci.h"

namespace sriovdra::dra {
namespace {

Status refuse(const std::string& what) { return Status(Code::kInvalidArgument, what); }

std::string withoutSlashes(std::string s) {
  for (auto& c : s) c = c == '/' ? '-' : c;
  return s;
}

// A resource filter's drivers applied to a device's config: a config that names no driver gets
// the first; one that names a driver not listed is refused. "default" and the name of the VF's
// kernel driver are one driver.
Status limitDriver(const std::vector<std::string>& drivers, const std::string& who,
                   PreparedDevice& d) {
  if (drivers.empty()) return Status();
  auto target = d.config.targetDriver();
  if (!target) {
    d.config.driver = drivers.front();
    return Status();
  }
  std::string kernel = host::isUserspaceDriver(d.original_driver) ? "" : d.original_driver;
  auto isKernel = [&](const std::string& name) {
    return name == "default" || (!kernel.empty() && name == kernel);
  };
  std::string asked = target->empty() ? "default" : *target;
  if (std::find(drivers.begin(), drivers.end(), asked) != drivers.end() ||
      (isKernel(asked) && std::any_of(drivers.begin(), drivers.end(), isKernel))) {
    return Status();
  }
  std::string message = who + " is for drivers [" + join(drivers, ", ");
  message.append("] (the drivers of the SriovResourcePolicy filter that advertises it), not \"")
      .append(asked)
      .append("\": name one of those in the claim's VfConfig, or none for \"")
      .append(drivers.front())
      .append("\"");
  return refuse(message);
}

}  // namespace

bool needsRebind(const std::string& target, const std::string& current) {
  if (target.empty()) return current.empty() || host::isUserspaceDriver(current);
  return target != current;
}

std::vector<std::string> addressesToRead(const api::ResourceClaim& claim, const std::string& driver,
                                         const std::map<std::string, api::SliceDevice>& devices) {
  std::vector<std::string> out;
  if (!claim.status.allocation) return out;
  for (const auto& r : claim.status.allocation->results) {
    if (r.driver != driver) continue;
    auto it = devices.find(r.device);
    if (it == devices.end()) continue;
    if (auto pci = api::stringAttribute(it->second, driver, api::attr::kPciAddress))
      out.push_back(*pci);
  }
  return out;
}

// Long on purpose: the checks of one claim in the order the reference driver makes them (the
// claim, then each of our results, then their configs), each with its own message, then the plan
// that follows from them; split up, the order of the refusals would be hard to see.
Result<PreparePlan> planPrepare(const PrepareInput& in) {
  const api::ResourceClaim& claim = *in.claim;
  const std::string who = "ResourceClaim " + claim.metadata.namespace_ + "/" + claim.metadata.name;
  if (!claim.status.allocation) return refuse(who + " is not allocated");
  const auto& reserved = claim.status.reserved_for;
  if (reserved.size() != 1 || reserved[0].resource != "pods") {
    return refuse(who + " is reserved for " + std::to_string(reserved.size()) +
                  " consumer(s); a VF is prepared for exactly one pod");
  }
  PreparePlan plan;
  plan.claim = {
      .uid = claim.metadata.uid,
      .namespace_ = claim.metadata.namespace_,
      .name = claim.metadata.name,
      .pod_uid = reserved[0].uid,
      .extended_resource = claim.metadata.annotation(kExtendedResourceClaimAnnotation) == "true"};
  std::vector<std::string> problems;
  std::vector<std::pair<const api::DeviceRequestAllocationResult*, std::string>> ours;
  for (const auto& r : claim.status.allocation->results) {
    if (r.driver != in.driver) continue;
    if (r.pool != in.node) {
      problems.push_back("device " + r.device + " is in pool " + r.pool +
                         ", another node's (this is " + in.node + ")");
      continue;
    }
    auto known = in.devices.find(r.device);
    auto pci = known == in.devices.end()
                   ? std::nullopt
                   : api::stringAttribute(known->second, in.driver, api::attr::kPciAddress);
    if (!pci) {
      problems.push_back("device " + r.device + " is not a VF of node " + in.node +
                         " (neither advertised nor discovered there)");
      continue;
    }
    ours.emplace_back(&r, *pci);
  }
  if (!problems.empty()) return refuse(who + ": " + join(problems, "; "));
  if (ours.empty()) return plan;
  auto configs = vfConfigsByRequest(*claim.status.allocation, in.driver);
  if (!configs.ok()) return refuse(who + ": " + configs.status().message());

  std::map<std::string, std::string> known_original;  // from an interrupted earlier attempt
  if (in.earlier != nullptr) {
    for (const auto& d : in.earlier->devices) known_original[d.pci_address] = d.original_driver;
  }
  for (const auto& [r, pci] : ours) {
    auto access = in.host.find(pci);
    if (access == in.host.end() || !access->second.ok()) {
      std::string why = access == in.host.end() ? "not read" : access->second.status().message();
      std::string message = who + ": device " + r->device;
      message.append(" (").append(pci).append(") is not on the host: ").append(why);
      return refuse(message);
    }
    auto known = known_original.find(pci);
    PreparedDevice d{
        .request_names = {r->request},
        .pool = r->pool,
        .device = r->device,
        .pci_address = pci,
        .config = configs->at(r->request),
        .original_driver = known != known_original.end() ? known->second : access->second->driver,
        .resource_name =
            api::stringAttribute(in.devices.at(r->device), in.driver, api::attr::kCniResourceName)
                .value_or("")};
    if (const auto& nad_ns = d.config.net_attach_def_namespace;
        nad_ns && !nad_ns->empty() && *nad_ns != claim.metadata.namespace_) {
      std::string message = who + ": request " + r->request + ": VfConfig netAttachDefNamespace \"";
      message.append(*nad_ns)
          .append("\" is not the claim's namespace; a claim uses only the ")
          .append("NetworkAttachmentDefinitions of its own namespace (as the reference driver ")
          .append("does): create the NetworkAttachmentDefinition in ")
          .append(claim.metadata.namespace_)
          .append(" and drop netAttachDefNamespace");
      return refuse(message);
    }
    if (in.vhost_net_vfs.count(pci) != 0 && !d.config.add_vhost_mount) {
      d.config.add_vhost_mount = true;
    }
    PlannedVf vf{.rebind_to = std::nullopt, .device = in.devices.at(r->device)};
    if (auto limit = in.device_drivers.find(r->device); limit != in.device_drivers.end()) {
      SDRA_RETURN_IF_ERROR(
          limitDriver(limit->second, who + ": request " + r->request + ": device " + r->device, d));
    }
    auto target = d.config.targetDriver();
    if (target && !target->empty() && *target != "vfio-pci" &&
        in.allowed_drivers.count(*target) == 0 &&
        (host::isUserspaceDriver(d.original_driver) || *target != d.original_driver)) {
      std::string own = host::isUserspaceDriver(d.original_driver) || d.original_driver.empty()
                            ? std::string()
                            : ", " + d.original_driver + " (its own)";
      std::string message = who + ": device " + r->device + ": driver \"" + *target;
      message.append("\" is not allowed; a claim may ask for \"vfio-pci\", \"default\"")
          .append(own)
          .append(" or a driver the administrator allows with the agent's --allowed-vf-drivers");
      return refuse(message);
    }
    bool kernel_driver = d.config.keepsNetdev(access->second->driver);
    // An extended-resource claim's VF takes its network from the pod's annotation at attach.
    if (in.attaches && kernel_driver && !plan.claim.extended_resource &&
        d.config.net_attach_def_name.value_or("").empty()) {
      std::string message = who + ": request " + r->request + ": device " + r->device;
      message.append(" stays a network interface, but its VfConfig names no netAttachDefName: the ")
          .append(
              "agent attaches a VF to a pod only through a NetworkAttachmentDefinition, so the ")
          .append("pod would start without it. Name one of namespace ")
          .append(claim.metadata.namespace_)
          .append(" in the claim's VfConfig, ask for driver \"vfio-pci\" to use the VF as a ")
          .append("device, or run the agent with --configuration-mode=multus");
      return refuse(message);
    }
    if (target && needsRebind(*target, access->second->driver)) vf.rebind_to = *target;
    plan.claim.devices.push_back(std::move(d));
    plan.vfs.push_back(std::move(vf));
  }
  return plan;
}

Result<DeviceArtifacts> deviceArtifacts(const PreparedClaim& claim, const PreparedDevice& d,
                                        const host::VfAccess& current,
                                        const api::SliceDevice& attributes,
                                        const std::string& driver,
                                        const std::string& device_info_dir) {
  DeviceArtifacts out;
  std::string cdi_name = claim.uid + "-" + d.device;
  auto cdi =
      vfCdiDevice(cdi_name, {d.device, d.pci_address, d.config, current,
                             api::boolAttribute(attributes, driver, api::attr::kRdmaCapable)});
  if (!cdi.ok()) {
    return refuse("ResourceClaim " + claim.namespace_ + "/" + claim.name + ": " +
                  cdi.status().message());
  }
  out.cdi = std::move(*cdi);
  out.cdi_device_ids = {cdiQualifiedName(cdi_name), cdiQualifiedName(claim.pod_uid)};
  auto resource = api::stringAttribute(attributes, driver, api::attr::kCniResourceName);
  auto device_id = api::stringAttribute(attributes, driver, api::attr::kCniDeviceId);
  if (!device_info_dir.empty() && resource && device_id) {
    json::Document info(rapidjson::kObjectType);
    api::Writer w(info, info.GetAllocator());
    w.strAlways("type", "pci").strAlways("version", "1.1.0");
    w.object("pci").strAlways("pci-address", d.pci_address).str("rdma-device", current.rdma_device);
    out.device_info_path = device_info_dir + "/" + withoutSlashes(*resource) + "-" +
                           withoutSlashes(*device_id) + "-device.json";
    out.device_info_json = json::dump(info);
  }
  return out;
}

}  // namespace sriovdra::dra
