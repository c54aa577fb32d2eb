// sriov-dra: offline and cluster tools for SR-IOV VFs as DRA devices. Thin: flags -> lib/cli.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

// Long on purpose: the flags of every subcommand, a few lines each, in the order of --help.
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
  r->add_flag("--advertise-node-policy-vfs", render.advertise_node_policy_vfs,
              "as the operator's flag: node policies' VF groups are advertised without a "
              "SriovResourcePolicy");
  r->add_option("-n,--namespace", render.namespace_,
                "only policies in this namespace count (the operator's namespace)");

  ValidateArgs validate;
  auto* v = app.add_subcommand("validate",
                               "Check policy YAML against the admission webhook's rules, offline");
  v->add_option("-f,--filename", validate.files, "YAML files ('-' for standard input)")->required();
  v->add_option("-o,--output", validate.output, "text or json")->default_val("text");
  v->add_option("-n,--namespace", validate.namespace_,
                "the operator's namespace; objects without one count as in it")
      ->default_val("sriov-dra");

  FixtureArgs fixture;
  auto* f = app.add_subcommand("fixture",
                               "Write a simulated server's sysfs tree (for the demo and tests)");
  f->add_option("--topology", fixture.topology,
                "a100-reference, e810-ethernet, shared-root or many-pfs")
      ->required();
  f->add_option("--out", fixture.out, "directory to write into (empty or new)")->required();

  DiscoverArgs discover;
  auto* d =
      app.add_subcommand("discover", "Print the PCI topology the agent discovers (read-only)");
  d->add_option("--sysfs-root", discover.sysfs_root, "root of the sysfs tree")->default_val("/");
  d->add_option("-o,--output", discover.output, "yaml or json")->default_val("yaml");

  auto clusterFlags = [](CLI::App* c, ClusterArgs& a, const std::string& outputs) {
    c->add_option("--kubeconfig", a.kubeconfig,
                  "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
    c->add_option("--context", a.context, "kubeconfig context (default: the current one)");
    c->add_option("-n,--namespace", a.namespace_, "namespace");
    c->add_option("-o,--output", a.output, outputs)->default_val("table");
  };

  TopologyArgs topology;
  auto* t = app.add_subcommand(
      "topology",
      "Per node: NUMA -> PCIe root -> switch -> GPUs and PFs with VFs advertised, allocated and "
      "free; marks GPUs with no VF under their root or switch");
  clusterFlags(t, topology, "table, json, yaml or dot (Graphviz)");
  t->add_option("--node", topology.node, "only this node");

  ExplainArgs explain;
  auto* e = app.add_subcommand(
      "explain",
      "Would this claim fit, where, with which devices, and if not, why not (against the live "
      "ResourceSlices, DeviceClasses and allocations). Exit code 0 if some node fits");
  clusterFlags(e, explain, "table, json or yaml");
  e->add_option("-f,--filename", explain.file,
                "a ResourceClaim or ResourceClaimTemplate ('-' for standard input)");
  e->add_option("claim", explain.claim, "NAMESPACE/CLAIM (or CLAIM with -n) of an existing claim");

  ClusterArgs report;
  auto* rep = app.add_subcommand(
      "report",
      "Every allocated claim with SR-IOV VFs: pod, node, GPUs, VFs, PFs, PCIe roots, NUMA nodes "
      "and the alignment of each GPU/VF pair, with a summary");
  clusterFlags(rep, report, "table, json or yaml");

  SimulateArgs simulate;
  auto* s = app.add_subcommand(
      "simulate",
      "The placement study: pods of 1 GPU + 1 VF placed by independent device plugins, by the "
      "NUMA topology manager and by DRA with a pcieRoot constraint, with the bandwidth each gets");
  s->add_option("--topology", simulate.topology, "server topology (fixture name)")
      ->default_val("a100-reference");
  s->add_option("--nodes", simulate.nodes, "servers")->default_val(16);
  s->add_option("--pods", simulate.pods, "pods of 1 GPU + 1 VF")->default_val(128);
  s->add_option("--seed", simulate.seed, "random seed")->default_val(1);
  s->add_option("--vfs-per-pf", simulate.vfs_per_pf, "VFs on each PF")->default_val(1);
  s->add_option("-o,--output", simulate.output, "markdown or csv")->default_val("markdown");
  s->add_option("--gbps-aligned", simulate.gbps_aligned, "Gbit/s of a same-root pair")
      ->default_val(194.6);
  s->add_option("--gbps-same-numa", simulate.gbps_same_numa,
                "Gbit/s of a same-NUMA, different-root pair")
      ->default_val(127.1);
  s->add_option("--gbps-cross-numa", simulate.gbps_cross_numa, "Gbit/s of a cross-NUMA pair")
      ->default_val(110.0);
  s->add_option("--kv-mb", simulate.kv_mb, "MB per KV-cache transfer")->default_val(1175.81);
  s->add_option("--kv-ms-aligned", simulate.kv_ms_aligned, "ms per transfer, aligned")
      ->default_val(56.78);
  s->add_option("--kv-ms-cross-numa", simulate.kv_ms_cross_numa, "ms per transfer, cross NUMA")
      ->default_val(122.32);
  s->add_option("--kv-ms-same-numa", simulate.kv_ms_same_numa,
                "ms per transfer, same NUMA (default: scaled from bandwidth)");

  CLI11_PARSE(app, argc, argv);
  if (t->parsed()) return runTopology(topology, io);
  if (e->parsed()) return runExplain(explain, io);
  if (rep->parsed()) return runReport(report, io);
  if (s->parsed()) return runSimulate(simulate, io);
  if (f->parsed()) return runFixture(fixture, io);
  if (d->parsed()) return runDiscover(discover, io);
  if (r->parsed()) return runRender(render, io);
  if (v->parsed()) return runValidate(validate, io);
  return 1;
}
