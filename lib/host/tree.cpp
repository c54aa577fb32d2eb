#include "host/tree.h"

#include <filesystem>
#include <vector>

#include "base/files.h"

namespace sriovdra::host {
namespace fs = std::filesystem;

Tree::Tree(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string Tree::abs(std::string_view rel) const {
  return root_ + "/" + std::string(rel.front() == '/' ? rel.substr(1) : rel);
}

Status Tree::mkdirs(std::string_view rel) const {
  std::error_code ec;
  fs::create_directories(abs(rel), ec);
  if (ec) return Status(Code::kIo, "creating " + abs(rel) + ": " + ec.message());
  return Status::ok();
}

Status Tree::file(std::string_view rel, std::string_view value) const {
  SDRA_RETURN_IF_ERROR(mkdirs(fs::path(std::string(rel)).parent_path().string()));
  return writeFileAtomic(abs(rel), std::string(value) + "\n", 0644);
}

std::string relativeLink(std::string_view link_rel, std::string_view target_rel) {
  fs::path from = fs::path(std::string(link_rel)).parent_path();
  return fs::path(std::string(target_rel)).lexically_relative(from).string();
}

Status Tree::link(std::string_view rel, std::string_view target_rel) const {
  SDRA_RETURN_IF_ERROR(mkdirs(fs::path(std::string(rel)).parent_path().string()));
  std::error_code ec;
  fs::remove(abs(rel), ec);
  fs::create_symlink(relativeLink(rel, target_rel), abs(rel), ec);
  if (ec) return Status(Code::kIo, "linking " + abs(rel) + ": " + ec.message());
  return Status::ok();
}

Status Tree::remove(std::string_view rel) const {
  std::error_code ec;
  fs::remove_all(abs(rel), ec);
  if (ec) return Status(Code::kIo, "removing " + abs(rel) + ": " + ec.message());
  return Status::ok();
}

namespace {

// Class directory and device subdirectory of each RDMA node kind.
struct RdmaNode {
  const char* cls;
  const char* subdir;
  const char* prefix;
};
constexpr RdmaNode kRdmaNodes[] = {{"infiniband_verbs", "infiniband_verbs", "uverbs"},
                                   {"infiniband_mad", "infiniband_mad", "umad"},
                                   {"infiniband_mad", "infiniband_mad", "issm"}};

}  // namespace

Status addRdmaDevice(const Tree& tree, const std::string& dev_dir, int index) {
  std::string rdma = "mlx5_" + std::to_string(index);
  SDRA_RETURN_IF_ERROR(tree.mkdirs(dev_dir + "/infiniband/" + rdma));
  SDRA_RETURN_IF_ERROR(tree.link("sys/class/infiniband/" + rdma, dev_dir + "/infiniband/" + rdma));
  for (const auto& n : kRdmaNodes) {
    std::string name = n.prefix + std::to_string(index);
    std::string dir = dev_dir + "/" + n.subdir + "/" + name;
    SDRA_RETURN_IF_ERROR(tree.file(dir + "/ibdev", rdma));
    SDRA_RETURN_IF_ERROR(tree.link(std::string("sys/class/") + n.cls + "/" + name, dir));
  }
  return Status::ok();
}

Status removeRdmaDevice(const Tree& tree, const std::string& dev_dir) {
  std::error_code ec;
  for (const char* sub : {"infiniband", "infiniband_verbs", "infiniband_mad"}) {
    std::string dir = dev_dir + "/" + sub;
    for (const auto& e : fs::directory_iterator(tree.abs(dir), ec)) {
      SDRA_RETURN_IF_ERROR(
          tree.remove(std::string("sys/class/") + sub + "/" + e.path().filename().string()));
    }
    SDRA_RETURN_IF_ERROR(tree.remove(dir));
  }
  return Status::ok();
}

}  // namespace sriovdra::host
