#include "dra/cdi.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "api/codec.h"
#include "base/strings.h"

namespace sriovdra::dra {
namespace {

std::string envKey(std::string_view device_name) {
  std::string d(device_name);
  std::replace(d.begin(), d.end(), '-', '_');
  return d;
}

}  // namespace

Result<CdiDevice> vfCdiDevice(std::string cdi_name, const VfEditsInput& in) {
  CdiDevice d;
  d.name = std::move(cdi_name);
  const std::string key = envKey(in.device_name);
  const std::string prefix = "SRIOVNETWORK_" + key;
  d.env.push_back("SRIOVNETWORK_VF_DEVICE_" + key + "=" + in.pci_address);
  if (in.config.net_attach_def_name && !in.config.net_attach_def_name->empty()) {
    d.env.push_back("SRIOVNETWORK_NET_ATTACH_DEF_NAME=" + *in.config.net_attach_def_name);
  }
  const host::VfAccess& a = in.access;
  if (a.driver == "vfio-pci") {
    if (a.iommu_group.empty()) {
      return Status(Code::kInternal,
                    in.pci_address + " is bound to vfio-pci but has no IOMMU group");
    }
    std::string node = "/dev/vfio/" + a.iommu_group;
    d.device_nodes.push_back({node, a.noiommu ? "/dev/vfio/noiommu-" + a.iommu_group : ""});
    d.device_nodes.push_back({"/dev/vfio/vfio", ""});
    d.env.push_back(prefix + "_VFIO_DEVICE=" + node);
  } else if (in.rdma_capable) {
    if (a.rdma_device.empty() || a.uverbs.empty()) {
      return Status(Code::kUnavailable,
                    in.pci_address + " is RDMA capable but has no RDMA device on driver " +
                        (a.driver.empty() ? "(none)" : a.driver) + " (is mlx5_ib loaded?)");
    }
    struct Node {
      const std::string& name;
      const char* suffix;
    };
    for (const Node& n :
         {Node{a.uverbs, "_RDMA_UVERB"}, Node{a.umad, "_RDMA_UMAD"}, Node{a.issm, "_RDMA_ISSM"}}) {
      if (n.name.empty()) continue;
      d.device_nodes.push_back({"/dev/infiniband/" + n.name, ""});
      d.env.push_back(prefix + n.suffix + "=/dev/infiniband/" + n.name);
    }
    d.device_nodes.push_back({"/dev/infiniband/rdma_cm", ""});
    d.env.push_back(prefix + "_RDMA_CM=/dev/infiniband/rdma_cm");
    d.env.push_back(prefix + "_RDMA_DEVICE=" + a.rdma_device);
  }
  if (in.config.add_vhost_mount.value_or(false)) {
    d.device_nodes.push_back({"/dev/vhost-net", ""});
    d.device_nodes.push_back({"/dev/net/tun", ""});
  }
  return d;
}

namespace {

// The device plugin's variable for <prefix>/<name> (upper case, '.' and '/' as '_'), or "" for a
// name that is not one: only the characters of a DNS prefix and a device-plugin resource name,
// one '/' (a DeviceAttributes may set the attribute to anything).
std::string pciDeviceVariable(std::string_view resource) {
  if (std::count(resource.begin(), resource.end(), '/') != 1) return "";
  bool valid = std::all_of(resource.begin(), resource.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' ||
           c == '/';
  });
  if (!valid) return "";
  std::string key = "PCIDEVICE_" + asciiUpper(resource);
  std::replace_if(
      key.begin(), key.end(), [](char c) { return c == '.' || c == '/'; }, '_');
  return key;
}

}  // namespace

PluginInfo devicePluginInfo(const CdiDevice& vf, const std::string& rdma_device) {
  PluginInfo info;
  for (const auto& node : vf.device_nodes) {
    const std::string& path = node.path;
    if (path.rfind("/dev/infiniband/", 0) == 0) {
      for (const char* kind : {"uverbs", "umad", "issm", "rdma_cm"}) {
        if (path.find(kind) != std::string::npos) info["rdma"][kind] = path;
      }
    } else if (path == "/dev/vfio/vfio") {
      info["vfio"]["mount"] = path;
    } else if (path.rfind("/dev/vfio/", 0) == 0) {
      info["vfio"]["dev-mount"] = path;
    } else if (path == "/dev/vhost-net") {
      info["vhost"]["net-mount"] = path;
    } else if (path == "/dev/net/tun") {
      info["vhost"]["tun-mount"] = path;
    }
  }
  if (info.count("rdma") != 0 && !rdma_device.empty()) info["rdma"]["rdma_dev"] = rdma_device;
  return info;
}

CdiDevice podCdiDevice(std::string pod_uid, const std::vector<PodVf>& vfs) {
  std::vector<std::string> all;
  std::map<std::string, std::vector<const PodVf*>> by_resource;
  for (const auto& vf : vfs) {
    all.push_back(vf.pci_address);
    if (!vf.resource_name.empty()) by_resource[vf.resource_name].push_back(&vf);
  }
  CdiDevice d{std::move(pod_uid), {"SRIOVNETWORK_PCI_ADDRESSES=" + join(all, ",")}, {}};
  std::set<std::string> named;  // a name two resources map to goes to the first, in name order
  for (const auto& [resource, resource_vfs] : by_resource) {
    std::string key = pciDeviceVariable(resource);
    if (key.empty() || named.count(key) != 0 || named.count(key + "_INFO") != 0) continue;
    named.insert(key);
    named.insert(key + "_INFO");
    json::Document info(rapidjson::kObjectType);
    auto& a = info.GetAllocator();
    std::vector<std::string> addresses;
    for (const PodVf* vf : resource_vfs) {
      addresses.push_back(vf->pci_address);
      PluginInfo parts = vf->plugin_info;
      parts["generic"]["deviceID"] = vf->pci_address;
      json::Value entry(rapidjson::kObjectType);
      for (const auto& [provider, values] : parts) {
        json::Value part(rapidjson::kObjectType);
        for (const auto& [name, value] : values) json::setString(part, name, value, a);
        json::set(entry, provider, std::move(part), a);
      }
      json::set(info, vf->pci_address, std::move(entry), a);
    }
    d.env.push_back(key + "=" + join(addresses, ","));
    d.env.push_back(key + "_INFO=" + json::dump(info));
  }
  return d;
}

std::string cdiQualifiedName(std::string_view device) {
  return std::string(kCdiVendor) + "/" + std::string(kCdiClass) + "=" + std::string(device);
}

json::Document cdiSpec(const std::vector<CdiDevice>& devices, const std::string& kind) {
  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  api::Writer w(doc, a);
  w.strAlways("cdiVersion", std::string(kCdiVersion))
      .strAlways("kind",
                 kind.empty() ? std::string(kCdiVendor) + "/" + std::string(kCdiClass) : kind);
  json::Value list(rapidjson::kArrayType);
  for (const auto& d : devices) {
    json::Value dev(rapidjson::kObjectType);
    api::Writer dw(dev, a);
    dw.strAlways("name", d.name);
    api::Writer edits = dw.object("containerEdits");
    edits.strings("env", d.env);
    edits.nonEmpty("deviceNodes",
                   api::encodeList(d.device_nodes, a, [](const auto& n, api::Writer o) {
                     o.strAlways("path", n.path).str("hostPath", n.host_path);
                   }));
    edits.nonEmpty("mounts", api::encodeList(d.mounts, a, [](const auto& m, api::Writer o) {
                     o.strAlways("hostPath", m.host_path)
                         .strAlways("containerPath", m.container_path)
                         .strings("options", m.options);
                   }));
    list.PushBack(dev, a);
  }
  w.value("devices", std::move(list));
  return doc;
}

std::string cdiSpecFileName(std::string_view id) {
  return std::string(kCdiVendor) + "-" + std::string(kCdiClass) + "_" + std::string(id) + ".json";
}

std::string cdiSpecId(std::string_view file_name) {
  const std::string empty = cdiSpecFileName("");
  const size_t stem = empty.size() - std::string_view(".json").size();
  if (file_name.size() <= empty.size() || file_name.substr(0, stem) != empty.substr(0, stem) ||
      file_name.substr(file_name.size() - 5) != ".json") {
    return "";
  }
  return std::string(file_name.substr(stem, file_name.size() - empty.size()));
}

}  // namespace sriovdra::dra
