// sriov-dra: offline and cluster tools for SR-IOV VFs as DRA devices. Flags (cli/command_line.h)
// -> the subcommand in lib/cli.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/command_line.h"

int main(int argc, char** argv) {
  CLI::App app{"sriov-dra: SR-IOV VFs as DRA devices, aligned with GPUs by PCIe root"};
  sriovdra::cli::CommandLine command_line(app);
  CLI11_PARSE(app, argc, argv);
  return command_line.run({std::cin, std::cout, std::cerr});
}
