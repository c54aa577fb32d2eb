#include "scheduling/extended_resources.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <span>

#include "api/resource_limits.h"
#include "scheduling/quantity.h"

namespace sriovdra::scheduling {
namespace {

// The name part of a Kubernetes qualified name: 1-63 of [A-Za-z0-9-_.], alphanumeric at both ends.
bool isQualifiedNamePart(std::string_view s) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  return !s.empty() && s.size() <= 63 && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// A request's whole count (Quantity.AsInt64), or nothing for zero or a fraction.
std::optional<int64_t> wholeCount(const std::string& text) {
  auto q = Quantity::parse(text);
  if (!q.ok() || !q->isInteger() || q->sign() <= 0) return std::nullopt;
  auto n = q->asInteger();
  if (!n.ok()) return std::nullopt;
  return *n;
}

using Mapping = ExtendedResourceClaim::Mapping;

// One container's request for `resource` (nothing when it asks for none, or when the reusable
// requests cover it) and its mappings.
std::optional<api::DeviceRequest> containerRequest(
    size_t index, const api::ContainerResources& c, const std::string& resource,
    const std::string& klass, std::span<const std::optional<api::DeviceRequest>> reusable,
    std::vector<Mapping>& mappings) {
  auto asked = c.requests.find(resource);
  if (asked == c.requests.end()) return std::nullopt;
  auto count = wholeCount(asked->second);
  if (!count) return std::nullopt;
  __int128 sum = 0;  // counts come from the file: as large as int64 allows
  for (const auto& r : reusable) {
    if (!r) continue;
    sum += r->exactly->count;
    mappings.push_back({c.name, resource, r->name});
    if (sum >= *count) return std::nullopt;
  }
  auto position = std::distance(c.requests.begin(), asked);
  api::DeviceRequest out;
  out.name = "container-" + std::to_string(index) + "-request-" + std::to_string(position);
  out.exactly = api::DeviceSubRequest{};
  out.exactly->device_class_name = klass;
  out.exactly->count = static_cast<int64_t>(*count - sum);
  mappings.push_back({c.name, resource, out.name});
  return out;
}

// The requests kube-scheduler makes for one resource (createRequestsAndMappings).
void requestsFor(const api::PodResources& pod, const std::string& resource,
                 const std::string& klass, ExtendedResourceClaim& out) {
  const auto& containers = pod.containers;
  std::vector<std::optional<api::DeviceRequest>> long_lived(containers.size());
  std::vector<Mapping> long_mappings, short_mappings;
  for (size_t i = 0; i < containers.size(); ++i) {
    if (containers[i].init && !containers[i].sidecar) continue;
    long_lived[i] = containerRequest(i, containers[i], resource, klass, {}, long_mappings);
  }
  std::optional<api::DeviceRequest> largest;
  std::set<std::string> short_names;
  for (size_t i = 0; i < containers.size(); ++i) {
    if (!containers[i].init || containers[i].sidecar) continue;
    auto r = containerRequest(i, containers[i], resource, klass, std::span(long_lived).subspan(i),
                              short_mappings);
    if (!r) continue;
    short_names.insert(r->name);
    if (!largest || largest->exactly->count < r->exactly->count) largest = std::move(r);
  }
  if (largest && short_names.size() > 1) {
    for (auto& m : short_mappings) {
      if (short_names.count(m.request) != 0) m.request = largest->name;
    }
  }
  if (largest) out.spec.requests.push_back(std::move(*largest));
  for (auto& r : long_lived) {
    if (r) out.spec.requests.push_back(std::move(*r));
  }
  out.mappings.insert(out.mappings.end(), long_mappings.begin(), long_mappings.end());
  out.mappings.insert(out.mappings.end(), short_mappings.begin(), short_mappings.end());
}

// The pod's request of a resource as the scheduler sums it (PodRequests): the long-running
// containers together, or an init container with the sidecars started before it, whichever is
// more.
Quantity podRequest(const api::PodResources& pod, const std::string& resource) {
  auto of = [&](const api::ContainerResources& c) {
    auto it = c.requests.find(resource);
    return it == c.requests.end() ? Quantity() : Quantity::parse(it->second).valueOr(Quantity());
  };
  Quantity running, sidecars, most;
  for (const auto& c : pod.containers) {
    if (c.init && !c.sidecar) {
      most = std::max(most, sidecars + of(c));
    } else {
      running = running + of(c);
      if (c.sidecar) sidecars = sidecars + of(c);
    }
  }
  return std::max(most, running);
}

}  // namespace

bool isDraExtendedResourceName(const std::string& name) {
  if (name.starts_with(kImplicitExtendedResourcePrefix)) return true;
  auto slash = name.find('/');
  if (slash == std::string::npos || name.find("kubernetes.io/") != std::string::npos ||
      name.starts_with("requests.")) {
    return false;
  }
  return name.find('/', slash + 1) == std::string::npos &&
         api::isDnsSubdomain("requests." + name.substr(0, slash)) &&
         isQualifiedNamePart(std::string_view(name).substr(slash + 1));
}

std::map<std::string, const api::DeviceClass*> extendedResourceClasses(
    const std::vector<api::DeviceClass>& classes) {
  std::map<std::string, const api::DeviceClass*> out;
  for (const auto& c : classes) {
    out[std::string(kImplicitExtendedResourcePrefix) + c.metadata.name] = &c;
  }
  for (const auto& c : classes) {
    if (!c.spec.extended_resource_name) continue;
    auto [it, added] = out.emplace(*c.spec.extended_resource_name, &c);
    if (added) continue;
    const auto& held = it->second->metadata;
    // Newer wins (RFC 3339 timestamps compare as text), then the lower name.
    if (c.metadata.creation_timestamp > held.creation_timestamp ||
        (c.metadata.creation_timestamp == held.creation_timestamp && c.metadata.name < held.name)) {
      it->second = &c;
    }
  }
  return out;
}

ExtendedResourceClaim extendedResourceClaim(
    const api::PodResources& pod, const std::map<std::string, const api::DeviceClass*>& classes,
    const std::map<std::string, std::string>& allocatable) {
  ExtendedResourceClaim out;
  std::set<std::string> asked;  // sorted, as kube-scheduler sorts them
  for (const auto& c : pod.containers) {
    for (const auto& [name, q] : c.requests) {
      if (!isDraExtendedResourceName(name)) continue;
      auto n = Quantity::parse(q);
      if (!n.ok()) {
        out.invalid = "container " + c.name + ": " + name + ": " + n.status().message();
        return out;
      }
      if (n->sign() > 0) asked.insert(name);
    }
  }
  for (const auto& name : asked) out.any = out.any || classes.count(name) != 0;
  if (!out.any) return out;
  for (const auto& name : asked) {
    auto klass = classes.find(name);
    auto has = allocatable.find(name);
    auto amount =
        has == allocatable.end() ? Result<Quantity>(Quantity()) : Quantity::parse(has->second);
    bool served = amount.ok() && amount->sign() > 0;
    if (klass != classes.end() && !served) {
      requestsFor(pod, name, klass->second->metadata.name, out);
    } else if (has == allocatable.end()) {
      if (out.unfit.empty()) {
        out.unfit = "cannot fit resource " + name +
                    ": no DeviceClass backs it and the node's allocatable does not have it";
      }
    } else if (!amount.ok() || *amount < podRequest(pod, name)) {
      // NodeResourcesFit's check, without the requests of the pods already on the node.
      if (out.unfit.empty()) {
        out.unfit = "Insufficient " + name + ": the node's allocatable has " + has->second +
                    ", the pod asks for " + podRequest(pod, name).text();
      }
    } else {
      out.device_plugin.push_back(name);
    }
  }
  std::sort(out.spec.requests.begin(), out.spec.requests.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace sriovdra::scheduling
