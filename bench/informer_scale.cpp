// Scale driver for the informer: starts a real control plane, creates N ConfigMaps, and prints
// each figure beside its floor:
//   * list+sync of a typed and an Unstructured cache, beside the same pages listed by our client
//     without decoding them (measured first);
//   * resident memory per cached object, beside the object's JSON as the server sends it;
//   * watch: 4 writers patch every object; from the first write to the informer's last event,
//     beside the writes themselves;
//   * a metadata-only watch that reads every change, catching up with N changes that arrived
//     while it was held, beside the same N reads made by 8 threads.
// Usage: informer_scale [N=10000] [payload bytes per object=256]
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include <malloc.h>
#include <unistd.h>

#include "base/parallel.h"
#include "base/yaml.h"
#include "kube/informer.h"
#include "support/control_plane.h"
#include "support/figures.h"
#include "support/floor.h"

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

struct CacheFigures {
  double sync_seconds = 0;
  double bytes_per_object = 0;
};

template <typename T>
CacheFigures measureCache(std::shared_ptr<kube::Client> client, const std::string& ns, size_t n) {
  size_t before = residentBytes();
  auto start = Steady::now();
  auto inf = std::make_unique<kube::Informer<T>>(client, kube::resources::kConfigMaps,
                                                 kube::InformerOptions{.namespace_ = ns});
  inf->start();
  if (!inf->waitForSync(std::chrono::minutes(5)) || inf->size() != n) {
    std::fprintf(stderr, "bench: informer did not sync (%zu of %zu)\n", inf->size(), n);
    std::exit(2);
  }
  CacheFigures f;
  f.sync_seconds = secondsSince(start);
  size_t after = residentBytes();
  f.bytes_per_object = static_cast<double>(after - before) / static_cast<double>(n);
  inf->stop();
  return f;
}

// The informer's list requests (consistent reads, pages of 500) without decoding: the floor
// of list+sync.
double listPages(kube::Client& client, const std::string& ns) {
  auto start = Steady::now();
  kube::ListOptions opts{.limit = 500};
  for (;;) {
    auto page = client.list(kube::resources::kConfigMaps, ns, opts);
    if (!page.ok()) {
      std::fprintf(stderr, "bench: listing: %s\n", page.status().toString().c_str());
      std::exit(2);
    }
    std::string next(json::stringOr(*json::objectMember(*page, "metadata"), "continue"));
    if (next.empty()) break;
    opts.continue_token = next;
  }
  return secondsSince(start);
}

}  // namespace

// Long on purpose: the bench as a reader checks it, set-up, each measurement, then the report
// in the order it prints them; every step is a few lines of its own.
// NOLINTNEXTLINE(readability-function-size)
int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::stoul(argv[1]) : 10000;
  size_t payload = argc > 2 ? std::stoul(argv[2]) : 256;
  log::setVerbosity(-1);
  auto cp = testing::ControlPlane::start({.install_product_crds = false});
  auto client = cp->client();
  std::string ns = cp->newNamespace("scale");
  std::string filler(payload, 'x');

  auto create_start = Steady::now();
  std::atomic<size_t> failures{0};
  forEachConcurrently(n, 4, [&](size_t i) {
    std::string yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-";
    yaml.append(std::to_string(i)).append(", namespace: ").append(ns);
    yaml.append(", labels: {app: bench, shard: s").append(std::to_string(i % 16));
    yaml.append("}}\ndata: {payload: ").append(filler).append(", index: \"");
    yaml.append(std::to_string(i)).append("\"}\n");
    auto docs = yamlToJson(yaml);
    if (!client->create(kube::resources::kConfigMaps, ns, docs->at(0)).ok()) ++failures;
  });
  double create_secs = secondsSince(create_start);

  // Average JSON size of one object as the server returns it.
  auto sample = client->get(kube::resources::kConfigMaps, ns, "cm-0");
  double json_bytes = static_cast<double>(json::dump(*sample).size());
  double list_floor = listPages(*client, ns);
  auto typed = measureCache<ConfigMap>(client, ns, n);
  auto unstructured = measureCache<kube::Unstructured>(client, ns, n);

  // Watch throughput: the informer counts MODIFIED events while 4 writers patch every object.
  std::atomic<size_t> seen{0};
  kube::Informer<ConfigMap> inf(client, kube::resources::kConfigMaps, {.namespace_ = ns});
  inf.addHandlers({.on_update = [&](const auto&, const auto&) { ++seen; }});
  inf.start();
  inf.waitForSync(std::chrono::minutes(5));
  auto watch_start = Steady::now();
  forEachConcurrently(n, 4, [&](size_t i) {
    (void)client->patch(kube::resources::kConfigMaps, ns, "cm-" + std::to_string(i),
                        kube::PatchType::kMerge, R"({"data":{"index":"patched"}})");
  });
  double write_secs = secondsSince(watch_start);
  while (seen < n && secondsSince(watch_start) < 300) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  double watch_secs = secondsSince(watch_start);
  inf.stop();

  // A metadata-only watch that completes nothing (every change is someone else's, read whole),
  // catching up: its first change holds it until all the patches are written, then it reads the
  // rest, which arrive together. Beside the same reads (each at its change's resourceVersion, from
  // the API server's watch cache) made by 8 threads.
  std::atomic<size_t> read{0};
  std::mutex gate_mu;
  std::condition_variable gate;
  bool written = false;
  kube::Informer<ConfigMap> reader(client, kube::resources::kConfigMaps,
                                   {.namespace_ = ns, .watch_metadata_only = true});
  reader.addHandlers({.on_update = [&](const auto&, const auto&) {
    std::unique_lock lock(gate_mu);
    gate.wait(lock, [&] { return written; });
    ++read;
  }});
  reader.start();
  reader.waitForSync(std::chrono::minutes(5));
  std::vector<std::string> versions(n);  // each patch's resourceVersion
  forEachConcurrently(n, 4, [&](size_t i) {
    auto patched = client->patch(kube::resources::kConfigMaps, ns, "cm-" + std::to_string(i),
                                 kube::PatchType::kMerge, R"({"data":{"index":"patched again"}})");
    if (patched.ok()) versions[i] = kube::ObjectMeta::decode(*patched).resource_version;
  });
  auto catch_up_start = Steady::now();
  {
    std::lock_guard lock(gate_mu);
    written = true;
  }
  gate.notify_all();
  while (read < n && secondsSince(catch_up_start) < 300) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  double catch_up_secs = secondsSince(catch_up_start);
  reader.stop();
  auto reads_start = Steady::now();
  forEachConcurrently(n, 8, [&](size_t i) {
    (void)client->getNotOlderThan(kube::resources::kConfigMaps, ns, "cm-" + std::to_string(i),
                                  versions[i]);
  });
  double reads_secs = secondsSince(reads_start);

  std::string objects = std::to_string(n) + " ConfigMaps";
  bench::Report report("informer scale: " + objects + ", " + std::to_string(payload) +
                       "-byte payload, " + std::to_string(static_cast<long>(json_bytes)) +
                       " B of JSON each");
  report.add({"informer_sync_typed", "list+sync, typed cache (metadata + data)", typed.sync_seconds,
              list_floor, bench::Unit::kSeconds, "the same pages listed, not decoded"});
  report.add({"informer_sync_unstructured", "list+sync, Unstructured cache (compact JSON)",
              unstructured.sync_seconds, list_floor, bench::Unit::kSeconds,
              "the same pages listed, not decoded"});
  report.add({"informer_memory_typed", "resident memory per object, typed cache",
              typed.bytes_per_object, json_bytes, bench::Unit::kCount, "bytes of its JSON"});
  report.add({"informer_memory_unstructured", "resident memory per object, Unstructured cache",
              unstructured.bytes_per_object, json_bytes, bench::Unit::kCount, "bytes of its JSON"});
  report.add({"informer_watch", "watch: first write to the last event delivered", watch_secs,
              write_secs, bench::Unit::kSeconds,
              "the " + std::to_string(n) + " patches, 4 writers"});
  report.add(
      {"informer_watch_metadata_catch_up",
       "metadata-only watch, every change read: catching up with " + std::to_string(n) + " changes",
       catch_up_secs, reads_secs, bench::Unit::kSeconds,
       "the " + std::to_string(n) + " reads, 8 at a time"});
  report.note("created " + objects + " in " +
              bench::formatValue(create_secs, bench::Unit::kSeconds) + " with 4 writers (" +
              std::to_string(failures.load()) + " failed)");
  report.note("watch: " + std::to_string(seen.load()) + " of " + std::to_string(n) +
              " updates delivered; metadata-only watch: " + std::to_string(read.load()) + " of " +
              std::to_string(n) + " read");
  return report.print() ? 0 : 1;
}
