#pragma once
// What the SR-IOV CNI plugins read of a VF from sysfs, with upstream's messages (internal to
// controllers/cni_plugin): its PF's netdev, its index on that PF, its own netdev, its driver.
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "host/sysfs.h"

namespace sriovdra::cni_plugin {

// A plugin error (CNI code 999) with upstream's text.
inline Status fail(const std::string& message) { return Status(Code::kInternal, message); }

// The drivers that leave a VF to userspace (DPDK): no netdev to move.
bool userspaceDriver(std::string_view driver);

// Whether `device` is a PCI address as sysfs names devices ("0000:3b:01.1": domain, bus, device
// and function in lower-case hex). Every deviceID is checked so before it reaches a path: the
// plugins run as root, and "../" in a deviceID would name another file.
bool isPciAddress(std::string_view device);

class VfSysfs {
 public:
  explicit VfSysfs(const host::Sysfs& fs) : fs_(fs) {}
  // The first netdev of the VF's PF ("PF network device not found").
  Result<std::string> pfName(const std::string& vf) const;
  // The VF's index among virtfn0 .. virtfn<sriov_numvfs - 1> of the PF.
  Result<int64_t> vfId(const std::string& vf, const std::string& pf) const;
  // The VF's netdev in the host's namespace, "" when it has none.
  std::string linkName(const std::string& vf) const;
  Result<std::string> driver(const std::string& vf) const;
  bool isVf(const std::string& device) const;
  int64_t mtu(const std::string& netdev) const;
  // Unbinds the VF from its driver and binds it again (what makes a driver read new GUIDs).
  Status rebind(host::Sysfs& writable, const std::string& vf) const;

 private:
  const host::Sysfs& fs_;
};

}  // namespace sriovdra::cni_plugin
