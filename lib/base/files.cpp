#include "base/files.h"

#include <cerrno>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sriovdra {

Result<std::string> readFile(const std::string& path, size_t max_bytes, ReadEnd end) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::fromErrno(errno, "reading " + path);
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return Status::fromErrno(err, "reading " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return Status(Code::kInvalidArgument,
                    path + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
    if (end == ReadEnd::kShortRead && static_cast<size_t>(n) < sizeof buf) break;
  }
  ::close(fd);
  return out;
}

Status writeFileAtomic(const std::string& path, std::string_view content, int mode) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string tmp = path + ".tmp-" + std::to_string(std::random_device{}());
  // Unnamed until it is complete (O_TMPFILE), so that a process killed while it writes leaves
  // nothing behind; named from the start where the filesystem cannot do that.
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
  const bool unnamed = fd >= 0;
  if (!unnamed) fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return Status::fromErrno(errno, "creating " + tmp);
  auto fail = [&](int err, const std::string& what) {
    ::close(fd);
    if (!unnamed) ::unlink(tmp.c_str());
    return Status::fromErrno(err, what + " " + tmp);
  };
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno, "writing");
    }
    off += static_cast<size_t>(n);
  }
  // The mode open() was given is cut by the umask: the file gets `mode` itself.
  if (::fchmod(fd, static_cast<mode_t>(mode)) != 0 || ::fsync(fd) != 0)
    return fail(errno, "writing");
  if (unnamed) {
    std::string self = "/proc/self/fd/" + std::to_string(fd);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW) != 0) {
      return fail(errno, "naming");
    }
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Status::fromErrno(err, "writing " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Status::fromErrno(err, "renaming " + tmp + " to " + path);
  }
  // The rename is durable only once the directory is: without this, a power loss can bring back
  // the old file (or none) although the call succeeded.
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Status::fromErrno(errno, "opening " + dir + " to sync it");
  int dir_rc = ::fsync(dir_fd);
  int dir_err = errno;
  ::close(dir_fd);
  if (dir_rc != 0) return Status::fromErrno(dir_err, "syncing " + dir);
  return Status::ok();
}

}  // namespace sriovdra
