#include "cli/command_line.h"

#include <string>

#include "base/strings.h"
#include "cli/terminal_safe.h"
#include "host/fixtures.h"
#include "policy/render.h"

namespace sriovdra::cli {
namespace {

// --kubeconfig, --context, -n and -o of the subcommands that read a cluster.
void addClusterFlags(CLI::App* c, ClusterArgs& a, const std::string& outputs) {
  c->add_option("--kubeconfig", a.kubeconfig,
                "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  c->add_option("--context", a.context, "kubeconfig context (default: the current one)");
  c->add_option("-n,--namespace", a.namespace_, "namespace");
  c->add_option("-o,--output", a.output, outputs)->default_val("table");
}

}  // namespace

CommandLine::CommandLine(CLI::App& app) {
  app.require_subcommand(1);
  addOffline(app);
  addCluster(app);
  addSimulate(app);
}

int CommandLine::run(Streams io) const {
  TerminalSafeBuf out_buf(io.out);
  TerminalSafeBuf err_buf(io.err);
  std::ostream out(&out_buf);
  std::ostream err(&err_buf);
  for (const auto& [command, run] : commands_) {
    if (command->parsed()) return run({io.in, out, err});
  }
  return 1;
}

void CommandLine::addOffline(CLI::App& app) {
  auto* r = app.add_subcommand(
      "render",
      "Print the SriovNodeState spec the operator would write for a node, with the "
      "conflicts between policies (offline, same code as the operator)");
  r->add_option("--node", render_.node_file, "YAML file with the Node (its labels count)")
      ->required();
  r->add_option("--state", render_.state_file,
                "YAML file with the node's SriovNodeState (or SriovNetworkNodeState); its status "
                "lists the discovered PFs and VFs");
  r->add_option("-f,--filename", render_.policy_files,
                "YAML files with SriovNetworkNodePolicy, SriovResourcePolicy and "
                "DeviceAttributes objects ('-' for standard input)")
      ->required();
  r->add_option("-o,--output", render_.output, "yaml or json")->default_val("yaml");
  r->add_option("--resource-prefix", render_.resource_prefix,
                "publish k8s.cni.cncf.io/resourceName=<prefix>/<resourceName> (Multus), as the "
                "operator's flag; \"\" publishes none")
      ->capture_default_str()
      ->check(policy::resourcePrefixError);
  r->add_flag("--advertise-node-policy-vfs", render_.advertise_node_policy_vfs,
              "as the operator's flag: node policies' VF groups are advertised without a "
              "SriovResourcePolicy");
  r->add_option("-n,--namespace", render_.namespace_,
                "only policies in this namespace count (the operator's namespace)");

  commands_.push_back({r, [this](Streams io) { return runRender(render_, io); }});

  auto* v = app.add_subcommand("validate",
                               "Check policy YAML against the admission webhook's rules, offline");
  v->add_option("-f,--filename", validate_.files, "YAML files ('-' for standard input)")
      ->required();
  v->add_option("-o,--output", validate_.output, "text or json")->default_val("text");
  v->add_option("-n,--namespace", validate_.namespace_,
                "the operator's namespace; objects without one count as in it")
      ->default_val("sriov-dra");

  commands_.push_back({v, [this](Streams io) { return runValidate(validate_, io); }});

  auto* f = app.add_subcommand("fixture",
                               "Write a simulated server's sysfs tree (for the demo and tests)");
  f->add_option("--topology", fixture_.topology, "one of: " + join(host::fixtureTopologies(), ", "))
      ->required();
  f->add_option("--out", fixture_.out, "directory to write into (empty or new)")->required();

  commands_.push_back({f, [this](Streams io) { return runFixture(fixture_, io); }});

  auto* d =
      app.add_subcommand("discover", "Print the PCI topology the agent discovers (read-only)");
  d->add_option("--sysfs-root", discover_.sysfs_root, "root of the sysfs tree")->default_val("/");
  d->add_option("-o,--output", discover_.output, "yaml or json")->default_val("yaml");

  commands_.push_back({d, [this](Streams io) { return runDiscover(discover_, io); }});
}

void CommandLine::addCluster(CLI::App& app) {
  auto* t = app.add_subcommand(
      "topology",
      "Per node: NUMA -> PCIe root -> switch -> GPUs and PFs with VFs advertised, allocated and "
      "free; marks GPUs with no VF under their root or switch");
  addClusterFlags(t, topology_, "table, json, yaml or dot (Graphviz)");
  t->add_option("--node", topology_.node, "only this node");

  commands_.push_back({t, [this](Streams io) { return runTopology(topology_, io); }});

  auto* e = app.add_subcommand(
      "explain",
      "Would this claim fit, where, with which devices, and if not, why not (against the live "
      "ResourceSlices, DeviceTaintRules, DeviceClasses and allocations). Exit code 0 if "
      "kube-scheduler can place it: "
      "some node fits and no node stops it with an error");
  addClusterFlags(e, explain_, "table, json or yaml");
  e->add_option("-f,--filename", explain_.file,
                "a ResourceClaim or ResourceClaimTemplate, or a Pod or workload (Deployment, "
                "StatefulSet, ...) whose containers ask for extended resources a DeviceClass "
                "backs: the claim kube-scheduler makes for them ('-' for standard input)");
  e->add_option("claim", explain_.claim, "NAMESPACE/CLAIM (or CLAIM with -n) of an existing claim");

  commands_.push_back({e, [this](Streams io) { return runExplain(explain_, io); }});

  auto* rep = app.add_subcommand(
      "report",
      "Every allocated claim with SR-IOV VFs: pod, node, GPUs, VFs, PFs, PCIe roots, NUMA nodes "
      "and the alignment of each GPU/VF pair, with a summary");
  addClusterFlags(rep, report_, "table, json or yaml");

  commands_.push_back({rep, [this](Streams io) { return runReport(report_, io); }});
}

void CommandLine::addSimulate(CLI::App& app) {
  auto* s = app.add_subcommand(
      "simulate",
      "The placement study: pods of 1 GPU + 1 VF placed by independent device plugins, by the "
      "NUMA topology manager and by DRA with a pcieRoot constraint, with the bandwidth each gets");
  s->add_option("--topology", simulate_.topology, "server topology (fixture name)")
      ->default_val("a100-reference");
  s->add_option("--nodes", simulate_.nodes, "servers")->default_val(16);
  s->add_option("--pods", simulate_.pods, "pods of 1 GPU + 1 VF")->default_val(128);
  s->add_option("--seed", simulate_.seed, "random seed")->default_val(1);
  s->add_option("--vfs-per-pf", simulate_.vfs_per_pf, "VFs on each PF")->default_val(1);
  s->add_option("-o,--output", simulate_.output, "markdown or csv")->default_val("markdown");
  s->add_option("--gbps-aligned", simulate_.gbps_aligned, "Gbit/s of a same-root pair")
      ->default_val(194.6);
  s->add_option("--gbps-same-numa", simulate_.gbps_same_numa,
                "Gbit/s of a same-NUMA, different-root pair")
      ->default_val(127.1);
  s->add_option("--gbps-cross-numa", simulate_.gbps_cross_numa, "Gbit/s of a cross-NUMA pair")
      ->default_val(110.0);
  s->add_option("--kv-mb", simulate_.kv_mb, "MB per KV-cache transfer")->default_val(1175.81);
  s->add_option("--kv-ms-aligned", simulate_.kv_ms_aligned, "ms per transfer, aligned")
      ->default_val(56.78);
  s->add_option("--kv-ms-cross-numa", simulate_.kv_ms_cross_numa, "ms per transfer, cross NUMA")
      ->default_val(122.32);
  s->add_option("--kv-ms-same-numa", simulate_.kv_ms_same_numa,
                "ms per transfer, same NUMA (default: scaled from bandwidth)");

  commands_.push_back({s, [this](Streams io) { return runSimulate(simulate_, io); }});
}

}  // namespace sriovdra::cli
