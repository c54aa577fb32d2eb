#include "host/netns.h"

#include <cerrno>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace sriovdra::host {

Result<NetNamespace> NetNamespace::current() {
  int fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::fromErrno(errno, "opening this thread's network namespace");
  return NetNamespace(fd);
}

Result<NetNamespace> NetNamespace::open(const std::string& path) {
  // Non-blocking: a FIFO left at the path (the path may come from a file) must not hang us.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) {
      return Status(Code::kNotFound, "network namespace " + path + " does not exist").withErrno(e);
    }
    return Status::fromErrno(e, "opening network namespace " + path);
  }
  NetNamespace ns(fd);
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0 || fs.f_type != NSFS_MAGIC) {
    return Status(Code::kInvalidArgument, path + " is not a network namespace");
  }
  return ns;
}

Result<NetNamespace> NetNamespace::createTemporary() {
  Result<NetNamespace> out = Status(Code::kInternal, "not created");
  // unshare() on a thread of its own: the namespace lives on in the descriptor opened there.
  std::thread([&] {
    if (::unshare(CLONE_NEWNET) != 0) {
      out = Status::fromErrno(errno, "creating a network namespace (unshare CLONE_NEWNET)");
      return;
    }
    out = current();
  }).join();
  return out;
}

NetNamespace::NetNamespace(NetNamespace&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

NetNamespace& NetNamespace::operator=(NetNamespace&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

NetNamespace::~NetNamespace() {
  if (fd_ >= 0) ::close(fd_);
}

bool NetNamespace::sameAs(const NetNamespace& other) const {
  struct stat a {
  }, b{};
  return ::fstat(fd_, &a) == 0 && ::fstat(other.fd_, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

Status NetNamespace::run(const std::function<Status()>& fn) const {
  Status out;
  std::thread([&] {
    if (::setns(fd_, CLONE_NEWNET) != 0) {
      out = Status::fromErrno(errno, "entering a network namespace (setns)");
      return;
    }
    out = fn();
  }).join();
  return out;
}

}  // namespace sriovdra::host
