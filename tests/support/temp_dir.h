#pragma once
// A temporary directory removed at the end of the scope.
#include <string>

namespace sriovdra::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // Writes `content` to <path>/<relative> (directories made as needed); returns that path.
  std::string write(const std::string& relative, const std::string& content) const;

 private:
  std::string path_;
};

}  // namespace sriovdra::testing
