#pragma once
// Every access to the kernel's sysfs goes through Sysfs. Paths are relative to a root
// ("sys/bus/pci/devices/0000:0e:00.0/vendor"), so a tree copied from a real server, a fixture,
// or the machine's own / (root "/") all work the same way.
// RealSysfs reads and writes files under its root. SimulatedKernel (simulated_kernel.h) wraps
// it and reacts to writes the way Linux does. Errors keep errno (EBUSY, ERANGE, ...).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sriovdra::host {

class Sysfs {
 public:
  virtual ~Sysfs() = default;
  // File content with the trailing newline removed.
  virtual Result<std::string> read(std::string_view path) const = 0;
  // The target of a symbolic link, as stored.
  virtual Result<std::string> readLink(std::string_view path) const = 0;
  // The path with every symbolic link resolved, relative to the root.
  virtual Result<std::string> resolve(std::string_view path) const = 0;
  // Entry names of a directory, sorted.
  virtual Result<std::vector<std::string>> list(std::string_view dir) const = 0;
  virtual bool exists(std::string_view path) const = 0;
  virtual Status write(std::string_view path, std::string_view value) = 0;
  virtual const std::string& root() const = 0;
};

class RealSysfs : public Sysfs {
 public:
  explicit RealSysfs(std::string root);
  Result<std::string> read(std::string_view path) const override;
  Result<std::string> readLink(std::string_view path) const override;
  Result<std::string> resolve(std::string_view path) const override;
  Result<std::vector<std::string>> list(std::string_view dir) const override;
  bool exists(std::string_view path) const override;
  Status write(std::string_view path, std::string_view value) override;
  const std::string& root() const override { return root_; }
  std::string absolute(std::string_view path) const;

 private:
  class Path;
  std::string root_;  // without a trailing '/'; "" for /
};

// Joins path pieces with '/'.
std::string joinPath(std::string_view a, std::string_view b);
// The last path component.
std::string baseName(std::string_view path);
// Whether `name` is one entry of a directory: not empty, not "." or "..", no '/' (a name that
// came from elsewhere can then be joined to a path without leaving its directory).
bool isEntryName(std::string_view name);

}  // namespace sriovdra::host
