#include <iostream>

#include "base/yaml.h"
#include "cli/commands.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"

namespace sriovdra::cli {

int runFixture(const FixtureArgs& args, Streams io) {
  Status st = host::writeFixture(args.topology, args.out);
  if (!st.isOk()) {
    io.err << "error: " << st.message() << "\n";
    return 1;
  }
  io.out << "wrote the " << args.topology << " topology to " << args.out
         << " (use it with sriov-dra-agent-simulated --sysfs-root " << args.out << ")\n";
  return 0;
}

int runDiscover(const DiscoverArgs& args, Streams io) {
  // The machine's own sysfs goes with its netlink; any other root is a fixture or a copied tree,
  // whose netlink answers (altNames, eSwitch modes) are the ones kept beside it (simulated/).
  Result<host::Topology> topology = Status(Code::kInternal, "not discovered");
  if (args.sysfs_root == "/") {
    topology = host::discover(host::RealSysfs("/"), host::KernelNetlink());
  } else {
    host::SimulatedKernel tree(args.sysfs_root);
    topology = host::discover(tree, tree);
  }
  if (!topology.ok()) {
    io.err << "error: " << topology.status().message() << "\n";
    return 1;
  }
  api::SriovNodeStateStatus status;
  status.interfaces = topology->pfs;
  status.gpus = topology->gpus;
  status.pcie_roots = topology->roots;
  status.alignment = host::computeAlignment(*topology, {});
  json::Document doc(rapidjson::kObjectType);
  status.encode(api::Writer(doc, doc.GetAllocator()));
  if (args.output == "json") {
    io.out << json::dump(doc) << "\n";
  } else {
    io.out << jsonToYaml(doc);
  }
  for (const auto& w : topology->warnings) io.err << "warning: " << w << "\n";
  return 0;
}

}  // namespace sriovdra::cli
