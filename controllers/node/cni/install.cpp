#include "node/cni/install.h"

#include <algorithm>
#include <filesystem>

#include "base/files.h"

namespace sriovdra::cni_plugin {
namespace fs = std::filesystem;

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
    SDRA_RETURN_IF_ERROR(writeFileAtomic(target, *content, 0755));
    out.push_back(name + ": installed " +
                  target.append(" (").append(std::to_string(content->size())).append(" bytes)"));
  }
  return out;
}

}  // namespace sriovdra::cni_plugin
