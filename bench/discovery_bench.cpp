// Discovery on a node with 16 PFs x 256 VFs (4,096 VFs), through the simulated kernel's tree.
// Floor: the sysfs calls one discovery makes (recorded through the Sysfs seam), replayed as bare
// system calls on the same tree: what reading those files costs on this machine whatever the code
// around them; floor and ours run in turns. Netdevs come from one rtnetlink dump: the simulated
// kernel answers it by reading files, so its answer is captured once and handed to each run
// before its clock starts, and as root the bench makes as many netdevs (veth pairs) in a network
// namespace of its own and times this kernel's real dump of them, which both sides then include.
// Also the cost of building the node's slices.
// Usage: discovery_bench [runs=20]
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/names.h"
#include "base/files.h"
#include "base/process.h"
#include "dra/slices.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "support/figures.h"
#include "support/floor.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;

namespace {

enum class Call { kRead, kReadLink, kResolve, kList, kExists };
const char* callName(Call c) {
  switch (c) {
    case Call::kRead:
      return "read";
    case Call::kReadLink:
      return "readlink";
    case Call::kResolve:
      return "resolve";
    case Call::kList:
      return "list";
    case Call::kExists:
      return "exists";
  }
  return "?";
}

// A Sysfs that records every call it passes on.
class RecordingSysfs : public host::Sysfs {
 public:
  explicit RecordingSysfs(host::Sysfs& inner) : inner_(inner) {}
  Result<std::string> read(std::string_view p) const override {
    note(Call::kRead, p);
    return inner_.read(p);
  }
  Result<std::string> readLink(std::string_view p) const override {
    note(Call::kReadLink, p);
    return inner_.readLink(p);
  }
  Result<std::string> resolve(std::string_view p) const override {
    note(Call::kResolve, p);
    return inner_.resolve(p);
  }
  Result<std::vector<std::string>> list(std::string_view p) const override {
    note(Call::kList, p);
    return inner_.list(p);
  }
  bool exists(std::string_view p) const override {
    note(Call::kExists, p);
    return inner_.exists(p);
  }
  Status write(std::string_view p, std::string_view v) override { return inner_.write(p, v); }
  const std::string& root() const override { return inner_.root(); }
  std::vector<std::pair<Call, std::string>> calls;

 private:
  void note(Call c, std::string_view p) const {
    std::lock_guard lock(mu_);
    const_cast<RecordingSysfs*>(this)->calls.emplace_back(c, inner_.root() + "/" + std::string(p));
  }
  host::Sysfs& inner_;
  mutable std::mutex mu_;
};

// The recorded calls as bare system calls: open+read+close, readlink, realpath,
// open+getdents64+close, stat.
void replay(const std::vector<std::pair<Call, std::string>>& calls) {
  char buf[PATH_MAX];
  alignas(dirent64) char dents[32768];
  constexpr size_t kLargestEntry = offsetof(dirent64, d_name) + NAME_MAX + 1 + alignof(dirent64);
  for (const auto& [call, path] : calls) {
    switch (call) {
      case Call::kRead: {
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
          (void)!::read(fd, buf, sizeof buf);
          ::close(fd);
        }
        break;
      }
      case Call::kReadLink:
        (void)!::readlink(path.c_str(), buf, sizeof buf);
        break;
      case Call::kResolve:
        (void)!::realpath(path.c_str(), buf);
        break;
      case Call::kList: {
        int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
          // The whole directory (sys/bus/pci/devices holds every VF): batches until one has room
          // for another entry.
          ssize_t n = 0;
          do {
            n = ::getdents64(fd, dents, sizeof dents);
          } while (n > 0 && static_cast<size_t>(n) + kLargestEntry > sizeof dents);
          ::close(fd);
        }
        break;
      }
      case Call::kExists: {
        struct stat st {};
        (void)!::stat(path.c_str(), &st);
        break;
      }
    }
  }
}

// The simulated kernel's netlink answers, captured once and handed out again: its links() is
// the dump as the simulated kernel gave it, prepared by `arm()` before each timed run so that no
// run includes the simulated kernel reading its files (nor that reading's effect on the caches).
class CapturedNetlink : public host::Netlink {
 public:
  explicit CapturedNetlink(host::Netlink& inner) : inner_(inner) {
    auto start = Steady::now();
    auto links = inner_.links();
    simulated_seconds = std::chrono::duration<double>(Steady::now() - start).count();
    if (links.ok()) links_ = std::move(*links);
  }
  void arm() { next_ = links_; }
  size_t size() const { return links_.size(); }
  Result<std::vector<host::LinkInfo>> links() const override { return std::move(next_); }
  Result<std::string> eswitchMode(std::string_view pci) const override {
    return inner_.eswitchMode(pci);
  }
  Status setEswitchMode(std::string_view pci, std::string_view mode) override {
    return inner_.setEswitchMode(pci, mode);
  }
  Result<std::vector<host::VfInfo>> vfs(std::string_view pf) const override {
    return inner_.vfs(pf);  // Ethernet PFs only here: never asked
  }
  Result<std::vector<host::VfStats>> vfStats(std::string_view pf) const override {
    return inner_.vfStats(pf);
  }
  Status setVf(std::string_view pf, const host::VfSetting& setting) override {
    return inner_.setVf(pf, setting);
  }
  Status setUp(std::string_view netdev, bool up) override { return inner_.setUp(netdev, up); }
  Status setVfGuids(std::string_view pf, int32_t vf, uint64_t node, uint64_t port) override {
    return inner_.setVfGuids(pf, vf, node, port);
  }
  double simulated_seconds = 0;

 private:
  host::Netlink& inner_;
  std::vector<host::LinkInfo> links_;
  mutable std::vector<host::LinkInfo> next_;
};

double seconds(Steady::time_point start) {
  return std::chrono::duration<double>(Steady::now() - start).count();
}

double medianOf(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <typename Fn>
double median(int runs, Fn fn) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto start = Steady::now();
    fn();
    t.push_back(seconds(start));
  }
  return medianOf(std::move(t));
}

// This kernel's RTM_GETLINK dump of `netdevs` interfaces (veth pairs in a network namespace made
// for it, removed again), median of `runs`; nullopt when that cannot be set up (not root).
std::optional<double> realDump(size_t netdevs, int runs, std::string& why_not) {
  if (::geteuid() != 0) {
    why_not = "not root";
    return std::nullopt;
  }
  std::string ns = "sdra-bench-" + std::to_string(::getpid());
  auto ip = [](std::vector<std::string> args) {
    args.insert(args.begin(), "ip");
    auto out = runProcess({.argv = args}, std::chrono::minutes(5));
    return out.ok() && out->exit_code == 0 ? std::string()
                                           : (out.ok() ? out->err : out.status().message());
  };
  if (auto err = ip({"netns", "add", ns}); !err.empty()) {
    why_not = "ip netns add: " + err;
    return std::nullopt;
  }
  std::string batch;
  for (size_t i = 0; i < netdevs / 2; ++i) {
    batch +=
        "link add b" + std::to_string(i) + "a type veth peer name b" + std::to_string(i) + "b\n";
  }
  std::string batch_file = "/tmp/" + ns + ".batch";
  std::optional<double> out;
  if (!writeFileAtomic(batch_file, batch).isOk()) {
    why_not = "cannot write " + batch_file;
  } else if (auto err = ip({"-n", ns, "-batch", batch_file}); !err.empty()) {
    why_not = "creating veth pairs: " + err;
  } else {
    std::thread([&] {  // setns() changes the calling thread's namespace only
      int fd = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
        why_not = "setns into " + ns + " failed";
        if (fd >= 0) ::close(fd);
        return;
      }
      ::close(fd);
      host::KernelNetlink kernel;
      size_t seen = 0;
      out = median(runs, [&] {
        auto links = kernel.links();
        seen = links.ok() ? links->size() : 0;
      });
      if (seen < netdevs) why_not = "the dump held " + std::to_string(seen) + " interfaces";
    })
        .join();
  }
  std::filesystem::remove(batch_file);
  (void)ip({"netns", "del", ns});
  return out;
}

}  // namespace

// Long on purpose: the bench as a reader checks it, set-up, each measurement, then the report
// in the order it prints them; every step is a few lines of its own.
// NOLINTNEXTLINE(readability-function-size)
int main(int argc, char** argv) {
  int runs = argc > 1 ? std::stoi(argv[1]) : 20;
  std::string shm = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string root = shm + "/sriov-dra-discovery-bench-" + std::to_string(::getpid());
  bench::mustBeOk(host::writeFixture("many-pfs", root), "writing the fixture");
  host::SimulatedKernel kernel(root);
  auto before = host::discover(kernel, kernel);
  bench::mustBeOk(before.status(), "discovering");
  for (const auto& pf : before->pfs) {
    bench::mustBeOk(kernel.write("sys/bus/pci/devices/" + pf.pci_address + "/sriov_numvfs", "256"),
                    "creating VFs");
  }
  RecordingSysfs recording(kernel);
  auto topology = host::discover(recording, kernel);
  bench::mustBeOk(topology.status(), "discovering");
  size_t vfs = 0;
  for (const auto& pf : topology->pfs) vfs += pf.vfs.size();

  CapturedNetlink captured(kernel);
  size_t netdevs = captured.size();
  std::string no_dump;
  auto dump = realDump(netdevs, runs, no_dump);
  // Floor and ours in turns, each run timed whole; the real kernel's dump is added to both.
  std::vector<double> floors, ours_runs;
  for (int i = 0; i < runs; ++i) {
    auto start = Steady::now();
    replay(recording.calls);
    floors.push_back(seconds(start) + dump.value_or(0));
    captured.arm();
    start = Steady::now();
    auto t = host::discover(kernel, captured);
    ours_runs.push_back(seconds(start) + dump.value_or(0));
    if (!t.ok()) std::abort();
  }
  double floor = medianOf(std::move(floors));
  double ours = medianOf(std::move(ours_runs));

  std::vector<api::Device> devices;
  for (const auto& pf : topology->pfs) {
    for (const auto& vf : pf.vfs) {
      devices.push_back(
          {api::deviceName(vf.pci_address),
           vf.pci_address,
           {{std::string(api::attr::kResourceName), api::AttributeValue::ofString("e810")}}});
    }
  }
  auto first = dra::buildSlices("n", devices, topology->pfs, {});
  auto previous = dra::summaries(first.slices);
  double build =
      median(runs, [&] { (void)dra::buildSlices("n", devices, topology->pfs, previous); });
  std::filesystem::remove_all(root);

  std::map<Call, size_t> by_call;
  for (const auto& c : recording.calls) ++by_call[c.first];
  std::string calls;
  for (const auto& [c, count] : by_call) {
    calls += std::string(calls.empty() ? "" : ", ") + callName(c) + " " + std::to_string(count);
  }
  bench::Report report("discovery: 16 PFs x 256 VFs (" + std::to_string(vfs) + " VFs), median of " +
                       std::to_string(runs) + " runs, tree on " + shm);
  report.add({"discovery", "discovery of every PF, VF, GPU and the PCIe tree", ours, floor,
              bench::Unit::kSeconds,
              std::to_string(recording.calls.size()) +
                  " sysfs calls replayed as system calls, and the netlink dump",
              1.1});
  report.note("netdevs from one rtnetlink dump of " + std::to_string(netdevs) + " interfaces: " +
              (dump ? "this kernel dumps as many veth interfaces in " +
                          bench::formatValue(*dump, bench::Unit::kSeconds) +
                          " (in both figures); the simulated kernel's answer, read from its files, "
                          "took " +
                          bench::formatValue(captured.simulated_seconds, bench::Unit::kSeconds) +
                          " (captured once, handed to ours before each run)"
                    : "the real kernel's dump was not measured (" + no_dump +
                          "); the simulated kernel's answer (" +
                          bench::formatValue(captured.simulated_seconds, bench::Unit::kSeconds) +
                          ") is captured once and handed to ours before each run, so both "
                          "figures are without the dump"));
  report.note("sysfs calls per discovery: " + calls + " (" +
              std::to_string(recording.calls.size() / std::max<size_t>(vfs, 1)) + " per VF)");
  report.note(std::string("goal: under 50 ms for 4,096 VFs: ") + (ours < 0.050 ? "met" : "missed") +
              (floor >= 0.050 ? "; the floor alone is over it on this machine" : ""));
  report.note("building the node's " + std::to_string(first.slices.size()) +
              " ResourceSlices: " + bench::formatValue(build, bench::Unit::kSeconds));
  return report.print() ? 0 : 1;
}
