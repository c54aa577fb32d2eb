#include "host/sysfs.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"

namespace sriovdra::host {

std::string joinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out(a);
  if (out.back() != '/') out += '/';
  out.append(b.front() == '/' ? b.substr(1) : b);
  return out;
}

std::string baseName(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

bool isEntryName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

RealSysfs::RealSysfs(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

namespace {

// A path below the root, without the '/' it may start with.
std::string_view belowRoot(std::string_view path) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);  // front() of "" is undefined
  return path;
}

}  // namespace

// root + "/" + path, NUL-terminated on the stack: discovery makes three readlink calls per VF, and
// building each path in a heap string cost about as much as the system call itself.
class RealSysfs::Path {
 public:
  // Only the bytes up to the NUL are written: zeroing 4 KiB per call would cost what it saves.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init)
  Path(const std::string& root, std::string_view path) {
    path = belowRoot(path);
    size_ = root.size() + 1 + path.size();
    if (size_ >= buf_.size()) return;
    auto* end = std::copy(root.begin(), root.end(), buf_.begin());
    *end++ = '/';
    *std::copy(path.begin(), path.end(), end) = '\0';
  }
  // nullptr when the path is longer than PATH_MAX (a system call would fail with ENAMETOOLONG).
  const char* cString() const { return size_ < buf_.size() ? buf_.data() : nullptr; }

 private:
  std::array<char, PATH_MAX> buf_;
  size_t size_;
};

std::string RealSysfs::absolute(std::string_view path) const {
  return root_ + "/" + std::string(belowRoot(path));
}

Result<std::string> RealSysfs::read(std::string_view path) const {
  auto content = readFile(absolute(path), 1 << 20, ReadEnd::kShortRead);
  if (!content.ok()) return content.status();
  std::string s = std::move(*content);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Result<std::string> RealSysfs::readLink(std::string_view path) const {
  Path abs(root_, path);
  char buf[PATH_MAX];
  ssize_t n = abs.cString() != nullptr ? ::readlink(abs.cString(), buf, sizeof buf - 1) : -1;
  if (n < 0) {
    return Status::fromErrno(abs.cString() != nullptr ? errno : ENAMETOOLONG,
                             "readlink " + absolute(path));
  }
  return std::string(buf, static_cast<size_t>(n));
}

Result<std::string> RealSysfs::resolve(std::string_view path) const {
  std::string abs = absolute(path);
  char buf[PATH_MAX];
  if (::realpath(abs.c_str(), buf) == nullptr) return Status::fromErrno(errno, "resolving " + abs);
  std::string resolved(buf);
  std::string prefix = root_.empty() ? "" : root_;
  if (!prefix.empty()) {
    char rootbuf[PATH_MAX];
    if (::realpath(root_.c_str(), rootbuf) != nullptr) prefix = rootbuf;
    if (resolved.compare(0, prefix.size(), prefix) != 0) {
      return Status(Code::kInternal, abs + " resolves outside the sysfs root: " + resolved);
    }
    resolved = resolved.substr(prefix.size());
  }
  while (!resolved.empty() && resolved.front() == '/') resolved.erase(0, 1);
  return resolved;
}

// getdents64 instead of opendir/readdir: discovery lists two directories per VF, and this saves
// two of the five system calls each listing costs there (opendir's fstat, and the last, empty
// getdents64: the kernel fills the buffer while entries fit, so room for one more entry means
// the directory has ended).
Result<std::vector<std::string>> RealSysfs::list(std::string_view dir) const {
  std::string abs = absolute(dir);
  int fd = ::open(abs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::fromErrno(errno, "listing " + abs);
  // The names are gathered in one buffer and sorted as views, then copied out once in order:
  // sorting the strings themselves moved each about a dozen times (sys/bus/pci/devices holds
  // every VF, in hash order on a real sysfs).
  std::string names;
  std::vector<std::pair<size_t, size_t>> spans;  // offset and length in `names`
  alignas(dirent64) char buf[32768];
  constexpr size_t kLargestEntry = offsetof(dirent64, d_name) + NAME_MAX + 1 + alignof(dirent64);
  for (;;) {
    ssize_t n = ::getdents64(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return Status::fromErrno(err, "listing " + abs);
    }
    for (ssize_t off = 0; off < n;) {
      const auto* e = reinterpret_cast<const dirent64*>(buf + off);
      std::string_view name = e->d_name;
      if (name != "." && name != "..") {
        spans.emplace_back(names.size(), name.size());
        names.append(name);
      }
      off += e->d_reclen;
    }
    if (n == 0 || static_cast<size_t>(n) + kLargestEntry <= sizeof buf) break;
  }
  ::close(fd);
  std::vector<std::string_view> sorted;
  sorted.reserve(spans.size());
  for (auto [offset, length] : spans) sorted.emplace_back(names.data() + offset, length);
  std::sort(sorted.begin(), sorted.end());
  return std::vector<std::string>(sorted.begin(), sorted.end());
}

bool RealSysfs::exists(std::string_view path) const {
  Path abs(root_, path);
  struct stat st {};
  return abs.cString() != nullptr && ::stat(abs.cString(), &st) == 0;
}

Status RealSysfs::write(std::string_view path, std::string_view value) {
  std::string abs = absolute(path);
  int fd = ::open(abs.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::fromErrno(errno, "opening " + abs + " for writing");
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n < 0) return Status::fromErrno(err, "writing \"" + std::string(value) + "\" to " + abs);
  return Status::ok();
}

}  // namespace sriovdra::host
