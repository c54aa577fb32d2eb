#pragma once
// Editing a sysfs-shaped tree on disk: directories, attribute files and relative symlinks, as
// the fixture builder and the simulated kernel need them. Paths are relative to the root.
#include <string>
#include <string_view>

#include "base/status.h"

namespace sriovdra::host {

class Tree {
 public:
  explicit Tree(std::string root);
  const std::string& root() const { return root_; }
  std::string abs(std::string_view rel) const;

  Status mkdirs(std::string_view rel) const;
  // Writes "value\n" (attribute files end with a newline), creating parent directories.
  Status file(std::string_view rel, std::string_view value) const;
  // A symlink at `rel` pointing at `target_rel` (both relative to the root), stored relative
  // to the link's directory like the kernel does ("../../../devices/pci0000:00/...").
  Status link(std::string_view rel, std::string_view target_rel) const;
  Status remove(std::string_view rel) const;  // file, link or whole directory

 private:
  std::string root_;
};

// The RDMA device mlx5_ib creates below the PCI function at dev_dir, numbered `index`:
// infiniband/mlx5_<index> and its character devices infiniband_verbs/uverbs<index> and
// infiniband_mad/umad<index> + issm<index> (each with an ibdev attribute), linked from
// sys/class/{infiniband,infiniband_verbs,infiniband_mad}.
Status addRdmaDevice(const Tree& tree, const std::string& dev_dir, int index);
// Removes what addRdmaDevice created below dev_dir (no-op when there is none).
Status removeRdmaDevice(const Tree& tree, const std::string& dev_dir);

// "../../a/b" for a link in "x/y/z" pointing at "x/a/b" (both relative to the same root).
std::string relativeLink(std::string_view link_rel, std::string_view target_rel);

}  // namespace sriovdra::host
