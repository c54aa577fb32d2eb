// What the agent does for a pool's rdmaMode, given the kernel's mode and ib_core's option file.
#include "host/rdma_mode.h"

#include <catch2/catch.hpp>

using namespace sriovdra;

TEST_CASE("the RDMA namespace mode: the option for the next boot, and a reboot when it differs",
          "[host][rdma][unit]") {
  const std::string exclusive = host::modprobeContent("exclusive");
  const std::string shared = host::modprobeContent("shared");
  CHECK_THAT(exclusive, Catch::EndsWith("\noptions ib_core netns_mode=0\n"));
  CHECK_THAT(shared, Catch::EndsWith("\noptions ib_core netns_mode=1\n"));
  const std::string upstream =
      "# This file is managed by sriov-network-operator do not edit.\n"
      "options ib_core netns_mode=0\n";
  const std::string someone = "options ib_core netns_mode=0\n";
  // Naming an operator is not enough: only the first line the operators write.
  const std::string mentions = "# copied from sriov-dra-operator's\noptions ib_core netns_mode=0\n";

  struct Row {
    const char* name;
    host::RdmaModeInput in;
    std::optional<std::string> write;
    bool remove;
    bool reboot;
  };
  std::vector<Row> rows = {
      {"exclusive asked, the kernel shared: written, reboot",
       {"exclusive", "shared", {}},
       exclusive,
       false,
       true},
      {"written before, the kernel not rebooted yet: reboot only",
       {"exclusive", "shared", exclusive},
       {},
       false,
       true},
      {"the kernel in the mode: kept for the next boots",
       {"exclusive", "exclusive", {}},
       exclusive,
       false,
       false},
      {"in effect and written: nothing", {"exclusive", "exclusive", exclusive}, {}, false, false},
      {"shared asked over exclusive: rewritten, reboot",
       {"shared", "exclusive", exclusive},
       shared,
       false,
       true},
      {"no RDMA subsystem loaded: written for when ib_core loads, no reboot",
       {"exclusive", "", {}},
       exclusive,
       false,
       false},
      {"no mode asked: our file goes, no reboot", {"", "exclusive", exclusive}, {}, true, false},
      {"no mode asked: the SR-IOV network operator's file goes too",
       {"", "exclusive", upstream},
       {},
       true,
       false},
      {"no mode asked: someone else's file stays", {"", "exclusive", someone}, {}, false, false},
      {"no mode asked: a file that only mentions us stays",
       {"", "exclusive", mentions},
       {},
       false,
       false},
      {"no mode asked, no file: nothing", {"", "shared", {}}, {}, false, false},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto plan = host::planRdmaMode(row.in);
    CHECK(plan.write == row.write);
    CHECK(plan.remove == row.remove);
    CHECK(plan.reboot.empty() == !row.reboot);
    if (row.reboot) {
      CHECK(host::isRdmaModeReason(plan.reboot));
      CHECK_THAT(plan.reboot, Catch::Contains("runs in " + row.in.current) &&
                                  Catch::Contains("asks for " + row.in.desired));
    }
  }
  CHECK_FALSE(host::isRdmaModeReason("NIC 0000:0e:00 (0000:0e:00.0): firmware ..."));
}

TEST_CASE("no reboot for a mode that another file or the kernel command line would undo",
          "[host][rdma][unit]") {
  host::RdmaModeInput in{.desired = "exclusive", .current = "shared"};
  auto plan = host::planRdmaMode(in);
  CHECK_FALSE(plan.reboot.empty());
  CHECK(plan.error.empty());
  // modprobe reads the files in name order, the last netns_mode winning: one after ours undoes it,
  // one before does not; other modules' options do not count.
  in.others = {{"zz-rdma.conf", "options\tib_core foo=1\tnetns_mode=1\n"}};  // tabs too
  plan = host::planRdmaMode(in);
  CHECK(plan.reboot.empty());
  CHECK_THAT(plan.error, Catch::Contains("/etc/modprobe.d/zz-rdma.conf sets ib_core netns_mode=1"));
  CHECK(plan.write);  // the file is written all the same
  in.others = {{"00-rdma.conf", "options ib_core netns_mode=1\n"},
               {"zz-mlx.conf", "options mlx5_core prof_sel=2\n"}};
  plan = host::planRdmaMode(in);
  CHECK(plan.error.empty());
  CHECK_FALSE(plan.reboot.empty());
  // The kernel command line wins over every file (upstream puts the argument there).
  in.cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ib_core.netns_mode=1 quiet\n";
  plan = host::planRdmaMode(in);
  CHECK(plan.reboot.empty());
  CHECK_THAT(plan.error, Catch::Contains("the kernel command line sets ib_core netns_mode=1"));
  in.cmdline = "root=/dev/sda1 ib_core.netns_mode=0";
  CHECK(host::planRdmaMode(in).error.empty());

  CHECK(host::netnsModeAtBoot({}, "") == std::nullopt);
  CHECK(host::netnsModeAtBoot({{"b.conf", "options ib_core netns_mode=1"},
                               {"a.conf", "options ib_core netns_mode=0"}},
                              "")
            ->first == "1");
}
