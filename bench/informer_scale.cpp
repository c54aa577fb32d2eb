// Scale driver for the informer: starts a real control plane, creates N ConfigMaps, and prints
//   * initial list+sync time and objects/s,
//   * watch throughput: updates made by 4 writers and the rate at which the informer saw them,
//   * resident memory per cached object (typed and Unstructured caches) next to the objects'
//     JSON size.
// Usage: informer_scale [N=10000] [payload bytes per object=256]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include <malloc.h>
#include <unistd.h>

#include "base/yaml.h"
#include "kube/informer.h"
#include "support/control_plane.h"

using namespace sriovdra;
using Steady = std::chrono::steady_clock;

namespace {

// What an operator would cache for a ConfigMap: metadata and data.
struct ConfigMap {
  kube::ObjectMeta metadata;
  std::map<std::string, std::string> data;
  static Result<ConfigMap> decode(const json::Value& v) {
    return ConfigMap{kube::ObjectMeta::decode(v), kube::decodeStringMap(json::member(v, "data"))};
  }
};

size_t residentBytes() {
  malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

double secondsSince(Steady::time_point t) {
  return std::chrono::duration<double>(Steady::now() - t).count();
}

template <typename T>
void measureCache(const char* label, std::shared_ptr<kube::Client> client, const std::string& ns,
                  size_t n, double json_bytes) {
  size_t before = residentBytes();
  auto start = Steady::now();
  auto inf = std::make_unique<kube::Informer<T>>(client, kube::resources::kConfigMaps,
                                                 kube::InformerOptions{.namespace_ = ns});
  inf->start();
  if (!inf->waitForSync(std::chrono::minutes(5)) || inf->size() != n) {
    std::printf("%s: informer did not sync (%zu of %zu)\n", label, inf->size(), n);
    return;
  }
  double sync = secondsSince(start);
  size_t after = residentBytes();
  double per_object = static_cast<double>(after - before) / static_cast<double>(n);
  std::printf("| %-22s | %8.2f s | %10.0f obj/s | %9.0f B | %6.2fx |\n", label, sync,
              static_cast<double>(n) / sync, per_object, per_object / json_bytes);
  inf->stop();
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::stoul(argv[1]) : 10000;
  size_t payload = argc > 2 ? std::stoul(argv[2]) : 256;
  log::setVerbosity(-1);
  auto cp = testing::ControlPlane::start({.install_product_crds = false});
  auto client = cp->client();
  std::string ns = cp->newNamespace("scale");
  std::string filler(payload, 'x');

  auto create_start = Steady::now();
  std::atomic<size_t> next{0};
  std::atomic<size_t> failures{0};
  std::vector<std::thread> writers;
  writers.reserve(4);
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) {
        std::string yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-";
        yaml.append(std::to_string(i)).append(", namespace: ").append(ns);
        yaml.append(", labels: {app: bench, shard: s").append(std::to_string(i % 16));
        yaml.append("}}\ndata: {payload: ").append(filler).append(", index: \"");
        yaml.append(std::to_string(i)).append("\"}\n");
        auto docs = yamlToJson(yaml);
        if (!client->create(kube::resources::kConfigMaps, ns, docs->at(0)).ok()) ++failures;
      }
    });
  }
  for (auto& w : writers) w.join();
  double create_secs = secondsSince(create_start);

  // Average JSON size of one object as the server returns it.
  auto sample = client->get(kube::resources::kConfigMaps, ns, "cm-0");
  double json_bytes = static_cast<double>(json::dump(*sample).size());
  std::printf("# informer scale: %zu ConfigMaps, %zu-byte payload, %.0f B of JSON each\n\n", n,
              payload, json_bytes);
  std::printf("created %zu objects in %.1f s (%.0f writes/s, %zu failed)\n\n", n, create_secs,
              static_cast<double>(n) / create_secs, failures.load());
  std::printf(
      "| cache                  | list+sync  | throughput       | RSS/object  | vs JSON |\n");
  std::printf(
      "|------------------------|------------|------------------|-------------|---------|\n");
  measureCache<ConfigMap>("typed (meta + data)", client, ns, n, json_bytes);
  measureCache<kube::Unstructured>("Unstructured (JSON)", client, ns, n, json_bytes);

  // Watch throughput: the informer counts MODIFIED events while 4 writers patch every object.
  std::atomic<size_t> seen{0};
  kube::Informer<ConfigMap> inf(client, kube::resources::kConfigMaps, {.namespace_ = ns});
  inf.addHandlers({.on_update = [&](const auto&, const auto&) { ++seen; }});
  inf.start();
  inf.waitForSync(std::chrono::minutes(5));
  auto watch_start = Steady::now();
  next = 0;
  writers.clear();
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) {
        (void)client->patch(kube::resources::kConfigMaps, ns, "cm-" + std::to_string(i),
                            kube::PatchType::kMerge, R"({"data":{"index":"patched"}})");
      }
    });
  }
  for (auto& w : writers) w.join();
  double write_secs = secondsSince(watch_start);
  while (seen < n && secondsSince(watch_start) < 300) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  double watch_secs = secondsSince(watch_start);
  std::printf(
      "\nwatch: %zu updates written in %.2f s (%.0f/s); informer delivered %zu events, "
      "the last %.0f ms after the last write (%.0f events/s end to end)\n",
      n, write_secs, static_cast<double>(n) / write_secs, seen.load(),
      (watch_secs - write_secs) * 1000, static_cast<double>(seen) / watch_secs);
  return 0;
}
