#include "dra/attach.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "api/codec.h"
#include "cni/config.h"

namespace sriovdra::dra {
namespace {

constexpr int kRecordVersion = 1;

const char* stateName(AttachedInterface::State s) {
  return s == AttachedInterface::State::kAttached ? "Attached" : "Adding";
}

}  // namespace

std::string interfacePrefixProblem(const std::string& prefix) {
  constexpr size_t kIfNameMax = 15;  // IFNAMSIZ - 1
  if (prefix.empty()) return "the interface name prefix is empty";
  if (prefix.size() + 3 > kIfNameMax) {
    return "\"" + prefix +
           "\" is too long: with up to three digits an interface name has at most " +
           std::to_string(kIfNameMax) + " characters";
  }
  for (char c : prefix) {
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)) ||
        !std::isprint(static_cast<unsigned char>(c))) {
      return "\"" + prefix + "\" has a character interface names cannot have";
    }
  }
  return "";
}

std::vector<Attachment> attachmentsFor(const Checkpoint& checkpoint, const std::string& pod_uid,
                                       const std::string& interface_prefix) {
  std::vector<const PreparedClaim*> claims;
  for (const auto& [uid, c] : checkpoint.claims) {
    if (c.pod_uid == pod_uid && c.state == PreparedClaim::State::kPrepared) claims.push_back(&c);
  }
  std::sort(claims.begin(), claims.end(), [](const auto* a, const auto* b) {
    return std::tie(a->namespace_, a->name) < std::tie(b->namespace_, b->name);
  });
  std::set<std::string> taken;
  for (const auto* c : claims) {
    for (const auto& d : c->devices) {
      if (d.config.if_name && !d.config.if_name->empty()) taken.insert(*d.config.if_name);
    }
  }
  std::vector<Attachment> out;
  int next = 0;
  for (const auto* c : claims) {
    for (const auto& d : c->devices) {
      const auto& nad = d.config.net_attach_def_name;
      if ((!nad || nad->empty()) && c->extended_resource) {
        Attachment a{c->uid, c->namespace_, c->name, d.pool, d.device, d.pci_address, "", ""};
        a.extended_resource = true;
        a.resource_name = d.resource_name;
        a.needs_network = d.config.keepsNetdev(d.original_driver);
        out.push_back(std::move(a));
        continue;
      }
      if (!nad || nad->empty()) continue;
      Attachment a{c->uid, c->namespace_, c->name, d.pool, d.device, d.pci_address, "", *nad};
      if (d.config.if_name && !d.config.if_name->empty()) {
        a.if_name = *d.config.if_name;
      } else {
        do {
          a.if_name = interface_prefix + std::to_string(next++);
        } while (taken.count(a.if_name) != 0);
      }
      out.push_back(std::move(a));
    }
  }
  return out;
}

std::vector<ResourceVf> waitingForNetworks(const std::vector<Attachment>& wanted) {
  std::vector<ResourceVf> out;
  for (const auto& a : wanted) {
    if (a.extended_resource) {
      out.push_back({a.claim_uid, a.device, a.resource_name, a.needs_network});
    }
  }
  return out;
}

Result<std::vector<Attachment>> withNetworks(std::vector<Attachment> wanted,
                                             const std::vector<AssignedNetwork>& assigned) {
  std::vector<Attachment> out;
  for (auto& a : wanted) {
    if (!a.extended_resource) {
      out.push_back(std::move(a));
      continue;
    }
    for (const auto& n : assigned) {
      if (n.vf.claim_uid != a.claim_uid || n.vf.device != a.device) continue;
      a.nad_name = n.network.name;
      a.if_name = n.if_name;
      a.network = n.network;
      out.push_back(std::move(a));
      break;
    }
  }
  auto who = [](const Attachment& a) {
    return a.network ? "network " + a.network->namespace_ + "/" + a.network->name +
                           " of the pod's " + kNetworksAnnotation
                     : "the VfConfig of ResourceClaim " + a.claim_namespace + "/" + a.claim_name;
  };
  std::map<std::string, const Attachment*> named;
  for (const auto& a : out) {
    auto [it, fresh] = named.emplace(a.if_name, &a);
    if (!fresh) {
      return Status(Code::kInvalidArgument, "interface " + a.if_name + " is named twice: by " +
                                                who(*it->second) + " and by " + who(a));
    }
  }
  return out;
}

SyncPlan planSync(const std::vector<std::string>& recorded, const std::vector<std::string>& running,
                  const std::set<std::string>& newer) {
  SyncPlan plan;
  std::set<std::string> has(running.begin(), running.end());
  for (const auto& sandbox : recorded) {
    if (has.count(sandbox) == 0 && newer.count(sandbox) == 0) plan.detach.push_back(sandbox);
  }
  for (const auto& sandbox : running) {
    if (newer.count(sandbox) == 0) plan.attach.push_back(sandbox);
  }
  return plan;
}

std::string AttachRecord::encode() const {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  api::Writer w(doc, a);
  w.i64("version", kRecordVersion)
      .strAlways("sandbox", sandbox)
      .strAlways("podUID", pod_uid)
      .strAlways("podNamespace", pod_namespace)
      .strAlways("podName", pod_name)
      .strAlways("netns", netns);
  json::Value list(rapidjson::kArrayType);
  for (const auto& i : interfaces) {
    json::Value v(rapidjson::kObjectType);
    api::Writer(v, a)
        .strAlways("claimUID", i.claim_uid)
        .strAlways("pool", i.pool)
        .strAlways("device", i.device)
        .strAlways("pciAddress", i.pci_address)
        .strAlways("ifName", i.if_name)
        .strAlways("state", stateName(i.state))
        .strAlways("cniConfig", i.cni_config)
        .strAlways("cniResult", i.cni_result)
        .str("network", i.network);
    list.PushBack(v, a);
  }
  w.value("interfaces", std::move(list));
  return json::dump(doc);
}

Result<AttachRecord> AttachRecord::decode(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc.ok()) return Status(Code::kInvalidArgument, "attach record: " + doc.status().message());
  api::Reader r(&*doc, "");
  if (r.i64("version") != kRecordVersion) {
    return Status(Code::kInvalidArgument,
                  "attach record: unknown version " + std::to_string(r.i64("version")));
  }
  AttachRecord rec{r.str("sandbox"), r.str("podUID"), r.str("podNamespace"),
                   r.str("podName"), r.str("netns"),  {}};
  for (const auto& i : r.array("interfaces")) {
    std::string state = i.str("state");
    if (state != "Adding" && state != "Attached") {
      return Status(Code::kInvalidArgument, "attach record: unknown state \"" + state + "\"");
    }
    rec.interfaces.push_back({i.str("claimUID"), i.str("pool"), i.str("device"),
                              i.str("pciAddress"), i.str("ifName"),
                              state == "Attached" ? AttachedInterface::State::kAttached
                                                  : AttachedInterface::State::kAdding,
                              i.str("cniConfig"), i.str("cniResult"), i.str("network")});
  }
  if (!r.status().isOk()) return r.status();
  if (rec.sandbox.empty()) return Status(Code::kInvalidArgument, "attach record: no sandbox");
  return rec;
}

const AttachedInterface* AttachRecord::find(const std::string& claim_uid,
                                            const std::string& device) const {
  for (const auto& i : interfaces) {
    if (i.claim_uid == claim_uid && i.device == device) return &i;
  }
  return nullptr;
}

std::string networkStatus(const AttachRecord& record) {
  json::Document doc(rapidjson::kArrayType);
  auto& a = doc.GetAllocator();
  for (const auto& i : record.interfaces) {
    if (i.state != AttachedInterface::State::kAttached || i.network.empty()) continue;
    auto net = cni::networkDataOf(i.cni_result, i.if_name);
    if (!net.ok()) continue;
    std::vector<std::string> ips;
    for (const auto& cidr : net->ips) ips.push_back(cidr.substr(0, cidr.find('/')));
    json::Value v(rapidjson::kObjectType);
    api::Writer w(v, a);
    w.strAlways("name", i.network)
        .strAlways("interface", net->interface_name)
        .strings("ips", ips)
        .str("mac", net->hardware_address);
    // The result's DNS as the plugin gave it (Multus copies it), else empty.
    auto result = json::parse(i.cni_result);
    const json::Value* dns = result.ok() ? json::objectMember(*result, "dns") : nullptr;
    json::set(v, "dns", dns != nullptr ? json::Value(*dns, a) : json::Value(rapidjson::kObjectType),
              a);
    w.object("device-info")
        .strAlways("type", "pci")
        .strAlways("version", "1.1.0")
        .object("pci")
        .strAlways("pci-address", i.pci_address);
    doc.PushBack(v, a);
  }
  return doc.Empty() ? "" : json::dump(doc);
}

std::vector<api::AllocatedDeviceStatus> deviceStatuses(
    const PreparedClaim& claim, const std::string& driver,
    const std::vector<AttachedInterface>& attached) {
  std::vector<api::AllocatedDeviceStatus> out;
  for (const auto& d : claim.devices) {
    api::AllocatedDeviceStatus s{.driver = driver, .pool = d.pool, .device = d.device};
    json::Document data(rapidjson::kObjectType);
    auto& a = data.GetAllocator();
    d.config.encode(api::Writer(data, a).object("vfConfig"));
    if (d.config.if_name)
      s.network_data = api::NetworkDeviceData{.interface_name = *d.config.if_name};
    auto it = std::find_if(attached.begin(), attached.end(), [&](const AttachedInterface& i) {
      return i.claim_uid == claim.uid && i.device == d.device &&
             i.state == AttachedInterface::State::kAttached;
    });
    if (it != attached.end()) {
      auto config = json::parse(it->cni_config);
      auto result = json::parse(it->cni_result);
      if (config.ok()) json::set(data, "cniConfig", json::Value(*config, a), a);
      if (result.ok()) json::set(data, "cniResult", json::Value(*result, a), a);
      auto net = cni::networkDataOf(it->cni_result, it->if_name);
      if (net.ok()) {
        s.network_data =
            api::NetworkDeviceData{net->interface_name, net->ips, net->hardware_address};
      }
    }
    s.data_json = json::dump(data);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace sriovdra::dra
