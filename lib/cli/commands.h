#pragma once
// The offline subcommands of `sriov-dra`, each a function of its arguments and streams so it
// can be tested without a process. They return the process exit code.
#include <iosfwd>
#include <string>
#include <vector>

namespace sriovdra::cli {

struct Streams {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

struct RenderArgs {
  std::string node_file;
  std::string state_file;
  std::vector<std::string> policy_files;
  std::string output = "yaml";  // yaml | json
  std::string resource_prefix;
  std::string namespace_;  // only policies in this namespace count ("" = all)
};
// Prints the SriovNodeState the operator would write for the node, with conflicts, warnings and
// invalid policies. Exit code 0, or 1 when the inputs cannot be read.
int runRender(const RenderArgs& args, Streams io);

struct ValidateArgs {
  std::vector<std::string> files;
  std::string output = "text";  // text | json
};
// Applies the webhook's rules to every policy in the files (also the rules between them, for
// the nodes in the files). Exit code 0 if all are valid, 1 otherwise.
int runValidate(const ValidateArgs& args, Streams io);

struct FixtureArgs {
  std::string topology;
  std::string out;
};
// Writes a fixture sysfs tree (see host/fixtures.h).
int runFixture(const FixtureArgs& args, Streams io);

struct DiscoverArgs {
  std::string sysfs_root = "/";
  std::string output = "yaml";
};
// Prints what the agent discovers under a sysfs root: PFs and VFs, GPUs, the PCIe tree.
int runDiscover(const DiscoverArgs& args, Streams io);

}  // namespace sriovdra::cli
