// SimulatedKernel: netdevs moved into other network namespaces and back (simulated_kernel.h).
#include <filesystem>

#include "base/files.h"
#include "host/simulated_kernel.h"

namespace sriovdra::host {

namespace fs = std::filesystem;

Status SimulatedKernel::moveToNetns(std::string_view netdev, std::string_view ns) {
  std::lock_guard lock(mu_);
  std::string name(netdev);
  std::string what = "ip link set " + name + " netns " + std::string(ns);
  auto net = fs_.resolve("sys/class/net/" + name);
  if (!isEntryName(netdev) || !isEntryName(ns) || !net.ok()) {
    Status st = Status::fromErrno(ENODEV, "no network interface " + name);
    journal(what, st);
    return st;
  }
  std::string stash = "simulated/netns/" + std::string(ns) + "/" + name;
  std::string device = fs::path(*net).parent_path().parent_path().string();
  Status st = tree_.mkdirs(fs::path(stash).parent_path().string());
  std::error_code ec;
  if (st.isOk()) fs::rename(tree_.abs(*net), tree_.abs(stash), ec);
  if (st.isOk() && ec) st = Status::fromErrno(ec.value(), "moving " + name);
  if (st.isOk()) st = tree_.file(stash + ".device", device);
  if (st.isOk()) st = tree_.remove("sys/class/net/" + name);
  journal(what, st);
  return st;
}

Status SimulatedKernel::returnFromNetns(std::string_view ns, std::string_view netdev) {
  std::lock_guard lock(mu_);
  std::string name(netdev);
  std::string what = "ip -n " + std::string(ns) + " link set " + name + " netns 1";
  std::string stash = "simulated/netns/" + std::string(ns) + "/" + name;
  auto device = fs_.read(stash + ".device");
  Status st;
  if (!isEntryName(netdev) || !isEntryName(ns) || !device.ok() || !fs_.exists(stash)) {
    st = Status::fromErrno(ENODEV, "no network interface " + name + " in " + std::string(ns));
  } else if (fs_.exists("sys/class/net/" + name)) {
    st = Status::fromErrno(EEXIST, name + " exists in the host's namespace");
  } else {
    std::string net = *device + "/net/" + name;
    st = tree_.mkdirs(*device + "/net");
    std::error_code ec;
    if (st.isOk()) fs::rename(tree_.abs(stash), tree_.abs(net), ec);
    if (st.isOk() && ec) st = Status::fromErrno(ec.value(), "moving " + name + " back");
    if (st.isOk()) st = tree_.link("sys/class/net/" + name, net);
    if (st.isOk()) st = tree_.remove(stash + ".device");
  }
  journal(what, st);
  return st;
}

Status SimulatedKernel::destroyMovedNetdevs(const std::string& dev_dir) {
  auto namespaces = fs_.list("simulated/netns");
  if (!namespaces.ok()) return Status::ok();
  for (const auto& ns : *namespaces) {
    auto entries = fs_.list("simulated/netns/" + ns);
    if (!entries.ok()) continue;
    for (const auto& e : *entries) {
      if (!e.ends_with(".device")) continue;
      std::string stash = "simulated/netns/" + ns + "/" + e.substr(0, e.size() - 7);
      if (fs_.read(stash + ".device").valueOr("") != dev_dir) continue;
      SDRA_RETURN_IF_ERROR(tree_.remove(stash));
      SDRA_RETURN_IF_ERROR(tree_.remove(stash + ".device"));
    }
  }
  return Status::ok();
}

}  // namespace sriovdra::host
