// SimulatedKernel: the RDMA subsystem's network namespace mode and RDMA devices moved between
// namespaces (simulated_kernel.h).
#include <cerrno>
#include <filesystem>

#include <sys/stat.h>

#include "base/strings.h"
#include "host/rdma_mode.h"
#include "host/simulated_kernel.h"

namespace sriovdra::host {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModeFile = "simulated/rdma/netns_mode";
constexpr const char* kRecords = "simulated/rdma/netns/";
constexpr const char* kInitialFile = "simulated/rdma/initial_netns";

// A network namespace as its nsfs file names it: "<device>:<inode>".
std::string identity(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

Result<std::string> namespaceAt(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0) return Status::fromErrno(errno, std::string("stat ") + path);
  return identity(st);
}

}  // namespace

std::string SimulatedKernel::stateOr(const std::string& path, const std::string& otherwise) const {
  auto text = fs_.read(path);
  return text.ok() ? std::string(trimSpace(*text)) : otherwise;
}

Status SimulatedKernel::loadIbCoreOptions() {
  std::vector<std::pair<std::string, std::string>> files;
  auto names = fs_.list(kModprobeDir);
  for (const auto& name : names.ok() ? *names : std::vector<std::string>{}) {
    if (name.ends_with(".conf")) {
      files.emplace_back(name, fs_.read(std::string(kModprobeDir) + "/" + name).valueOr(""));
    }
  }
  auto set = netnsModeAtBoot(std::move(files), fs_.read(kCmdlinePath).valueOr(""));
  // Every namespace's devices are the initial one's again after a boot.
  SDRA_RETURN_IF_ERROR(tree_.remove(kRecords));
  return tree_.file(kModeFile, set && set->first == "0" ? "exclusive" : "shared");
}

Result<std::string> SimulatedKernel::netnsMode() const {
  std::lock_guard lock(mu_);
  return stateOr(kModeFile, "shared");
}

Status SimulatedKernel::setRdmaNetnsMode(std::string_view mode) {
  std::lock_guard lock(mu_);
  auto caller = namespaceAt("/proc/thread-self/ns/net");
  Status st = mode == "shared" || mode == "exclusive"
                  ? caller.status()
                  : Status::fromErrno(EINVAL, "RDMA namespace mode " + std::string(mode));
  if (st.isOk()) st = tree_.mkdirs("simulated/rdma");
  if (st.isOk() && !fs_.exists(kInitialFile)) st = tree_.file(kInitialFile, *caller);
  if (st.isOk()) st = tree_.file(kModeFile, std::string(mode));
  journal("rdma system set netns " + std::string(mode), st);
  return st;
}

Status SimulatedKernel::moveDevice(std::string_view device, const NetNamespace& target) {
  std::lock_guard lock(mu_);
  std::string name(device);
  std::string what = "rdma dev set " + name + " netns ";
  struct stat target_st {};
  if (::fstat(target.fd(), &target_st) != 0) {
    Status st = Status::fromErrno(EBADF, "the target namespace's descriptor");
    journal(what + "?", st);
    return st;
  }
  std::string to = identity(target_st);
  what += to;
  std::string initial = stateOr(kInitialFile, "");
  auto caller = namespaceAt("/proc/thread-self/ns/net");
  // sys/class/infiniband/DEV is <PCI function>/infiniband/DEV.
  auto at = fs_.resolve("sys/class/infiniband/" + name);
  std::string function = at.ok() ? fs::path(*at).parent_path().parent_path().string() : "";
  Status st;
  const bool exclusive = stateOr(kModeFile, "shared") == "exclusive";
  if (!caller.ok()) {
    st = caller.status();
  } else if (!isEntryName(device) || !at.ok() ||
             (exclusive && stateOr(kRecords + name, initial) != *caller)) {
    st = Status::fromErrno(ENODEV, "no RDMA device " + name + " in this namespace");
  } else if (!exclusive) {
    st = Status::fromErrno(EOPNOTSUPP, "RDMA devices move only in exclusive namespace mode");
  } else if (auto driver = fs_.readLink(function + "/driver");
             !driver.ok() || baseName(*driver) != "mlx5_core") {
    st = Status::fromErrno(EOPNOTSUPP, name + "'s driver cannot move it between namespaces");
  } else if (to == initial) {
    st = tree_.remove(kRecords + name);
  } else {
    st = tree_.mkdirs(kRecords);
    if (st.isOk()) st = tree_.file(kRecords + name, to);
  }
  journal(what, st);
  return st;
}

Status SimulatedKernel::forgetRdmaNamespaces(const std::string& dev_dir) {
  auto names = fs_.list(dev_dir + "/infiniband");
  if (!names.ok()) return Status::ok();
  for (const auto& name : *names) SDRA_RETURN_IF_ERROR(tree_.remove(kRecords + name));
  return Status::ok();
}

}  // namespace sriovdra::host
