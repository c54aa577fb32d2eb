#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <set>
#include <variant>

#include "api/names.h"
#include "base/yaml.h"
#include "cli/commands.h"
#include "cli/objects.h"
#include "dra/alignment.h"
#include "dra/allocator.h"
#include "dra/simulate.h"
#include "host/discovery.h"
#include "host/fixtures.h"
#include "kube/config.h"

namespace sriovdra::cli {
namespace {

constexpr int kNegative = 1;
constexpr int kFailed = 2;

int fail(Streams io, const std::string& message) {
  io.err << "error: " << message << "\n";
  return kFailed;
}

bool validOutput(const std::string& o, std::initializer_list<std::string_view> allowed) {
  return std::find(allowed.begin(), allowed.end(), o) != allowed.end();
}

Result<std::shared_ptr<kube::Client>> connect(const ClusterArgs& args) {
  auto config = kube::loadConfig({args.kubeconfig, args.context});
  if (!config.ok()) return config.status();
  return kube::Client::create(*config);
}

void printDocument(const json::Value& doc, const std::string& output, Streams io) {
  if (output == "json") {
    io.out << json::dump(doc) << "\n";
  } else {
    io.out << jsonToYaml(doc);
  }
}

// Columns padded to the widest cell, like kubectl get.
void printTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    width.resize(std::max(width.size(), r.size()));
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 3, ' ');
    }
    out << line << "\n";
  }
}

// "ns/name", or "name" for an object read from a file without a namespace.
std::string qualified(const kube::ObjectMeta& m) {
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}

template <typename T>
std::vector<const T*> pointers(const std::vector<T>& items) {
  std::vector<const T*> out;
  out.reserve(items.size());
  for (const auto& i : items) out.push_back(&i);
  return out;
}

// Joins the parts in one allocation.
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) out.append(p);
  return out;
}

std::string numaText(int64_t numa) { return numa < 0 ? "-" : std::to_string(numa); }

void skippedWarnings(const ObjectBundle& bundle, Streams io) {
  for (const auto& s : bundle.skipped) io.err << "warning: skipped " << s << "\n";
}

// ---------------------------------------------------------------------------------------------
// topology

// One node of the topology, rendered three ways: a text tree, JSON/YAML and Graphviz.
struct Tree {
  using Field = std::variant<std::string, int64_t, bool>;
  std::string id;     // unique in the cluster (Graphviz node name)
  std::string label;  // the text tree's line
  std::string dot_label;
  std::string dot_style;                              // extra Graphviz attributes
  std::vector<std::pair<std::string, Field>> fields;  // the JSON object's members
  std::string children_key;                           // the JSON member holding the children
  std::vector<Tree> children;
};

void renderText(const Tree& t, const std::string& prefix, bool last, bool root, std::ostream& out) {
  out << (root ? "" : prefix + (last ? "└── " : "├── ")) << t.label << "\n";
  std::string next = root ? "" : prefix + (last ? "    " : "│   ");
  for (size_t i = 0; i < t.children.size(); ++i) {
    renderText(t.children[i], next, i + 1 == t.children.size(), false, out);
  }
}

json::Value renderJson(const Tree& t, json::Allocator& a) {
  json::Value v(rapidjson::kObjectType);
  for (const auto& [key, field] : t.fields) {
    json::Value value;
    if (const auto* s = std::get_if<std::string>(&field)) value = json::str(*s, a);
    if (const auto* i = std::get_if<int64_t>(&field)) value.SetInt64(*i);
    if (const auto* b = std::get_if<bool>(&field)) value.SetBool(*b);
    v.AddMember(json::str(key, a), value, a);
  }
  if (!t.children_key.empty()) {
    json::Value children(rapidjson::kArrayType);
    for (const auto& c : t.children) children.PushBack(renderJson(c, a), a);
    v.AddMember(json::str(t.children_key, a), children, a);
  }
  return v;
}

std::string dotId(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\\\"") : std::string(1, c);
  return out + "\"";
}

void renderDot(const Tree& t, std::string& out) {
  out.append("  ").append(dotId(t.id)).append(" [label=").append(dotId(t.dot_label));
  out.append(t.dot_style).append("];\n");
  for (const auto& c : t.children) {
    renderDot(c, out);
    out.append("  ").append(dotId(t.id)).append(" -> ").append(dotId(c.id)).append(";\n");
  }
}

// What one node has, from its agent's SriovNodeState and the published and allocated devices.
class NodeTopology {
 public:
  NodeTopology(const api::SriovNodeState& state, const dra::ClusterTopology& topology,
               const std::map<dra::DeviceId, std::string>& claim_of)
      : state_(state), claim_of_(claim_of) {
    const auto& st = state.status;
    for (const auto& g : st.alignment.gpus) gpu_alignment_[g.gpu] = &g;
    for (const auto& g : st.gpus) gpus_[g.pci_address] = &g;
    for (const auto& p : st.interfaces) pfs_[p.pci_address] = &p;
    for (const auto& [id, p] : topology.devices()) {
      if (p.node != state.metadata.name) continue;
      if (p.kind == "gpu") published_gpus_[p.pci_address] = &p;
      if (p.kind == "vf") vfs_by_pf_[p.pf].push_back(&p);
    }
  }

  Tree build() const {
    const std::string& node = state_.metadata.name;
    Tree t{node, node, node, ", shape=folder", {}, "numaNodes", {}};
    t.fields = {{"node", node},
                {"pcieRootImpliesSwitch", state_.status.alignment.root_implies_switch}};
    std::map<int64_t, std::vector<const api::PcieRoot*>> by_numa;
    for (const auto& r : state_.status.pcie_roots) by_numa[r.numa_node].push_back(&r);
    for (const auto& [numa, roots] : by_numa) {
      std::string label = "NUMA " + numaText(numa);
      Tree n{
          node + "/numa" + numaText(numa), label, label, "", {{"numaNode", numa}}, "pcieRoots", {}};
      for (const auto* r : roots) {
        Tree root{node + "/" + r->name,    r->name,    r->name, "",
                  {{"pcieRoot", r->name}}, "children", {}};
        for (const auto& sw : r->switches) {
          Tree s{node + "/sw/" + sw.pci_address,
                 "switch " + sw.pci_address,
                 "switch " + sw.pci_address,
                 ", shape=ellipse",
                 {{"switch", sw.pci_address}},
                 "devices",
                 {}};
          for (const auto& d : sw.devices) s.children.push_back(device(d));
          root.children.push_back(std::move(s));
        }
        for (const auto& d : r->devices) root.children.push_back(device(d));
        n.children.push_back(std::move(root));
      }
      t.children.push_back(std::move(n));
    }
    return t;
  }

 private:
  Tree device(const std::string& bdf) const {
    Tree t{state_.metadata.name + "/" + bdf, "", "", "", {}, "", {}};
    if (auto g = gpus_.find(bdf); g != gpus_.end()) return gpu(std::move(t), bdf, *g->second);
    if (auto p = pfs_.find(bdf); p != pfs_.end()) return pf(std::move(t), bdf, *p->second);
    t.label = "device " + bdf;
    t.dot_label = bdf;
    t.fields = {{"kind", "other"}, {"pciAddress", bdf}};
    return t;
  }

  Tree gpu(Tree t, const std::string& bdf, const api::Gpu& g) const {
    auto pub = published_gpus_.find(bdf);
    std::string device = pub == published_gpus_.end() ? "" : pub->second->id.device;
    std::string use = "not published";
    if (!device.empty()) {
      auto claim = claim_of_.find(pub->second->id);
      use = claim == claim_of_.end() ? "free" : "allocated to " + claim->second;
    }
    std::string mark;
    if (auto al = gpu_alignment_.find(bdf); al != gpu_alignment_.end()) {
      if (al->second->same_root_vfs.empty()) {
        mark = "  ! no advertised VF under this root";
      } else if (al->second->same_switch_vfs.empty() && !g.pcie_switch.empty()) {
        mark = "  ! no advertised VF behind this switch";
      }
    }
    t.label = cat({"GPU ", bdf, device.empty() ? "" : " ", device, " (", use, ")", mark});
    t.dot_label = cat({"GPU ", bdf, "\\n", device});
    t.dot_style = mark.empty() ? ", color=darkgreen" : ", color=red, style=bold";
    t.fields = {{"kind", "gpu"}, {"pciAddress", bdf}};
    if (!device.empty()) t.fields.emplace_back("device", device);
    t.fields.emplace_back("use", use);
    t.fields.emplace_back("aligned", mark.empty());
    return t;
  }

  Tree pf(Tree t, const std::string& bdf, const api::InterfaceExt& p) const {
    int64_t advertised = 0, used = 0;
    if (auto vfs = vfs_by_pf_.find(bdf); vfs != vfs_by_pf_.end()) {
      advertised = static_cast<int64_t>(vfs->second.size());
      for (const auto* v : vfs->second) used += claim_of_.count(v->id) != 0 ? 1 : 0;
    }
    t.label =
        cat({"PF ", bdf, " ", p.name, p.rdma_device.empty() ? "" : " ", p.rdma_device, ": ",
             std::to_string(p.num_vfs), " VFs, ", std::to_string(advertised), " advertised, ",
             std::to_string(used), " allocated, ", std::to_string(advertised - used), " free"});
    t.dot_label = cat({"PF ", p.name, "\\n", std::to_string(advertised - used), "/",
                       std::to_string(advertised), " VFs free"});
    t.dot_style = ", color=blue";
    t.fields = {{"kind", "pf"},
                {"pciAddress", bdf},
                {"name", p.name},
                {"vfs", p.num_vfs},
                {"advertised", advertised},
                {"allocated", used},
                {"free", advertised - used}};
    return t;
  }

  const api::SriovNodeState& state_;
  const std::map<dra::DeviceId, std::string>& claim_of_;
  std::map<std::string, const api::GpuAlignment*> gpu_alignment_;
  std::map<std::string, const api::Gpu*> gpus_;
  std::map<std::string, const api::InterfaceExt*> pfs_;
  std::map<std::string, const dra::DevicePlacement*> published_gpus_;
  std::map<std::string, std::vector<const dra::DevicePlacement*>> vfs_by_pf_;
};

int runTopologyWith(const TopologyArgs& args, const ObjectBundle& bundle, Streams io) {
  dra::ClusterTopology topology(pointers(bundle.resource_slices), pointers(bundle.node_states));
  std::map<dra::DeviceId, std::string> claim_of;
  for (const auto& c : bundle.resource_claims) {
    if (!c.status.allocation) continue;
    for (const auto& r : c.status.allocation->results) {
      claim_of[{r.driver, r.pool, r.device}] = qualified(c.metadata);
    }
  }
  std::map<std::string, const api::SriovNodeState*> states;
  for (const auto& s : bundle.node_states) {
    if (args.node.empty() || s.metadata.name == args.node) states[s.metadata.name] = &s;
  }
  if (!args.node.empty() && states.empty()) {
    return fail(io, "node " + args.node + " has no SriovNodeState (is the agent running there?)");
  }
  std::vector<Tree> trees;
  trees.reserve(states.size());
  for (const auto& [name, state] : states) {
    trees.push_back(NodeTopology(*state, topology, claim_of).build());
  }
  if (args.output == "dot") {
    std::string dot =
        "digraph topology {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n";
    for (const auto& t : trees) renderDot(t, dot);
    io.out << dot << "}\n";
  } else if (args.output == "table") {
    for (const auto& t : trees) renderText(t, "", true, true, io.out);
    if (trees.empty()) io.out << "No SriovNodeStates: no agent has reported a node yet.\n";
  } else {
    json::Document doc(rapidjson::kArrayType);
    for (const auto& t : trees) doc.PushBack(renderJson(t, doc.GetAllocator()), doc.GetAllocator());
    printDocument(doc, args.output, io);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// explain

std::string attributeText(const dra::PickedDevice& p, const api::ResourceClaimSpec& spec) {
  std::string out;
  for (const auto& c : spec.constraints) {
    const std::string& name = c.match_attribute.empty() ? c.distinct_attribute : c.match_attribute;
    const auto* v = dra::findAttribute(*p.device, p.id.driver, name);
    std::string shortName = name.substr(name.find('/') + 1);
    out += (out.empty() ? "" : ", ") + shortName + "=" + (v ? v->toString() : "(none)");
  }
  return out;
}

int explainSpec(const std::string& what, const api::ResourceClaimSpec& spec,
                const std::string& own_uid, const ExplainArgs& args, const ObjectBundle& bundle,
                Streams io) {
  dra::Allocator allocator(bundle.resource_slices, bundle.device_classes);
  auto in_use = dra::allocatedDevices(bundle.resource_claims, own_uid);
  std::vector<dra::ClusterNode> nodes;
  for (const auto& n : bundle.nodes) nodes.push_back({n.metadata.name, n.metadata.labels});
  if (nodes.empty()) {
    for (const auto& n : allocator.nodeNames()) nodes.push_back({n, {}});
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& x, const auto& y) { return x.name < y.name; });

  json::Document doc(rapidjson::kObjectType);
  auto& a = doc.GetAllocator();
  json::Value list(rapidjson::kArrayType);
  std::vector<std::vector<std::string>> rows = {{"NODE", "FITS", "DEVICES / WHY NOT"}};
  int fits = 0;
  for (const auto& node : nodes) {
    auto got = allocator.allocate(spec, node, in_use);
    json::Value entry(rapidjson::kObjectType);
    api::Writer w(entry, a);
    w.strAlways("node", node.name).boolean("fits", got.fits);
    json::Value devices(rapidjson::kArrayType);
    std::vector<std::string> lines;
    for (const auto& p : got.devices) {
      std::string attrs = attributeText(p, spec);
      lines.push_back(p.request + ": " + p.id.toString() +
                      (attrs.empty() ? "" : " (" + attrs + ")"));
      json::Value d(rapidjson::kObjectType);
      api::Writer(d, a)
          .strAlways("request", p.request)
          .strAlways("driver", p.id.driver)
          .strAlways("pool", p.id.pool)
          .strAlways("device", p.id.device)
          .str("constrainedAttributes", attrs);
      devices.PushBack(d, a);
    }
    json::Value reasons(rapidjson::kArrayType);
    for (const auto& r : got.reasons) {
      lines.push_back(r);
      reasons.PushBack(json::str(r, a), a);
    }
    w.value("devices", std::move(devices)).value("reasons", std::move(reasons));
    list.PushBack(entry, a);
    fits += got.fits ? 1 : 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      rows.push_back({i == 0 ? node.name : "", i == 0 ? (got.fits ? "yes" : "no") : "", lines[i]});
    }
  }
  api::Writer(doc, a)
      .strAlways("claim", what)
      .i64("nodesThatFit", fits)
      .i64("nodes", static_cast<int64_t>(nodes.size()))
      .value("nodeResults", std::move(list));
  if (args.output == "table") {
    io.out << what << ": fits on " << fits << " of " << nodes.size() << " node(s)\n\n";
    printTable(rows, io.out);
  } else {
    printDocument(doc, args.output, io);
  }
  return fits > 0 ? 0 : kNegative;
}

// ---------------------------------------------------------------------------------------------
// report

std::string placementText(const dra::DevicePlacement& p) {
  return p.id.device + " " + (p.pci_address.empty() ? "?" : p.pci_address) + " " +
         (p.pcie_root.empty() ? "?" : p.pcie_root) + " NUMA " + numaText(p.numa);
}

json::Value placementJson(const dra::DevicePlacement& p, json::Allocator& a) {
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

int reportWith(const ClusterArgs& args, const ObjectBundle& bundle, Streams io) {
  dra::ClusterTopology topology(pointers(bundle.resource_slices), pointers(bundle.node_states));
  auto report = dra::alignmentReport(pointers(bundle.resource_claims), topology);
  if (!args.namespace_.empty()) {
    std::erase_if(report, [&](const auto& c) { return c.namespace_ != args.namespace_; });
  }
  auto counts = dra::countPairs(report);
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
          .strAlways("alignment", std::string(dra::alignmentLabel(p.alignment)));
      ps.PushBack(pj, a);
    }
    w.value("gpus", std::move(gpus)).value("vfs", std::move(vfs)).value("pairs", std::move(ps));
    claims.PushBack(entry, a);

    size_t lines = std::max({c.gpus.size(), c.vfs.size(), size_t{1}});
    for (size_t i = 0; i < lines; ++i) {
      std::string alignment;
      if (i < c.pairs.size()) alignment = std::string(dra::alignmentName(c.pairs[i].alignment));
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
  for (const auto& [al, n] : counts) sw.i64(std::string(dra::alignmentLabel(al)), n);
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
    io.out << sep << n << " " << dra::alignmentName(al);
    sep = ", ";
  }
  io.out << "; "
         << (shared == 0 ? "every claim's VFs use distinct PFs"
                         : std::to_string(shared) + " claim(s) take several VFs from one PF")
         << "\n";
  return 0;
}

template <typename F>
int withCluster(const ClusterArgs& args, Streams io, F&& f) {
  auto client = connect(args);
  if (!client.ok()) return fail(io, client.status().message());
  auto bundle = loadCluster(**client);
  if (!bundle.ok()) return fail(io, bundle.status().message());
  skippedWarnings(*bundle, io);
  return f(**client, *bundle);
}

}  // namespace

int runTopology(const TopologyArgs& args, Streams io) {
  if (!validOutput(args.output, {"table", "json", "yaml", "dot"})) {
    return fail(io, "-o must be table, json, yaml or dot");
  }
  return withCluster(args, io, [&](kube::Client&, const ObjectBundle& bundle) {
    return runTopologyWith(args, bundle, io);
  });
}

int runExplain(const ExplainArgs& args, Streams io) {
  if (!validOutput(args.output, {"table", "json", "yaml"})) {
    return fail(io, "-o must be table, json or yaml");
  }
  if (args.file.empty() == args.claim.empty()) {
    return fail(io, "give either -f FILE or NAMESPACE/CLAIM");
  }
  api::ResourceClaimSpec spec;
  std::string what, own_uid;
  if (!args.file.empty()) {
    auto objects = loadObjects({args.file}, io.in);
    if (!objects.ok()) return fail(io, objects.status().message());
    size_t n = objects->resource_claims.size() + objects->resource_claim_templates.size();
    if (n != 1) {
      return fail(io, args.file + " must hold one ResourceClaim or ResourceClaimTemplate, found " +
                          std::to_string(n));
    }
    if (!objects->resource_claims.empty()) {
      const auto& c = objects->resource_claims[0];
      spec = c.spec;
      own_uid = c.metadata.uid;
      what = "ResourceClaim " + qualified(c.metadata);
    } else {
      const auto& t = objects->resource_claim_templates[0];
      spec = t.spec;
      what = "ResourceClaimTemplate " + qualified(t.metadata);
    }
  }
  return withCluster(args, io, [&](kube::Client& client, const ObjectBundle& bundle) {
    if (!args.claim.empty()) {
      std::string ns = args.namespace_, name = args.claim;
      if (auto slash = name.find('/'); slash != std::string::npos) {
        ns = name.substr(0, slash);
        name = name.substr(slash + 1);
      }
      if (ns.empty()) ns = "default";
      auto got = client.get(api::resources::kResourceClaims, ns, name);
      if (!got.ok())
        return fail(io, "ResourceClaim " + ns + "/" + name + ": " + got.status().message());
      auto claim = api::ResourceClaim::decode(*got);
      if (!claim.ok()) return fail(io, claim.status().message());
      spec = claim->spec;
      own_uid = claim->metadata.uid;
      what = "ResourceClaim " + ns + "/" + name;
    }
    return explainSpec(what, spec, own_uid, args, bundle, io);
  });
}

int runReport(const ClusterArgs& args, Streams io) {
  if (!validOutput(args.output, {"table", "json", "yaml"})) {
    return fail(io, "-o must be table, json or yaml");
  }
  return withCluster(args, io, [&](kube::Client&, const ObjectBundle& bundle) {
    return reportWith(args, bundle, io);
  });
}

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
  host::RealSysfs sysfs(dir.string());
  auto topology = host::discover(sysfs);
  std::filesystem::remove_all(dir, ec);
  if (!topology.ok()) return fail(io, topology.status().message());

  dra::SimulationInput in;
  in.server = dra::serverFromTopology(*topology, args.vfs_per_pf);
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
  auto results = dra::simulate(in);
  if (args.output == "csv") {
    io.out << dra::csvTable(results);
    return 0;
  }
  io.out << "Placement of " << args.pods << " pods (1 GPU + 1 VF each) on " << args.nodes << " x "
         << args.topology << " (" << in.server.gpus.size() << " GPUs, " << in.server.vfs.size()
         << " VFs per node), seed " << args.seed << "\n\n"
         << dra::markdownTable(in, results) << "\n"
         << "Bandwidth per pair: " << in.figures.gbps_aligned << " Gbit/s on one root, "
         << in.figures.gbps_same_numa << " on one NUMA node, " << in.figures.gbps_cross_numa
         << " across NUMA nodes (ib_write_bw, 8 MiB). KV transfer: " << in.figures.kv_ms_aligned
         << " ms aligned, " << in.figures.kv_ms_cross_numa
         << " ms cross NUMA (measured), same NUMA scaled from bandwidth unless given.\n";
  return 0;
}

}  // namespace sriovdra::cli
