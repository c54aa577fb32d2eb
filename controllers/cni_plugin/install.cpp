#include "cni_plugin/install.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"

namespace sriovdra::cni_plugin {
namespace {

namespace fs = std::filesystem;

// `content` as `path`, executable: through a temporary file beside it and a rename.
Status replaceExecutable(const std::string& path, const std::string& content) {
  std::string dir = fs::path(path).parent_path().string();
  std::string temp =
      dir + "/." + fs::path(path).filename().string() + ".sriov-dra-" + std::to_string(::getpid());
  // Never through a link someone left at the name: a new file, or nothing.
  ::unlink(temp.c_str());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
  if (fd < 0) return Status::fromErrno(errno, "creating " + temp);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      return Status::fromErrno(e, "writing " + temp);
    }
    done += static_cast<size_t>(n);
  }
  // The mode asked for at open() is cut by the umask: say it again.
  if (::fchmod(fd, 0755) != 0 || ::fsync(fd) != 0) {
    int e = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return Status::fromErrno(e, "finishing " + temp);
  }
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(temp.c_str());
    return Status::fromErrno(e, "renaming " + temp + " to " + path);
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<std::string>> installPlugins(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (!fs::is_directory(to, ec)) {
    return Status(Code::kNotFound, "the CNI bin directory " + to +
                                       " does not exist (mount the node's CNI bin directory "
                                       "there)");
  }
  std::vector<fs::path> plugins;
  for (const auto& e : fs::directory_iterator(from, ec)) {
    if (e.is_regular_file()) plugins.push_back(e.path());
  }
  if (ec) return Status::fromErrno(ec.value(), "listing the plugins in " + from);
  if (plugins.empty()) return Status(Code::kNotFound, "no CNI plugins in " + from);
  std::sort(plugins.begin(), plugins.end());
  std::vector<std::string> out;
  for (const auto& p : plugins) {
    std::string name = p.filename().string();
    auto content = readFile(p.string(), size_t{256} << 20);
    if (!content.ok()) return content.status();
    std::string target = (fs::path(to) / name).string();
    auto installed = readFile(target, size_t{256} << 20);
    if (installed.ok() && *installed == *content) {
      out.push_back(name + ": " + target.append(" is up to date"));
      continue;
    }
    SDRA_RETURN_IF_ERROR(replaceExecutable(target, *content));
    out.push_back(name + ": installed " +
                  target.append(" (").append(std::to_string(content->size())).append(" bytes)"));
  }
  return out;
}

}  // namespace sriovdra::cni_plugin
