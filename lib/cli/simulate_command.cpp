#include <filesystem>

#include <unistd.h>

#include "cli/cluster_common.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "host/simulated_kernel.h"
#include "study/simulate.h"

namespace sriovdra::cli {

int runSimulate(const SimulateArgs& args, Streams io) {
  if (!validOutput(args.output, {"markdown", "csv"})) return fail(io, "-o must be markdown or csv");
  if (args.nodes < 1 || args.pods < 0 || args.vfs_per_pf < 1) {
    return fail(io, "--nodes and --vfs-per-pf must be at least 1, --pods at least 0");
  }
  std::error_code ec;
  auto dir = std::filesystem::temp_directory_path(ec) /
             ("sriov-dra-simulate-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir, ec);
  Status written = host::writeFixture(args.topology, dir.string());
  if (!written.isOk()) return fail(io, written.message());
  host::SimulatedKernel kernel(dir.string());
  auto topology = host::discover(kernel, kernel);
  std::filesystem::remove_all(dir, ec);
  if (!topology.ok()) return fail(io, topology.status().message());

  study::SimulationInput in;
  in.server = study::serverFromTopology(*topology, args.vfs_per_pf);
  in.nodes = args.nodes;
  in.pods = args.pods;
  in.seed = args.seed;
  in.figures = {args.gbps_aligned,  args.gbps_same_numa,   args.gbps_cross_numa, args.kv_mb,
                args.kv_ms_aligned, args.kv_ms_cross_numa, std::nullopt};
  if (args.kv_ms_same_numa > 0) in.figures.kv_ms_same_numa = args.kv_ms_same_numa;
  if (in.server.gpus.empty() || in.server.vfs.empty()) {
    return fail(io, "topology " + args.topology + " has " + std::to_string(in.server.gpus.size()) +
                        " GPUs and " + std::to_string(in.server.vfs.size()) +
                        " VFs: the study needs both");
  }
  auto results = study::simulate(in);
  if (args.output == "csv") {
    io.out << study::csvTable(results);
    return 0;
  }
  io.out << "Placement of " << args.pods << " pods (1 GPU + 1 VF each) on " << args.nodes << " x "
         << args.topology << " (" << in.server.gpus.size() << " GPUs, " << in.server.vfs.size()
         << " VFs per node), seed " << args.seed << "\n\n"
         << study::markdownTable(in, results) << "\n"
         << "Bandwidth per pair: " << in.figures.gbps_aligned << " Gbit/s on one root, "
         << in.figures.gbps_same_numa << " on one NUMA node, " << in.figures.gbps_cross_numa
         << " across NUMA nodes (ib_write_bw, 8 MiB). KV transfer: " << in.figures.kv_ms_aligned
         << " ms aligned, " << in.figures.kv_ms_cross_numa
         << " ms cross NUMA (measured), same NUMA scaled from bandwidth unless given.\n";
  return 0;
}

}  // namespace sriovdra::cli
