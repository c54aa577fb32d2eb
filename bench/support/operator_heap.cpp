#include "support/operator_heap.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <malloc.h>

#include "api/names.h"
#include "operator/cached_node_state.h"
#include "operator/caches.h"
#include "support/floor.h"

namespace sriovdra::bench {
namespace {

// The heap this process has in use (glibc's count), after giving free pages back.
size_t heapInUse() {
  malloc_trim(0);
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

template <typename T>
void fill(kube::Informer<T>& informer, const std::string& what, Kept& kept) {
  size_t before = heapInUse();
  informer.start();
  if (!informer.waitForSync(std::chrono::minutes(10))) {
    std::fprintf(stderr, "bench: the operator's cache of %s did not sync in the bench\n",
                 what.c_str());
    std::exit(2);
  }
  size_t after = heapInUse();
  size_t bytes = after > before ? after - before : 0;
  kept.total += bytes;
  kept.parts.emplace_back(what, bytes);
}

}  // namespace

Kept heapOfOperatorCaches(const testing::ControlPlane& cp, const std::string& ns) {
  Kept kept;
  op::Caches caches(cp.client(), ns, "");
  op::NetworkCaches networks(cp.client());
  fill(caches.nodes, "Nodes", kept);
  fill(caches.states, "SriovNodeStates", kept);
  fill(caches.slices, "ResourceSlices", kept);
  fill(caches.claims, "ResourceClaims", kept);
  Kept rest;  // NetworkAttachmentDefinitions aside: not served without Multus's CRD
  fill(caches.node_policies, "", rest);
  fill(caches.resource_policies, "", rest);
  fill(caches.device_attributes, "", rest);
  fill(caches.classes, "", rest);
  fill(caches.operator_configs, "", rest);
  fill(caches.pool_configs, "", rest);
  fill(networks.sriov_networks, "", rest);
  fill(networks.ib_networks, "", rest);
  fill(networks.namespaces, "", rest);
  kept.total += rest.total;
  kept.parts.emplace_back("the others", rest.total);
  caches.stop();
  networks.stop();
  return kept;
}

double heapPerDistinctState(kube::Client& client, const std::string& ns, const std::string& node,
                            size_t copies) {
  auto got = client.get(api::resources::kSriovNodeStates, ns, node);
  bench::mustBeOk(got.status(), "reading a SriovNodeState");
  std::vector<std::string> json_copies;
  json_copies.reserve(copies);
  const std::string original = json::dump(*got);
  for (size_t i = 0; i < copies; ++i) {
    auto parsed = json::parse(original);
    bench::mustBeOk(parsed.status(), "parsing a SriovNodeState");
    json::Document& copy = *parsed;
    for (const char* part : {"spec", "status"}) {
      if (!copy.HasMember(part) || !copy[part].IsObject()) continue;
      json::Value& section = copy[part];
      if (!section.HasMember("interfaces") || !section["interfaces"].IsArray()) continue;
      for (auto& pf : section["interfaces"].GetArray()) {
        std::string name = std::string(json::stringOr(pf, "name")) + "-" + std::to_string(i);
        json::setString(pf, "name", name, copy.GetAllocator());
      }
    }
    json_copies.push_back(json::dump(copy));
  }
  size_t before = heapInUse();
  std::vector<op::CachedNodeState> kept;
  kept.reserve(copies);
  for (const auto& text : json_copies) {
    auto doc = json::parse(text);
    bench::mustBeOk(doc.status(), "parsing a SriovNodeState");
    auto decoded = op::CachedNodeState::decode(*doc);
    bench::mustBeOk(decoded.status(), "decoding a SriovNodeState");
    kept.push_back(std::move(*decoded));
  }
  size_t after = heapInUse();
  return after > before ? static_cast<double>(after - before) / static_cast<double>(copies) : 0;
}

}  // namespace sriovdra::bench
