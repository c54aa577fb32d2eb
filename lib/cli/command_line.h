#pragma once
// The `sriov-dra` command line: every subcommand with its flags, in the order of --help, and the
// one to run once CLI11 parsed the arguments. Not copyable: the subcommands refer to its fields.
#include <functional>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

namespace sriovdra::cli {

class CommandLine {
 public:
  // Adds the subcommands and their flags to `app`, which must outlive this.
  explicit CommandLine(CLI::App& app);
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // The exit code of the subcommand the parsed arguments name; what it prints goes through
  // TerminalSafeBuf (cli/terminal_safe.h).
  int run(Streams io) const;

 private:
  void addOffline(CLI::App& app);  // render, validate, fixture, discover
  void addCluster(CLI::App& app);  // topology, explain, report
  void addSimulate(CLI::App& app);

  RenderArgs render_;
  ValidateArgs validate_;
  FixtureArgs fixture_;
  DiscoverArgs discover_;
  TopologyArgs topology_;
  ExplainArgs explain_;
  ClusterArgs report_;
  SimulateArgs simulate_;
  std::vector<std::pair<CLI::App*, std::function<int(Streams)>>> commands_;
};

}  // namespace sriovdra::cli
