// sriov-dra: offline and cluster tools for SR-IOV VFs as DRA devices. Thin: flags -> lib/cli.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace sriovdra::cli;
  CLI::App app{"sriov-dra: SR-IOV VFs as DRA devices, aligned with GPUs by PCIe root"};
  app.require_subcommand(1);
  Streams io{std::cin, std::cout, std::cerr};

  RenderArgs render;
  auto* r = app.add_subcommand(
      "render",
      "Print the SriovNodeState spec the operator would write for a node, with the "
      "conflicts between policies (offline, same code as the operator)");
  r->add_option("--node", render.node_file, "YAML file with the Node (its labels count)")
      ->required();
  r->add_option("--state", render.state_file,
                "YAML file with the node's SriovNodeState (or SriovNetworkNodeState); its status "
                "lists the discovered PFs and VFs");
  r->add_option("-f,--filename", render.policy_files,
                "YAML files with SriovNetworkNodePolicy, SriovResourcePolicy and "
                "DeviceAttributes objects ('-' for standard input)")
      ->required();
  r->add_option("-o,--output", render.output, "yaml or json")->default_val("yaml");
  r->add_option("--resource-prefix", render.resource_prefix,
                "also publish k8s.cni.cncf.io/resourceName=<prefix>/<resourceName> (Multus)");
  r->add_option("-n,--namespace", render.namespace_,
                "only policies in this namespace count (the operator's namespace)");

  ValidateArgs validate;
  auto* v = app.add_subcommand("validate",
                               "Check policy YAML against the admission webhook's rules, offline");
  v->add_option("-f,--filename", validate.files, "YAML files ('-' for standard input)")->required();
  v->add_option("-o,--output", validate.output, "text or json")->default_val("text");

  FixtureArgs fixture;
  auto* f = app.add_subcommand("fixture",
                               "Write a simulated server's sysfs tree (for the demo and tests)");
  f->add_option("--topology", fixture.topology, "a100-reference, e810-ethernet or shared-root")
      ->required();
  f->add_option("--out", fixture.out, "directory to write into (empty or new)")->required();

  DiscoverArgs discover;
  auto* d =
      app.add_subcommand("discover", "Print the PCI topology the agent discovers (read-only)");
  d->add_option("--sysfs-root", discover.sysfs_root, "root of the sysfs tree")->default_val("/");
  d->add_option("-o,--output", discover.output, "yaml or json")->default_val("yaml");

  CLI11_PARSE(app, argc, argv);
  if (f->parsed()) return runFixture(fixture, io);
  if (d->parsed()) return runDiscover(discover, io);
  if (r->parsed()) return runRender(render, io);
  if (v->parsed()) return runValidate(validate, io);
  return 1;
}
