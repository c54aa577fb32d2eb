#include "host/firmware.h"

#include <charconv>
#include <sstream>
#include <vector>

#include "base/process.h"

namespace sriovdra::host {
namespace {

// "True(1)" -> "True", "ETH(2)" -> "ETH", "8" -> "8".
std::string valueName(const std::string& shown) { return shown.substr(0, shown.find('(')); }

Status setting(MlxSettings& s, const std::string& key, const std::string& shown,
               const std::string& line) {
  std::string v = valueName(shown);
  if (key == "SRIOV_EN") {
    if (v != "True" && v != "False") {
      return Status(Code::kInvalidArgument, "mstconfig: SRIOV_EN is not True or False: " + line);
    }
    s.sriov_en = v == "True";
  } else if (key == "NUM_OF_VFS") {
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), s.num_of_vfs);
    if (ec != std::errc() || ptr != v.data() + v.size() || s.num_of_vfs < 0) {
      return Status(Code::kInvalidArgument, "mstconfig: NUM_OF_VFS is not a count: " + line);
    }
  } else if (key == "LINK_TYPE_P1") {
    s.link_type_p1 = v;
  } else {
    s.link_type_p2 = v;
  }
  return Status::ok();
}

class Mstconfig : public Firmware {
 public:
  Mstconfig(std::string program, std::chrono::milliseconds timeout)
      : program_(std::move(program)), timeout_(timeout) {}

  Result<MlxFirmware> query(std::string_view pci) override {
    auto out = run({program_, "-e", "-d", std::string(pci), "q"});
    if (!out.ok()) return out.status();
    return parseMstconfigQuery(*out);
  }

  Status set(std::string_view pci, const MlxChanges& values) override {
    std::vector<std::string> argv = {program_, "-d", std::string(pci), "-y", "set"};
    for (const auto& [k, v] : values) argv.push_back(std::string(k).append("=").append(v));
    return run(std::move(argv)).status();
  }

 private:
  Result<std::string> run(std::vector<std::string> argv) {
    std::string what = argv[0] + " " + argv[1] + " " + argv[2] + " " + argv[3];
    return runTool(std::move(argv), timeout_, what,
                   program_ +
                       " is not installed (Debian's mstflint package): it changes "
                       "Mellanox firmware settings");
  }

  std::string program_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

std::string describeChanges(const MlxChanges& values) {
  std::string out;
  for (const auto& [k, v] : values)
    out.append(out.empty() ? "" : " ").append(k).append("=").append(v);
  return out;
}

Result<MlxFirmware> parseMstconfigQuery(std::string_view output) {
  MlxFirmware fw;
  bool sriov_en = false;
  bool num_of_vfs = false;
  std::istringstream lines{std::string(output)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (!w.empty() && w[0] == "*") w.erase(w.begin());
    if (w.empty()) continue;
    const std::string& key = w[0];
    if (key != "SRIOV_EN" && key != "NUM_OF_VFS" && key != "LINK_TYPE_P1" &&
        key != "LINK_TYPE_P2") {
      continue;
    }
    if (w.size() != 4) {
      return Status(Code::kInvalidArgument,
                    "mstconfig: expected Default, Current and Next Boot values: " + line);
    }
    SDRA_RETURN_IF_ERROR(setting(fw.current, key, w[2], line));
    SDRA_RETURN_IF_ERROR(setting(fw.next, key, w[3], line));
    sriov_en = sriov_en || key == "SRIOV_EN";
    num_of_vfs = num_of_vfs || key == "NUM_OF_VFS";
  }
  if (!sriov_en || !num_of_vfs) {
    return Status(Code::kInvalidArgument,
                  "mstconfig: the output has no SRIOV_EN and NUM_OF_VFS (not a ConnectX NIC "
                  "with SR-IOV?)");
  }
  return fw;
}

std::unique_ptr<Firmware> mstconfigFirmware(std::string program,
                                            std::chrono::milliseconds timeout) {
  return std::make_unique<Mstconfig>(std::move(program), timeout);
}

}  // namespace sriovdra::host
