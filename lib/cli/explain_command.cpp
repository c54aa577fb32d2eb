#include <algorithm>
#include <set>
#include <variant>

#include "api/names.h"
#include "base/strings.h"
#include "cli/cluster_common.h"
#include "scheduling/alignment.h"
#include "scheduling/allocator.h"

namespace sriovdra::cli {
namespace {

// Whether a constraint covers the device picked for `request` ("req" or, from firstAvailable,
// "req/sub"): one that names no requests covers them all.
bool covers(const api::DeviceConstraint& c, const std::string& request) {
  if (c.requests.empty()) return true;
  std::string parent = request.substr(0, request.find('/'));
  return std::any_of(c.requests.begin(), c.requests.end(),
                     [&](const std::string& r) { return r == request || r == parent; });
}

// The constrained attributes of a picked device, for the constraints that cover it.
std::string attributeText(const scheduling::PickedDevice& p, const api::ResourceClaimSpec& spec) {
  std::string out;
  for (const auto& c : spec.constraints) {
    if (!covers(c, p.request)) continue;
    const std::string& name = c.match_attribute.empty() ? c.distinct_attribute : c.match_attribute;
    const auto* v = api::findAttribute(*p.device, p.id.driver, name);
    std::string shortName = name.substr(name.find('/') + 1);
    out += (out.empty() ? "" : ", ") + shortName + "=" + (v ? v->toString() : "(none)");
  }
  return out;
}

// Long on purpose: one pass over the nodes that fills the JSON document and the table side by
// side, so the two outputs cannot disagree (as reportWith).
// NOLINTNEXTLINE(readability-function-size)
int explainSpec(const std::string& what, const api::ResourceClaimSpec& spec,
                const std::string& own_uid, const ExplainArgs& args, const ObjectBundle& bundle,
                Streams io) {
  scheduling::Allocator allocator(bundle.resource_slices, bundle.device_classes);
  auto in_use = scheduling::allocatedDevices(bundle.resource_claims, own_uid);
  auto shared = scheduling::sharedAllocations(bundle.resource_claims, own_uid);
  std::vector<scheduling::ClusterNode> nodes;
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
  std::string error, error_node;  // the first error kube-scheduler would meet
  for (const auto& node : nodes) {
    auto got = allocator.allocate(spec, node, in_use, shared);
    json::Value entry(rapidjson::kObjectType);
    api::Writer w(entry, a);
    w.strAlways("node", node.name).boolean("fits", got.fits).str("error", got.error);
    if (!got.error.empty() && error.empty()) {
      error = got.error;
      error_node = node.name;
    }
    json::Value devices(rapidjson::kArrayType);
    std::vector<std::string> lines;
    for (size_t i = 0; i < got.devices.size(); ++i) {
      const auto& p = got.devices[i];
      const auto& result = got.allocation.results.at(i);
      std::string attrs = attributeText(p, spec);
      std::vector<std::string> share;
      for (const auto& [name, q] : result.consumed_capacity) {
        share.push_back(std::string(name).append("=").append(q));
      }
      const auto& conditions = p.device->binding_conditions;
      lines.push_back(
          p.request + ": " + p.id.toString() + (attrs.empty() ? "" : " (" + attrs + ")") +
          (result.share_id.empty() ? ""
           : share.empty()         ? "; shared with other claims"
                                   : "; a share of " + join(share, ", ")) +
          (conditions.empty()
               ? ""
               : "; the pod is bound once the device reports " + join(conditions, ", ")));
      json::Value d(rapidjson::kObjectType);
      api::Writer(d, a)
          .strAlways("request", p.request)
          .strAlways("driver", p.id.driver)
          .strAlways("pool", p.id.pool)
          .strAlways("device", p.id.device)
          .str("constrainedAttributes", attrs)
          .stringMap("consumedCapacity", result.consumed_capacity)
          .strings("bindingConditions", conditions);
      devices.PushBack(d, a);
    }
    json::Value reasons(rapidjson::kArrayType);
    for (const auto& r : got.reasons) {
      lines.push_back(r);
      reasons.PushBack(json::str(r, a), a);
    }
    if (!got.error.empty()) lines.push_back("error: " + got.error);
    w.value("devices", std::move(devices)).value("reasons", std::move(reasons));
    list.PushBack(entry, a);
    fits += got.fits ? 1 : 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string verdict = got.fits ? "yes" : got.error.empty() ? "no" : "error";
      rows.push_back({i == 0 ? node.name : "", i == 0 ? verdict : "", lines[i]});
    }
  }
  api::Writer(doc, a)
      .strAlways("claim", what)
      .i64("nodesThatFit", fits)
      .i64("nodes", static_cast<int64_t>(nodes.size()))
      .boolean("schedulable", error.empty() && fits > 0)
      .str("error", error)
      .value("nodeResults", std::move(list));
  if (args.output == "table") {
    if (error.empty()) {
      io.out << what << ": fits on " << fits << " of " << nodes.size() << " node(s)\n\n";
    } else {
      io.out
          << what << ": kube-scheduler cannot schedule the pod on any node: on " << error_node
          << " its allocator stops with an error (below), and one node's error fails them all\n\n";
    }
    printTable(rows, io.out);
  } else {
    printDocument(doc, args.output, io);
  }
  return error.empty() && fits > 0 ? 0 : kNegative;
}

}  // namespace

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

}  // namespace sriovdra::cli
