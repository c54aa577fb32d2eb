#include "kernel/vm.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "base/files.h"
#include "base/process.h"

namespace sriovdra::kernel_test {
namespace {

namespace fs = std::filesystem;

// The absolute paths of the shared objects `ldd` says the program loads (the dynamic loader
// among them).
Result<std::vector<std::string>> sharedObjects(const std::string& program) {
  auto ldd = runProcess({.argv = {"ldd", program}}, std::chrono::seconds(30));
  if (!ldd.ok()) return ldd.status();
  std::vector<std::string> out;
  // A static program (our CNI plugins) loads nothing.
  if (ldd->exit_code != 0 &&
      (ldd->out + ldd->err).find("not a dynamic executable") != std::string::npos) {
    return out;
  }
  if (ldd->exit_code != 0) return Status(Code::kInternal, "ldd " + program + ": " + ldd->err);
  std::istringstream lines(ldd->out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    for (std::string word; words >> word;) {
      if (word.starts_with('/')) {
        out.push_back(word);
        break;
      }
    }
  }
  return out;
}

// <work>/initramfs.cpio: the base archive, then one with /probe/run and its libraries.
Result<std::string> initramfs(const VmOptions& o) {
  std::string root = o.work_dir + "/probe-root";
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root + "/probe", ec);
  if (ec) return Status::fromErrno(ec.value(), "creating " + root);
  std::vector<std::string> files;
  std::vector<std::pair<std::string, std::string>> programs = {{o.probe, "probe/run"}};
  for (const auto& p : o.programs)
    programs.emplace_back(p, "probe/" + fs::path(p).filename().string());
  std::set<std::string> copied;
  for (const auto& [program, name] : programs) {
    fs::copy_file(program, fs::path(root) / name, ec);
    if (ec) return Status::fromErrno(ec.value(), "copying " + program);
    files.push_back(name);
    auto libs = sharedObjects(program);
    if (!libs.ok()) return libs.status();
    for (const auto& lib : *libs) {
      if (!copied.insert(lib).second) continue;
      fs::path target = root + lib;
      fs::create_directories(target.parent_path(), ec);
      fs::copy_file(lib, target, fs::copy_options::overwrite_existing, ec);
      if (ec) return Status::fromErrno(ec.value(), "copying " + lib);
      files.push_back(lib.substr(1));
    }
  }
  // Linux's unpacker creates no parent directories: each comes first as an entry of its own.
  std::set<std::string> dirs;
  for (const auto& f : files) {
    for (auto at = f.find('/'); at != std::string::npos; at = f.find('/', at + 1)) {
      dirs.insert(f.substr(0, at));
    }
  }
  std::string names;
  for (const auto& d : dirs) names += d + "\n";
  for (const auto& f : files) names += f + "\n";
  auto cpio =
      runProcess({.argv = {"cpio", "-o", "-H", "newc", "--quiet", "-D", root}, .stdin_data = names},
                 std::chrono::seconds(60), size_t{512} << 20);
  if (!cpio.ok()) return cpio.status();
  if (cpio->exit_code != 0) return Status(Code::kInternal, "cpio: " + cpio->err);
  auto base = readFile(o.kernel_vm_dir + "/base.cpio");
  if (!base.ok()) return base.status();
  std::string path = o.work_dir + "/initramfs.cpio";
  SDRA_RETURN_IF_ERROR(writeFileAtomic(path, *base + cpio->out));
  return path;
}

std::string serialLog(const VmOptions& o) { return o.work_dir + "/serial.log"; }

std::vector<std::string> qemuArgv(const VmOptions& o, const std::string& initrd) {
  std::vector<std::string> argv = {"qemu-system-x86_64",
                                   "-accel",
                                   "tcg",
                                   "-machine",
                                   "q35",
                                   "-m",
                                   "512",
                                   "-smp",
                                   "1",
                                   "-object",
                                   "memory-backend-ram,id=m0,size=256M",
                                   "-object",
                                   "memory-backend-ram,id=m1,size=256M",
                                   "-numa",
                                   "node,nodeid=0,memdev=m0,cpus=0",
                                   "-numa",
                                   "node,nodeid=1,memdev=m1",
                                   "-nodefaults",
                                   "-nographic",
                                   "-serial",
                                   "file:" + serialLog(o),
                                   "-no-reboot",
                                   "-device",
                                   "intel-iommu,intremap=off"};
  int chassis = 1;
  for (const auto& nic : o.nics) {
    std::string n = std::to_string(chassis++);
    std::string bus = "pcie.0";
    if (nic.expander_bus != 0) {
      bus = "pxb" + n;
      std::string pxb = "pxb-pcie,id=" + bus;
      pxb.append(",bus=pcie.0,bus_nr=").append(std::to_string(nic.expander_bus));
      pxb.append(",numa_node=").append(std::to_string(nic.numa_node));
      argv.insert(argv.end(), {"-device", pxb});
    }
    std::string port = "pcie-root-port,id=rp" + n;
    port.append(",bus=").append(bus).append(",chassis=").append(n).append(",slot=").append(n);
    // A port of a hub of its own as the NIC's backend: the PF gets a link (igb takes VF rate
    // limits only with one) and the guest still reaches nothing.
    std::string backend = "hubport,id=net";
    backend.append(n).append(",hubid=").append(n);
    std::string device = "igb,bus=rp";
    device.append(n).append(",netdev=net").append(n);
    argv.insert(argv.end(), {"-netdev", backend, "-device", port, "-device", device});
  }
  argv.insert(argv.end(), {"-kernel", o.kernel_vm_dir + "/vmlinux", "-initrd", initrd, "-append",
                           "console=ttyS0 intel_iommu=on iommu=pt pci=realloc panic=-1 quiet"});
  return argv;
}

}  // namespace

Result<std::string> bootVm(const VmOptions& options) {
  auto initrd = initramfs(options);
  if (!initrd.ok()) return initrd.status();
  auto run = runProcess({.argv = qemuArgv(options, *initrd)}, options.timeout, size_t{16} << 20);
  auto serial = readFile(serialLog(options));
  std::string printed =
      serial.ok() ? *serial : "(no serial log: " + serial.status().message() + ")";
  if (!run.ok()) {
    return Status(run.status().code(), run.status().message() + "; the guest printed:\n" + printed);
  }
  if (run->exit_code != 0) {
    return Status(Code::kInternal, "qemu exited with " + std::to_string(run->exit_code) + ": " +
                                       run->err + "\nthe guest printed:\n" + printed);
  }
  return printed;
}

}  // namespace sriovdra::kernel_test
