#pragma once
// What the SR-IOV CNI plugins read of a VF from sysfs, with upstream's messages (internal to
// controllers/node/cni): its PF's netdev and its index there, its own netdev, its driver, and a
// rebind (what makes a driver read new GUIDs). Every device address given here has been checked
// with host::isPciAddress first: the plugins run as root, and "../" would name another file.
#include <cstdint>
#include <string>

#include "base/status.h"
#include "host/sysfs.h"

namespace sriovdra::cni_plugin {

struct VfLocation {
  std::string pf;  // the PF's netdev
  int64_t index = 0;
};

class VfSysfs {
 public:
  explicit VfSysfs(host::Sysfs& fs) : fs_(fs) {}
  // The first netdev of the VF's PF (physfn/net) and the VF's place among its virtfnN links;
  // upstream's messages ("PF network device not found", "unable to get VF ID ...").
  Result<VfLocation> locate(const std::string& vf) const;
  // The VF's netdev in the host's namespace, "" when it has none.
  std::string linkName(const std::string& vf) const;
  // kNotFound when no driver is bound.
  Result<std::string> driver(const std::string& device) const;
  bool isVf(const std::string& device) const;
  int64_t mtu(const std::string& netdev) const;
  // The IPoIB GUID in the netdev's 20-byte address (its last 8 bytes), "" for another address.
  std::string ipoibGuid(const std::string& netdev) const;
  Status rebind(const std::string& vf);

 private:
  host::Sysfs& fs_;
};

}  // namespace sriovdra::cni_plugin
