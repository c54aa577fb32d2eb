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

// "../../a/b" for a link in "x/y/z" pointing at "x/a/b" (both relative to the same root).
std::string relativeLink(std::string_view link_rel, std::string_view target_rel);

}  // namespace sriovdra::host
