// What the kernel (or a broken driver) puts in sysfs, as discovery parses it: a fixture tree
// whose attribute files and links answer with fuzzed bytes, in the order discovery reads them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "host/sysfs.h"

using namespace sriovdra;

namespace {

// The real tree for the layout; each read or readlink takes the next length-prefixed chunk of
// the input while it lasts.
class FuzzedSysfs final : public host::Sysfs {
 public:
  FuzzedSysfs(const host::Sysfs& real, std::string_view input) : real_(real), input_(input) {}

  Result<std::string> read(std::string_view path) const override {
    if (auto chunk = next()) return *chunk;
    return real_.read(path);
  }
  Result<std::string> readLink(std::string_view path) const override {
    if (auto chunk = next()) return *chunk;
    return real_.readLink(path);
  }
  Result<std::string> resolve(std::string_view path) const override { return real_.resolve(path); }
  Result<std::vector<std::string>> list(std::string_view dir) const override {
    return real_.list(dir);
  }
  bool exists(std::string_view path) const override { return real_.exists(path); }
  Status write(std::string_view, std::string_view) override {
    return Status(Code::kIo, "read-only");
  }
  const std::string& root() const override { return real_.root(); }

 private:
  std::optional<std::string> next() const {
    if (input_.empty()) return std::nullopt;
    size_t n = std::min<size_t>(static_cast<uint8_t>(input_[0]), input_.size() - 1);
    std::string chunk(input_.substr(1, n));
    input_.remove_prefix(n + 1);
    return chunk;
  }

  const host::Sysfs& real_;
  mutable std::string_view input_;
};

const host::RealSysfs& fixture() {
  static const host::RealSysfs* sysfs = [] {
    char dir[] = "/tmp/sysfs-fuzz-XXXXXX";
    if (::mkdtemp(dir) == nullptr) std::abort();
    std::string root = std::string(dir) + "/tree";
    if (!host::writeFixture("a100-reference", root).isOk()) std::abort();
    // VFs too, so their attributes are read (and fuzzed) as well.
    host::SimulatedKernel kernel(root);
    for (const char* pf : {"0000:0e:00.0", "0000:11:00.0"}) {
      if (!kernel.write(std::string("sys/bus/pci/devices/") + pf + "/sriov_numvfs", "2").isOk()) {
        std::abort();
      }
    }
    return new host::RealSysfs(root);
  }();
  return *sysfs;
}

}  // namespace

// The libFuzzer entry point: its name is fixed by libFuzzer.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const uint8_t* data, size_t size) {
  FuzzedSysfs fs(fixture(), {reinterpret_cast<const char*>(data), size});
  static host::SimulatedKernel netlink(fixture().root());
  (void)host::discover(fs, netlink);
  return 0;
}
