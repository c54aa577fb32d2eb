#include <set>
#include <variant>

#include "api/names.h"
#include "cli/cluster_common.h"
#include "scheduling/alignment.h"
#include "scheduling/allocator.h"

namespace sriovdra::cli {
namespace {

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
  // `devices`: every published device (scheduling::ClusterTopology::devices()); kept by reference.
  NodeTopology(const api::SriovNodeState& state,
               const std::map<scheduling::DeviceId, scheduling::DevicePlacement>& devices,
               const std::map<scheduling::DeviceId, std::string>& claim_of)
      : state_(state), claim_of_(claim_of) {
    const auto& st = state.status;
    for (const auto& g : st.alignment.gpus) gpu_alignment_[g.gpu] = &g;
    for (const auto& g : st.gpus) gpus_[g.pci_address] = &g;
    for (const auto& p : st.interfaces) pfs_[p.pci_address] = &p;
    for (const auto& [id, p] : devices) {
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
  const std::map<scheduling::DeviceId, std::string>& claim_of_;
  std::map<std::string, const api::GpuAlignment*> gpu_alignment_;
  std::map<std::string, const api::Gpu*> gpus_;
  std::map<std::string, const api::InterfaceExt*> pfs_;
  std::map<std::string, const scheduling::DevicePlacement*> published_gpus_;
  std::map<std::string, std::vector<const scheduling::DevicePlacement*>> vfs_by_pf_;
};

int runTopologyWith(const TopologyArgs& args, const ObjectBundle& bundle, Streams io) {
  std::vector<scheduling::SlicePlacements> placements;
  for (const auto& s : bundle.resource_slices)
    placements.push_back(scheduling::SlicePlacements::of(s));
  auto devices = scheduling::ClusterTopology(pointers(placements),
                                             api::reportsOf(pointers(bundle.node_states)))
                     .devices();
  std::map<scheduling::DeviceId, std::string> claim_of;
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
    trees.push_back(NodeTopology(*state, devices, claim_of).build());
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

}  // namespace

int runTopology(const TopologyArgs& args, Streams io) {
  if (!validOutput(args.output, {"table", "json", "yaml", "dot"})) {
    return fail(io, "-o must be table, json, yaml or dot");
  }
  return withCluster(args, io, [&](kube::Client&, const ObjectBundle& bundle) {
    return runTopologyWith(args, bundle, io);
  });
}

}  // namespace sriovdra::cli
