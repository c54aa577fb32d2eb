#include "node/cni/vf_sysfs.h"

#include <cstdlib>

#include "cni/go_json.h"
#include "node/cni/plugin_host.h"

namespace sriovdra::cni_plugin {
namespace {

// A sysfs attribute's number (0 when it is none).
int64_t number(const std::string& text) { return std::strtoll(text.c_str(), nullptr, 10); }

}  // namespace

Result<VfLocation> VfSysfs::locate(const std::string& vf) const {
  std::string dir = "sys/bus/pci/devices/" + vf + "/physfn/net";
  auto names = fs_.list(dir);
  if (!names.ok()) return fail("lstat /" + dir + ": no such file or directory");
  if (names->empty()) return fail("PF network device not found");
  const std::string& pf = names->front();
  auto count = fs_.read("sys/class/net/" + pf + "/device/sriov_numvfs");
  if (!count.ok()) {
    return fail("failed to open the sriov_numfs of device " + cni::goQuote(pf) + ": " +
                count.status().message());
  }
  for (int64_t i = 0; i < number(*count); ++i) {
    auto link = fs_.readLink("sys/class/net/" + pf + "/device/virtfn" + std::to_string(i));
    if (link.ok() && host::baseName(*link) == vf) return VfLocation{pf, i};
  }
  return fail("unable to get VF ID with PF: " + pf + " and VF pci address " + vf);
}

std::string VfSysfs::linkName(const std::string& vf) const {
  auto names = fs_.list("sys/bus/pci/devices/" + vf + "/net");
  return names.ok() && !names->empty() ? names->front() : std::string();
}

Result<std::string> VfSysfs::driver(const std::string& device) const {
  auto link = fs_.readLink("sys/bus/pci/devices/" + device + "/driver");
  if (!link.ok()) return link.status();
  return host::baseName(*link);
}

bool VfSysfs::isVf(const std::string& device) const {
  return fs_.exists("sys/bus/pci/devices/" + device + "/physfn");
}

int64_t VfSysfs::mtu(const std::string& netdev) const {
  return number(fs_.read("sys/class/net/" + netdev + "/mtu").valueOr("0"));
}

std::string VfSysfs::ipoibGuid(const std::string& netdev) const {
  std::string address = fs_.read("sys/class/net/" + netdev + "/address").valueOr("");
  return address.size() == 59 ? address.substr(36) : "";
}

Status VfSysfs::rebind(const std::string& vf) {
  auto bound = driver(vf);
  if (!bound.ok()) {
    return fail("failed to find the driver of VF " + vf + ": " + bound.status().message());
  }
  if (Status st = fs_.write("sys/bus/pci/drivers/" + *bound + "/unbind", vf); !st.isOk()) {
    return fail("failed to unbind VF " + vf + " from " + *bound + ": " + st.message());
  }
  if (Status st = fs_.write("sys/bus/pci/drivers/" + *bound + "/bind", vf); !st.isOk()) {
    return fail("failed to bind VF " + vf + " to " + *bound + ": " + st.message());
  }
  return Status::ok();
}

}  // namespace sriovdra::cni_plugin
