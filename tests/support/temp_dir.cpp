#include "support/temp_dir.h"

#include <filesystem>
#include <stdexcept>

#include <stdlib.h>

namespace sriovdra::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "sriov-dra-test-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace sriovdra::testing
