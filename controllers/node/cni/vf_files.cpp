#include "node/cni/vf_files.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/files.h"
#include "host/netns.h"

namespace sriovdra::cni_plugin {
namespace {

namespace fs = std::filesystem;

Status makeDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return Status::fromErrno(ec.value(),
                             "failed to create the sriov data directory(\"" + dir + "\")");
  }
  fs::permissions(dir, fs::perms::owner_all, ec);
  return Status::ok();
}

std::string parentOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

}  // namespace

HeldLock::HeldLock(HeldLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

HeldLock::~HeldLock() {
  if (fd_ >= 0) ::close(fd_);
}

Result<HeldLock> lockFile(const std::string& path, std::chrono::milliseconds timeout) {
  SDRA_RETURN_IF_ERROR(makeDir(parentOf(path)));
  int fd = ::open(path.c_str(), O_CREAT | O_RDONLY | O_CLOEXEC, 0600);
  if (fd < 0) return Status::fromErrno(errno, "failed to open PCI file [" + path + "] for locking");
  HeldLock held(fd);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return Status::fromErrno(errno, "failed to flock PCI file [" + path + "]");
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status(Code::kTimeout,
                    "time out while waiting to acquire exclusive lock on [" + path + "]");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return held;
}

std::string VfFiles::cachePath(std::string_view container_id, std::string_view if_name) const {
  return dir_ + "/" + std::string(container_id) + "-" + std::string(if_name);
}

Result<HeldLock> VfFiles::lock(std::string_view pci_address,
                               std::chrono::milliseconds timeout) const {
  return lockFile(dir_ + "/pci/vf_lock/" + std::string(pci_address) + ".lock", timeout);
}

Result<bool> VfFiles::allocated(std::string_view pci_address) const {
  std::string path = dir_ + "/pci/" + std::string(pci_address);
  auto netns = readFile(path, 4096);
  if (!netns.ok()) {
    if (netns.status().code() == Code::kNotFound) return false;
    return Status(netns.status().code(), "failed to read for pci address file for " + path + ": " +
                                             netns.status().message());
  }
  if (host::NetNamespace::open(*netns).ok()) return true;
  // The pod that held it is gone without a DEL: the VF is free again.
  SDRA_RETURN_IF_ERROR(deleteAllocation(pci_address));
  return false;
}

std::string VfFiles::holder(std::string_view pci_address) const {
  return readFile(dir_ + "/pci/" + std::string(pci_address), 4096).valueOr("");
}

Status VfFiles::saveAllocation(std::string_view pci_address, std::string_view netns) const {
  SDRA_RETURN_IF_ERROR(makeDir(dir_ + "/pci"));
  return writeFileAtomic(dir_ + "/pci/" + std::string(pci_address), netns, 0600);
}

Status VfFiles::deleteAllocation(std::string_view pci_address) const {
  std::string path = dir_ + "/pci/" + std::string(pci_address);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::fromErrno(errno, "error removing PCI address lock file " + path);
  }
  return Status::ok();
}

Status VfFiles::saveCache(std::string_view container_id, std::string_view if_name,
                          std::string_view content) const {
  SDRA_RETURN_IF_ERROR(makeDir(dir_));
  return writeFileAtomic(cachePath(container_id, if_name), content, 0600);
}

Result<std::string> VfFiles::readCache(std::string_view container_id,
                                       std::string_view if_name) const {
  return readFile(cachePath(container_id, if_name), 1u << 20);
}

std::vector<std::string> VfFiles::cacheNames() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.is_regular_file(ec)) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status VfFiles::removeCache(std::string_view container_id, std::string_view if_name) const {
  std::string path = cachePath(container_id, if_name);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::fromErrno(errno, "error removing NetConf file " + path);
  }
  return Status::ok();
}

}  // namespace sriovdra::cni_plugin
