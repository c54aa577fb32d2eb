#include "support/temp_dir.h"

#include <filesystem>
#include <stdexcept>

#include <stdlib.h>

#include "base/files.h"

namespace sriovdra::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "sriov-dra-test-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

std::string TempDir::write(const std::string& relative, const std::string& content) const {
  std::string p = path_ + "/" + relative;
  std::filesystem::create_directories(std::filesystem::path(p).parent_path());
  Status st = writeFileAtomic(p, content);
  if (!st.isOk()) throw std::runtime_error(st.toString());
  return p;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace sriovdra::testing
