#include <algorithm>
#include <set>
#include <variant>

#include "api/names.h"
#include "base/strings.h"
#include "cli/cluster_common.h"
#include "kube/config.h"
#include "scheduling/alignment.h"
#include "scheduling/allocator.h"
#include "scheduling/extended_resources.h"

namespace sriovdra::cli {
namespace {

// The namespace label that allows claims with adminAccess (resource.k8s.io/v1
// DRAAdminNamespaceLabelKey).
constexpr std::string_view kAdminAccessLabel = "resource.kubernetes.io/admin-access";

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

// What explain answers for: a claim's spec, or the claim kube-scheduler makes for a pod's
// extended resources (which may differ per node).
struct Subject {
  std::string what;
  std::string own_uid;
  api::ResourceClaimSpec spec;
  const api::PodResources* pod = nullptr;
};

// The table lines and JSON entries of the devices a node would give; `containers` names the
// containers each request of a pod's extended resources serves.
void describeDevices(const scheduling::NodeAllocation& got, const api::ResourceClaimSpec& spec,
                     const std::map<std::string, std::vector<std::string>>& containers,
                     std::vector<std::string>& lines, json::Value& devices, json::Allocator& a) {
  for (size_t i = 0; i < got.devices.size(); ++i) {
    const auto& p = got.devices[i];
    const auto& result = got.allocation.results.at(i);
    std::string attrs = attributeText(p, spec);
    std::vector<std::string> share;
    for (const auto& [name, q] : result.consumed_capacity) {
      share.push_back(std::string(name).append("=").append(q));
    }
    const auto& conditions = p.device->binding_conditions;
    auto serves = containers.find(p.request);
    lines.push_back(
        p.request +
        (serves == containers.end() ? "" : " (container " + join(serves->second, ", ") + ")") +
        ": " + p.id.toString() + (attrs.empty() ? "" : " (" + attrs + ")") +
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
        .strings("bindingConditions", conditions)
        .strings("containers",
                 serves == containers.end() ? std::vector<std::string>{} : serves->second);
    devices.PushBack(d, a);
  }
}

// kube-scheduler's answer for a pod's extended resources on one node: the claim it makes there
// (the resources the node's device plugin serves are left to it), or why the node cannot take
// the pod. `spec` and `containers` receive the claim and which containers its requests serve.
scheduling::NodeAllocation allocateExtended(
    const api::PodResources& pod, const std::map<std::string, const api::DeviceClass*>& classes,
    const api::Node* node_object, scheduling::Allocator& allocator,
    const scheduling::ClusterNode& node, const std::set<scheduling::DeviceId>& in_use,
    const scheduling::SharedAllocations& shared, api::ResourceClaimSpec& spec,
    std::map<std::string, std::vector<std::string>>& containers, std::vector<std::string>& notes) {
  static const std::map<std::string, std::string> kNone;
  const auto& allocatable = node_object ? node_object->extended_allocatable : kNone;
  auto ext = scheduling::extendedResourceClaim(pod, classes, allocatable);
  spec = ext.spec;
  for (const auto& m : ext.mappings) containers[m.request].push_back(m.container);
  for (const auto& r : ext.device_plugin) {
    notes.push_back(r + ": from the node's device plugin (allocatable " + allocatable.at(r) +
                    "), not DRA");
  }
  scheduling::NodeAllocation got;
  got.node = node.name;
  if (!ext.unfit.empty()) {
    got.reasons.push_back(ext.unfit);
  } else if (ext.spec.requests.empty()) {
    got.fits = true;
  } else {
    got = allocator.allocate(ext.spec, node, in_use, shared);
  }
  return got;
}

// Long on purpose: one pass over the nodes that fills the JSON document and the table side by
// side, so the two outputs cannot disagree (as reportWith).
// NOLINTNEXTLINE(readability-function-size)
int explainSubject(const Subject& subject, const ExplainArgs& args, const ObjectBundle& bundle,
                   Streams io) {
  scheduling::Allocator allocator(bundle.resource_slices, bundle.device_classes);
  auto in_use = scheduling::allocatedDevices(bundle.resource_claims, subject.own_uid);
  auto shared = scheduling::sharedAllocations(bundle.resource_claims, subject.own_uid);
  std::map<std::string, const api::DeviceClass*> extended;  // only a pod's claim needs them
  if (subject.pod != nullptr) extended = scheduling::extendedResourceClasses(bundle.device_classes);
  std::map<std::string, const api::Node*> node_objects;
  std::vector<scheduling::ClusterNode> nodes;
  for (const auto& n : bundle.nodes) {
    nodes.push_back({n.metadata.name, n.metadata.labels});
    node_objects[n.metadata.name] = &n;
  }
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
    api::ResourceClaimSpec spec = subject.spec;
    std::map<std::string, std::vector<std::string>> containers;
    std::vector<std::string> lines;
    auto object = node_objects.find(node.name);
    auto got = subject.pod == nullptr
                   ? allocator.allocate(spec, node, in_use, shared)
                   : allocateExtended(*subject.pod, extended,
                                      object == node_objects.end() ? nullptr : object->second,
                                      allocator, node, in_use, shared, spec, containers, lines);
    json::Value entry(rapidjson::kObjectType);
    api::Writer w(entry, a);
    w.strAlways("node", node.name).boolean("fits", got.fits).str("error", got.error);
    if (!got.error.empty() && error.empty()) {
      error = got.error;
      error_node = node.name;
    }
    json::Value devices(rapidjson::kArrayType);
    std::vector<std::string> device_lines;
    describeDevices(got, spec, containers, device_lines, devices, a);
    json::Value notes(rapidjson::kArrayType);
    for (const auto& n : lines) notes.PushBack(json::str(n, a), a);
    w.nonEmpty("notes", std::move(notes));
    json::Value reasons(rapidjson::kArrayType);
    for (const auto& r : got.reasons) {
      lines.push_back(r);
      reasons.PushBack(json::str(r, a), a);
    }
    lines.insert(lines.begin(), device_lines.begin(), device_lines.end());
    if (!got.error.empty()) lines.push_back("error: " + got.error);
    w.value("devices", std::move(devices)).value("reasons", std::move(reasons));
    list.PushBack(entry, a);
    fits += got.fits ? 1 : 0;
    if (lines.empty()) lines.push_back("");
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string verdict = got.fits ? "yes" : got.error.empty() ? "no" : "error";
      rows.push_back({i == 0 ? node.name : "", i == 0 ? verdict : "", lines[i]});
    }
  }
  api::Writer(doc, a)
      .strAlways("claim", subject.what)
      .i64("nodesThatFit", fits)
      .i64("nodes", static_cast<int64_t>(nodes.size()))
      .boolean("schedulable", error.empty() && fits > 0)
      .str("error", error)
      .value("nodeResults", std::move(list));
  if (args.output == "table") {
    if (error.empty()) {
      io.out << subject.what << ": fits on " << fits << " of " << nodes.size() << " node(s)\n\n";
    } else {
      io.out
          << subject.what << ": kube-scheduler cannot schedule the pod on any node: on "
          << error_node
          << " its allocator stops with an error (below), and one node's error fails them all\n\n";
    }
    printTable(rows, io.out);
  } else {
    printDocument(doc, args.output, io);
  }
  return error.empty() && fits > 0 ? 0 : kNegative;
}

// The API server refuses a claim (or template) that asks for admin access in a namespace without
// the label that allows it: its message, or "" when the claim would be admitted, or a line that
// starts with "warning: " when the user may not read the namespace.
Result<std::string> adminAccessRefusal(kube::Client& client, const api::ResourceClaimSpec& spec,
                                       const std::string& ns) {
  for (size_t i = 0; i < spec.requests.size(); ++i) {
    if (!spec.requests[i].admin_access) continue;
    auto got = client.get(kube::resources::kNamespaces, "", ns);
    if (!got.ok() && got.status().code() == Code::kForbidden) {
      return "warning: cannot read namespace " + ns +
             " to check that it allows admin access (the API server checks it when the claim is "
             "created): " +
             got.status().message();
    }
    if (!got.ok()) {
      return Status(got.status().code(), "could not read namespace " + ns +
                                             " to check admin access: " + got.status().message());
    }
    auto labels = kube::ObjectMeta::decode(*got).labels;
    auto label = labels.find(std::string(kAdminAccessLabel));
    if (label != labels.end() && label->second == "true") return std::string();
    return "spec.devices.requests[" + std::to_string(i) +
           "].adminAccess: Forbidden: admin access to devices requires the `" +
           std::string(kAdminAccessLabel) +
           ": true` label on the containing namespace (the API server refuses it in namespace " +
           ns + ")";
  }
  return std::string();
}

// The subject of a -f file: its one claim or template, else its one Pod or workload. Its
// namespace is the object's, which must agree with -n when both are given (as kubectl has it).
Result<Subject> subjectOf(const ObjectBundle& objects, const std::string& file,
                          const std::string& flag_namespace, std::string& ns) {
  size_t claims = objects.resource_claims.size() + objects.resource_claim_templates.size();
  size_t n = claims > 0 ? claims : objects.pods.size();
  if (n != 1) {
    return Status(Code::kInvalidArgument,
                  file +
                      " must hold one ResourceClaim or ResourceClaimTemplate, or else one Pod "
                      "or workload with a pod template; found " +
                      std::to_string(claims) + " claim(s) and template(s), " +
                      std::to_string(objects.pods.size()) + " pod(s) and workload(s)");
  }
  Subject s;
  const kube::ObjectMeta* meta = nullptr;
  if (!objects.resource_claims.empty()) {
    const auto& c = objects.resource_claims[0];
    s.spec = c.spec;
    s.own_uid = c.metadata.uid;
    meta = &c.metadata;
    s.what = "ResourceClaim " + qualified(c.metadata);
  } else if (!objects.resource_claim_templates.empty()) {
    const auto& t = objects.resource_claim_templates[0];
    s.spec = t.spec;
    meta = &t.metadata;
    s.what = "ResourceClaimTemplate " + qualified(t.metadata);
  } else {
    s.pod = &objects.pods[0];
    meta = &s.pod->metadata;
    s.what = s.pod->kind + " " + qualified(*meta) + "'s extended resources";
  }
  if (!meta->namespace_.empty() && !flag_namespace.empty() && meta->namespace_ != flag_namespace) {
    return Status(Code::kInvalidArgument, "the namespace of " + s.what + " does not match -n " +
                                              flag_namespace + ": give -n " + meta->namespace_ +
                                              " or leave -n out");
  }
  if (!meta->namespace_.empty()) ns = meta->namespace_;
  return s;
}

}  // namespace

int runExplain(const ExplainArgs& args, Streams io) {
  if (!validOutput(args.output, {"table", "json", "yaml"})) {
    return fail(io, "-o must be table, json or yaml");
  }
  if (args.file.empty() == args.claim.empty()) {
    return fail(io, "give either -f FILE or NAMESPACE/CLAIM");
  }
  // Without -n, the kubeconfig context's namespace, as kubectl takes it.
  std::string ns = args.namespace_;
  if (ns.empty()) {
    auto config = kube::loadConfig({args.kubeconfig, args.context});
    ns = config.ok() && !config->default_namespace.empty() ? config->default_namespace : "default";
  }
  ObjectBundle objects;
  Subject subject;
  if (!args.file.empty()) {
    auto loaded = loadObjects({args.file}, io.in, /*with_pods=*/true);
    if (!loaded.ok()) return fail(io, loaded.status().message());
    objects = std::move(*loaded);
    auto s = subjectOf(objects, args.file, args.namespace_, ns);
    if (!s.ok()) return fail(io, s.status().message());
    subject = std::move(*s);
  }
  return withCluster(args, io, [&](kube::Client& client, const ObjectBundle& bundle) {
    if (!args.claim.empty()) {
      std::string name = args.claim;
      if (auto slash = name.find('/'); slash != std::string::npos) {
        ns = name.substr(0, slash);
        name = name.substr(slash + 1);
      }
      auto got = client.get(api::resources::kResourceClaims, ns, name);
      if (!got.ok())
        return fail(io, "ResourceClaim " + ns + "/" + name + ": " + got.status().message());
      auto claim = api::ResourceClaim::decode(*got);
      if (!claim.ok()) return fail(io, claim.status().message());
      subject.spec = claim->spec;
      subject.own_uid = claim->metadata.uid;
      subject.what = "ResourceClaim " + ns + "/" + name;
    } else if (subject.pod == nullptr) {
      auto refused = adminAccessRefusal(client, subject.spec, ns);
      if (!refused.ok()) return fail(io, subject.what + ": " + refused.status().message());
      if (refused->starts_with("warning: ")) {
        io.err << *refused << "\n";
      } else if (!refused->empty()) {
        return fail(io, subject.what + ": " + *refused);
      }
    } else {
      auto extended = scheduling::extendedResourceClasses(bundle.device_classes);
      auto claim = scheduling::extendedResourceClaim(*subject.pod, extended, {});
      std::string pod = subject.pod->kind + " " + qualified(subject.pod->metadata);
      if (!claim.invalid.empty()) return fail(io, pod + ": " + claim.invalid);
      if (!claim.any) {
        return fail(io, pod +
                            " asks for no extended resource that a DeviceClass backs (its "
                            "extendedResourceName, or deviceclass.resource.kubernetes.io/<class>)");
      }
      if (!subject.pod->claims.empty()) {
        io.err << "warning: the pod also uses ResourceClaims (" << join(subject.pod->claims, ", ")
               << "): kube-scheduler allocates them on the same node as this one; explain each "
                  "with -f\n";
      }
    }
    return explainSubject(subject, args, bundle, io);
  });
}

}  // namespace sriovdra::cli
