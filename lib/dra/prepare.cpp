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

namespace {

// One of the claim's results for our driver, in this node's pool, with its VF's PCI address.
struct OurResult {
  const api::DeviceRequestAllocationResult* result;
  std::string pci;
};

// The claim as a whole: allocated, reserved for exactly one pod.
Result<PreparedClaim> claimToPrepare(const api::ResourceClaim& claim, const std::string& who) {
  if (!claim.status.allocation) return refuse(who + " is not allocated");
  const auto& reserved = claim.status.reserved_for;
  if (reserved.size() != 1 || reserved[0].resource != "pods") {
    return refuse(who + " is reserved for " + std::to_string(reserved.size()) +
                  " consumer(s); a VF is prepared for exactly one pod");
  }
  return PreparedClaim{
      .uid = claim.metadata.uid,
      .namespace_ = claim.metadata.namespace_,
      .name = claim.metadata.name,
      .pod_uid = reserved[0].uid,
      .pod_name = reserved[0].name,
      .extended_resource = claim.metadata.annotation(kExtendedResourceClaimAnnotation) == "true"};
}

// Our results: each in this node's pool and a VF the node knows; otherwise every problem at once.
Result<std::vector<OurResult>> ourResults(const PrepareInput& in, const std::string& who) {
  std::vector<std::string> problems;
  std::vector<OurResult> ours;
  for (const auto& r : in.claim->status.allocation->results) {
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
    ours.push_back({&r, *pci});
  }
  if (!problems.empty()) return refuse(who + ": " + join(problems, "; "));
  return ours;
}

// A VfConfig's netAttachDefNamespace: empty or the claim's own.
Status checkNadNamespace(const PreparedDevice& d, const std::string& claim_ns,
                         const std::string& where) {
  const auto& nad_ns = d.config.net_attach_def_namespace;
  if (!nad_ns || nad_ns->empty() || *nad_ns == claim_ns) return Status();
  std::string message = where + ": VfConfig netAttachDefNamespace \"";
  message.append(*nad_ns)
      .append("\" is not the claim's namespace; a claim uses only the ")
      .append("NetworkAttachmentDefinitions of its own namespace (as the reference driver ")
      .append("does): create the NetworkAttachmentDefinition in ")
      .append(claim_ns)
      .append(" and drop netAttachDefNamespace");
  return refuse(message);
}

// The driver the device's config names: within its filter's drivers, then vfio-pci, its own
// kernel driver or one the administrator allows.
Status checkDriver(const PrepareInput& in, const std::string& who, const std::string& request,
                   PreparedDevice& d) {
  if (auto limit = in.device_drivers.find(d.device); limit != in.device_drivers.end()) {
    SDRA_RETURN_IF_ERROR(
        limitDriver(limit->second, who + ": request " + request + ": device " + d.device, d));
  }
  auto target = d.config.targetDriver();
  if (!target || target->empty() || *target == "vfio-pci" || in.allowed_drivers.count(*target) ||
      (!host::isUserspaceDriver(d.original_driver) && *target == d.original_driver)) {
    return Status();
  }
  std::string own = host::isUserspaceDriver(d.original_driver) || d.original_driver.empty()
                        ? std::string()
                        : ", " + d.original_driver + " (its own)";
  std::string message = who + ": device " + d.device + ": driver \"" + *target;
  message.append("\" is not allowed; a claim may ask for \"vfio-pci\", \"default\"")
      .append(own)
      .append(" or a driver the administrator allows with the agent's --allowed-vf-drivers");
  return refuse(message);
}

// Standalone mode: a VF that stays a network interface needs the NAD the agent attaches it with
// (an extended-resource claim's VF takes its network from the pod's annotation at attach).
Status checkAttachable(const PrepareInput& in, const PreparedClaim& pc, const std::string& where,
                       const PreparedDevice& d, const std::string& current_driver) {
  if (!in.attaches || !d.config.keepsNetdev(current_driver) || pc.extended_resource ||
      !d.config.net_attach_def_name.value_or("").empty()) {
    return Status();
  }
  std::string message = where + ": device " + d.device;
  message.append(" stays a network interface, but its VfConfig names no netAttachDefName: the ")
      .append("agent attaches a VF to a pod only through a NetworkAttachmentDefinition, so the ")
      .append("pod would start without it. Name one of namespace ")
      .append(pc.namespace_)
      .append(" in the claim's VfConfig, ask for driver \"vfio-pci\" to use the VF as a ")
      .append("device, or run the agent with --configuration-mode=multus");
  return refuse(message);
}

}  // namespace

// The checks in the order the reference driver makes them: the claim, our results, their
// configs, then each device (on the host, its network's namespace, its driver, its network).
Result<PreparePlan> planPrepare(const PrepareInput& in) {
  const api::ResourceClaim& claim = *in.claim;
  const std::string who = "ResourceClaim " + claim.metadata.namespace_ + "/" + claim.metadata.name;
  auto prepared = claimToPrepare(claim, who);
  if (!prepared.ok()) return prepared.status();
  PreparePlan plan{.claim = std::move(*prepared)};
  auto ours = ourResults(in, who);
  if (!ours.ok()) return ours.status();
  if (ours->empty()) return plan;
  auto configs = vfConfigsByRequest(*claim.status.allocation, in.driver);
  if (!configs.ok()) return refuse(who + ": " + configs.status().message());

  std::map<std::string, std::string> known_original;  // from an interrupted earlier attempt
  if (in.earlier != nullptr) {
    for (const auto& d : in.earlier->devices) known_original[d.pci_address] = d.original_driver;
  }
  for (const auto& [r, pci] : *ours) {
    auto access = in.host.find(pci);
    if (access == in.host.end() || !access->second.ok()) {
      std::string why = access == in.host.end() ? "not read" : access->second.status().message();
      std::string message = who + ": device " + r->device;
      message.append(" (").append(pci).append(") is not on the host: ").append(why);
      return refuse(message);
    }
    const std::string& current = access->second->driver;
    auto known = known_original.find(pci);
    PreparedDevice d{.request_names = {r->request},
                     .pool = r->pool,
                     .device = r->device,
                     .pci_address = pci,
                     .config = configs->at(r->request),
                     .original_driver = known != known_original.end() ? known->second : current,
                     .resource_name = api::stringAttribute(in.devices.at(r->device), in.driver,
                                                           api::attr::kCniResourceName)
                                          .value_or("")};
    const std::string where = who + ": request " + r->request;
    SDRA_RETURN_IF_ERROR(checkNadNamespace(d, claim.metadata.namespace_, where));
    if (in.vhost_net_vfs.count(pci) != 0 && !d.config.add_vhost_mount) {
      d.config.add_vhost_mount = true;  // unless the claim says otherwise
    }
    SDRA_RETURN_IF_ERROR(checkDriver(in, who, r->request, d));
    PlannedVf vf{.rebind_to = std::nullopt, .device = in.devices.at(r->device)};
    if (auto target = d.config.targetDriver(); target && needsRebind(*target, current)) {
      vf.rebind_to = *target;
    } else if (!target && known != known_original.end() && host::isUserspaceDriver(known->second) &&
               current != known->second) {
      // Prepared before on the user-space driver it was left on (its vfio-pci VF group), and on
      // another since (a reboot made the VF again on its kernel driver; the agent rebinds no
      // prepared VF): back to it, as the pod's CDI devices name it.
      vf.rebind_to = known->second;
    }
    SDRA_RETURN_IF_ERROR(
        checkAttachable(in, plan.claim, where, d, vf.rebind_to ? *vf.rebind_to : current));
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
  out.plugin_info = devicePluginInfo(*cdi, current.rdma_device);
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
