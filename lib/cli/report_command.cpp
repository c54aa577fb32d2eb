#include <set>
#include <variant>

#include "api/names.h"
#include "cli/cluster_common.h"
#include "scheduling/alignment.h"
#include "scheduling/allocator.h"

namespace sriovdra::cli {
namespace {

std::string placementText(const scheduling::DevicePlacement& p) {
  return p.id.device + " " + (p.pci_address.empty() ? "?" : p.pci_address) + " " +
         (p.pcie_root.empty() ? "?" : p.pcie_root) + " NUMA " + numaText(p.numa);
}

json::Value placementJson(const scheduling::DevicePlacement& p, json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  api::Writer(v, a)
      .strAlways("driver", p.id.driver)
      .strAlways("pool", p.id.pool)
      .strAlways("device", p.id.device)
      .str("pciAddress", p.pci_address)
      .str("pcieRoot", p.pcie_root)
      .str("pcieSwitch", p.pcie_switch)
      .i64("numaNode", p.numa)
      .str("pf", p.pf)
      .str("pfName", p.pf_name);
  return v;
}

// Long on purpose: one pass over the report that fills the JSON document and the table rows side
// by side, so the two outputs cannot disagree.
// NOLINTNEXTLINE(readability-function-size)
int reportWith(const ClusterArgs& args, const ObjectBundle& bundle, Streams io) {
  std::vector<scheduling::SlicePlacements> placements;
  for (const auto& s : bundle.resource_slices)
    placements.push_back(scheduling::SlicePlacements::of(s));
  scheduling::ClusterTopology topology(pointers(placements),
                                       api::reportsOf(pointers(bundle.node_states)));
  auto report = scheduling::alignmentReport(pointers(bundle.resource_claims), topology);
  if (!args.namespace_.empty()) {
    std::erase_if(report, [&](const auto& c) { return c.namespace_ != args.namespace_; });
  }
  auto counts = scheduling::countPairs(report);
  int64_t pairs = 0, shared = 0;
  for (const auto& [al, n] : counts) pairs += n;
  for (const auto& c : report) shared += c.shared_pfs.empty() ? 0 : 1;

  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::Value claims(rapidjson::kArrayType);
  std::vector<std::vector<std::string>> rows = {
      {"CLAIM", "POD", "NODE", "GPU", "VF", "PF", "ALIGNMENT"}};
  for (const auto& c : report) {
    json::Value entry(rapidjson::kObjectType);
    api::Writer w(entry, a);
    w.strAlways("namespace", c.namespace_).strAlways("name", c.name).str("pod", c.pod);
    w.str("node", c.node).boolean("pfsUnique", c.shared_pfs.empty());
    json::Value gpus(rapidjson::kArrayType), vfs(rapidjson::kArrayType), ps(rapidjson::kArrayType);
    for (const auto& g : c.gpus) gpus.PushBack(placementJson(g, a), a);
    for (const auto& v : c.vfs) vfs.PushBack(placementJson(v, a), a);
    for (const auto& p : c.pairs) {
      json::Value pj(rapidjson::kObjectType);
      api::Writer(pj, a)
          .strAlways("gpu", p.gpu)
          .strAlways("vf", p.vf)
          .strAlways("alignment", std::string(scheduling::alignmentLabel(p.alignment)));
      ps.PushBack(pj, a);
    }
    w.value("gpus", std::move(gpus)).value("vfs", std::move(vfs)).value("pairs", std::move(ps));
    claims.PushBack(entry, a);

    size_t lines = std::max({c.gpus.size(), c.vfs.size(), size_t{1}});
    for (size_t i = 0; i < lines; ++i) {
      std::string alignment;
      if (i < c.pairs.size())
        alignment = std::string(scheduling::alignmentName(c.pairs[i].alignment));
      if (c.pairs.empty() && i == 0) alignment = "no GPU in the claim";
      std::string pf;
      if (i < c.vfs.size()) {
        pf = c.vfs[i].pf_name.empty() ? c.vfs[i].pf : c.vfs[i].pf_name;
        bool dup =
            std::find(c.shared_pfs.begin(), c.shared_pfs.end(), c.vfs[i].pf) != c.shared_pfs.end();
        if (dup) pf += " (shared!)";
      }
      rows.push_back({i == 0 ? c.namespace_ + "/" + c.name : "", i == 0 ? c.pod : "",
                      i == 0 ? c.node : "", i < c.gpus.size() ? placementText(c.gpus[i]) : "",
                      i < c.vfs.size() ? placementText(c.vfs[i]) : "", pf, alignment});
    }
  }
  json::Value summary(rapidjson::kObjectType);
  api::Writer sw(summary, a);
  sw.i64("claims", static_cast<int64_t>(report.size())).i64("pairs", pairs);
  for (const auto& [al, n] : counts) sw.i64(std::string(scheduling::alignmentLabel(al)), n);
  sw.i64("claimsWithSharedPFs", shared);
  api::Writer(doc, a).value("claims", std::move(claims)).value("summary", std::move(summary));

  if (args.output != "table") {
    printDocument(doc, args.output, io);
    return 0;
  }
  if (report.empty()) {
    io.out << "No allocated claims with " << api::kDriverName << " devices.\n";
    return 0;
  }
  printTable(rows, io.out);
  io.out << "\n" << report.size() << " claim(s), " << pairs << " GPU/VF pair(s):";
  std::string sep = " ";
  for (const auto& [al, n] : counts) {
    io.out << sep << n << " " << scheduling::alignmentName(al);
    sep = ", ";
  }
  io.out << "; "
         << (shared == 0 ? "every claim's VFs use distinct PFs"
                         : std::to_string(shared) + " claim(s) take several VFs from one PF")
         << "\n";
  return 0;
}

}  // namespace

int runReport(const ClusterArgs& args, Streams io) {
  if (!validOutput(args.output, {"table", "json", "yaml"})) {
    return fail(io, "-o must be table, json or yaml");
  }
  return withCluster(args, io, [&](kube::Client&, const ObjectBundle& bundle) {
    return reportWith(args, bundle, io);
  });
}

}  // namespace sriovdra::cli
