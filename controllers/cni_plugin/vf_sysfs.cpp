#include "cni_plugin/vf_sysfs.h"

#include <cstdlib>

#include "cni/go_json.h"

namespace sriovdra::cni_plugin {

namespace {

// A sysfs attribute's number (0 when it is none).
int64_t number(const std::string& text) { return std::strtoll(text.c_str(), nullptr, 10); }

}  // namespace

bool isPciAddress(std::string_view d) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (d.size() != 12 || d[4] != ':' || d[7] != ':' || d[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!hex(d[i])) return false;
  }
  return d[8] <= '1' && d[11] >= '0' && d[11] <= '7';  // device 00-1f, function 0-7
}

bool userspaceDriver(std::string_view driver) {
  return driver == "vfio-pci" || driver == "uio_pci_generic" || driver == "igb_uio";
}

Result<std::string> VfSysfs::pfName(const std::string& vf) const {
  std::string dir = "sys/bus/pci/devices/" + vf + "/physfn/net";
  auto names = fs_.list(dir);
  if (!names.ok()) return fail("lstat /" + dir + ": no such file or directory");
  if (names->empty()) return fail("PF network device not found");
  return names->front();
}

Result<int64_t> VfSysfs::vfId(const std::string& vf, const std::string& pf) const {
  auto text = fs_.read("sys/class/net/" + pf + "/device/sriov_numvfs");
  if (!text.ok()) {
    return fail("failed to open the sriov_numfs of device " + cni::goQuote(pf) + ": " +
                text.status().message());
  }
  int64_t count = number(*text);
  for (int64_t i = 0; i < count; ++i) {
    auto link = fs_.readLink("sys/class/net/" + pf + "/device/virtfn" + std::to_string(i));
    if (link.ok() && host::baseName(*link) == vf) return i;
  }
  return fail("unable to get VF ID with PF: " + pf + " and VF pci address " + vf);
}

std::string VfSysfs::linkName(const std::string& vf) const {
  auto names = fs_.list("sys/bus/pci/devices/" + vf + "/net");
  return names.ok() && !names->empty() ? names->front() : std::string();
}

Result<std::string> VfSysfs::driver(const std::string& vf) const {
  auto link = fs_.readLink("sys/bus/pci/devices/" + vf + "/driver");
  if (!link.ok()) return link.status();
  return host::baseName(*link);
}

bool VfSysfs::isVf(const std::string& device) const {
  return fs_.exists("sys/bus/pci/devices/" + device + "/physfn");
}

int64_t VfSysfs::mtu(const std::string& netdev) const {
  return number(fs_.read("sys/class/net/" + netdev + "/mtu").valueOr("0"));
}

Status VfSysfs::rebind(host::Sysfs& writable, const std::string& vf) const {
  auto driver = this->driver(vf);
  if (!driver.ok())
    return fail("failed to find the driver of VF " + vf + ": " + driver.status().message());
  if (Status st = writable.write("sys/bus/pci/drivers/" + *driver + "/unbind", vf); !st.isOk()) {
    return fail("failed to unbind VF " + vf + " from " + *driver + ": " + st.message());
  }
  if (Status st = writable.write("sys/bus/pci/drivers/" + *driver + "/bind", vf); !st.isOk()) {
    return fail("failed to bind VF " + vf + " to " + *driver + ": " + st.message());
  }
  return Status::ok();
}

}  // namespace sriovdra::cni_plugin
