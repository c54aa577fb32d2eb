// Informers against a real API server, including the failures they exist to survive: an API
// server restart and an etcd compaction while the watch was down.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "base/parallel.h"
#include "base/yaml.h"
#include "kube/informer.h"
#include "support/control_plane.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::ControlPlane;
using sriovdra::testing::eventually;

namespace {

json::Document configMap(const std::string& ns, const std::string& name, const std::string& v) {
  auto docs = yamlToJson("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name +
                         ", namespace: " + ns + "}\ndata: {v: \"" + v + "\"}\n");
  SDRA_CHECK(docs.ok());  // also called from helper threads, where Catch2 macros are unsafe
  return std::move(docs->at(0));
}

// name -> resourceVersion of every ConfigMap in ns, as the server has them.
std::map<std::string, std::string> serverState(kube::Client& client, const std::string& ns) {
  std::map<std::string, std::string> out;
  kube::ListOptions opts;
  opts.limit = 1000;
  for (;;) {
    auto page = client.list(kube::resources::kConfigMaps, ns, opts);
    REQUIRE(page.ok());
    for (const auto& item : (*page)["items"].GetArray()) {
      auto m = kube::ObjectMeta::decode(item);
      out[m.name] = m.resource_version;
    }
    opts.continue_token = json::stringOr((*page)["metadata"], "continue");
    if (opts.continue_token.empty()) return out;
  }
}

std::map<std::string, std::string> cacheState(const kube::Informer<kube::Unstructured>& inf) {
  std::map<std::string, std::string> out;
  for (const auto& obj : inf.list()) out[obj->metadata.name] = obj->metadata.resource_version;
  return out;
}

std::string describe(const std::map<std::string, std::string>& server,
                     const std::map<std::string, std::string>& cache) {
  std::string out = "server has " + std::to_string(server.size()) + " objects, cache has " +
                    std::to_string(cache.size());
  int shown = 0;
  for (const auto& [k, v] : server) {
    auto it = cache.find(k);
    if ((it == cache.end() || it->second != v) && shown++ < 5) {
      out.append("; ").append(k).append(" rv ").append(v).append(" cached as ");
      out.append(it == cache.end() ? "missing" : it->second);
    }
  }
  return out;
}

void expectConverged(kube::Client& client, const std::string& ns,
                     const kube::Informer<kube::Unstructured>& inf) {
  eventually([&] { return serverState(client, ns) == cacheState(inf); }, 60s,
             [&] { return describe(serverState(client, ns), cacheState(inf)); });
}

// Records what the handlers saw.
struct Recorder {
  std::mutex mu;
  std::vector<std::string> events;
  void add(std::string e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }
  bool has(const std::string& e) {
    std::lock_guard lock(mu);
    return std::find(events.begin(), events.end(), e) != events.end();
  }
  std::string all() {
    std::lock_guard lock(mu);
    std::string out;
    for (const auto& e : events) out += e + " ";
    return out;
  }
  kube::EventHandlers<kube::Unstructured> handlers() {
    return {.on_add = [this](const auto& o) { add("add:" + o->metadata.name); },
            .on_update = [this](const auto&, const auto& n) { add("update:" + n->metadata.name); },
            .on_delete =
                [this](const auto& o, bool unknown) {
                  add(std::string(unknown ? "delete-unknown:" : "delete:") + o->metadata.name);
                }};
  }
};

kube::InformerOptions inNamespace(const std::string& ns) {
  kube::InformerOptions o;
  o.namespace_ = ns;
  o.backoff.initial = 200ms;  // keeps the restart tests short; the policy shape is unchanged
  return o;
}

}  // namespace

TEST_CASE("an informer over 2,000 objects converges to the server's state",
          "[informer][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("informer");
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 2000; i += 4) {
        auto cm = configMap(ns, "cm-" + std::to_string(i), "0");
        if (!client->create(kube::resources::kConfigMaps, ns, cm).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(failures == 0);

  Recorder rec;
  kube::Informer<kube::Unstructured> inf(client, kube::resources::kConfigMaps, inNamespace(ns));
  inf.addHandlers(rec.handlers());
  // Cached objects whose data.v is `v`: the cache holds the objects' current content.
  auto withValue = [&inf](const std::string& v) {
    size_t n = 0;
    for (const auto& u : inf.list()) {
      auto doc = json::parse(u->json);
      n += doc.ok() && json::stringOr((*doc)["data"], "v") == v ? 1 : 0;
    }
    return n;
  };
  inf.start();
  REQUIRE(inf.waitForSync(60s));
  CHECK(inf.size() == 2000);
  CHECK(withValue("0") == 2000);

  for (int i = 0; i < 100; ++i) {
    REQUIRE(client->remove(kube::resources::kConfigMaps, ns, "cm-" + std::to_string(i)).isOk());
    REQUIRE(client
                ->patch(kube::resources::kConfigMaps, ns, "cm-" + std::to_string(1000 + i),
                        kube::PatchType::kMerge, R"({"data":{"v":"1"}})")
                .ok());
  }
  REQUIRE(client->create(kube::resources::kConfigMaps, ns, configMap(ns, "late", "2")).ok());
  expectConverged(*client, ns, inf);
  CHECK(inf.size() == 1901);
  CHECK(withValue("1") == 100);
  CHECK(inf.get(ns, "late") != nullptr);
  CHECK(inf.get(ns, "cm-5") == nullptr);
  CHECK(rec.has("delete:cm-5"));
  CHECK(rec.has("update:cm-1005"));
  CHECK(rec.has("add:late"));
}

TEST_CASE("an informer survives a kube-apiserver restart without a process restart",
          "[informer][integration][restart]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("restart");
  for (int i = 0; i < 20; ++i) {
    REQUIRE(
        client
            ->create(kube::resources::kConfigMaps, ns, configMap(ns, "r" + std::to_string(i), "0"))
            .ok());
  }
  Recorder rec;
  kube::Informer<kube::Unstructured> inf(client, kube::resources::kConfigMaps, inNamespace(ns));
  inf.addHandlers(rec.handlers());
  inf.start();
  REQUIRE(inf.waitForSync(30s));

  cp.stopApiServer(SIGKILL);
  cp.startApiServer();
  REQUIRE(client->remove(kube::resources::kConfigMaps, ns, "r3").isOk());
  REQUIRE(
      client->create(kube::resources::kConfigMaps, ns, configMap(ns, "after-restart", "1")).ok());
  REQUIRE(client
              ->patch(kube::resources::kConfigMaps, ns, "r7", kube::PatchType::kMerge,
                      R"({"data":{"v":"9"}})")
              .ok());
  expectConverged(*client, ns, inf);
  CHECK(inf.get(ns, "r3") == nullptr);
  CHECK(inf.get(ns, "after-restart") != nullptr);
  eventually([&] { return rec.has("add:after-restart") && rec.has("update:r7"); }, 10s,
             [&] { return rec.all(); });
}

TEST_CASE(
    "after etcd compaction while the watch is down the informer relists and reports "
    "the deletion",
    "[informer][integration][restart]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("compact");
  for (const char* name : {"keep", "doomed"}) {
    REQUIRE(client->create(kube::resources::kConfigMaps, ns, configMap(ns, name, "0")).ok());
  }
  Recorder rec;
  kube::Informer<kube::Unstructured> inf(client, kube::resources::kConfigMaps, inNamespace(ns));
  inf.addHandlers(rec.handlers());
  inf.start();
  REQUIRE(inf.waitForSync(30s));
  std::string rv_before = inf.reflector().lastSyncResourceVersion();
  int64_t lists_before = inf.reflector().listCount();

  // The informer's API server goes away; meanwhile a second API server on the same etcd is used
  // to delete an object, and etcd's history is compacted past the informer's resourceVersion.
  cp.stopApiServer(SIGKILL);
  kube::RestConfig second = cp.restConfig();
  second.server = cp.startSecondApiServer();
  auto other = *kube::Client::create(second);
  REQUIRE(other->remove(kube::resources::kConfigMaps, ns, "doomed").isOk());
  for (int i = 0; i < 10; ++i) {
    REQUIRE(
        other->create(kube::resources::kConfigMaps, ns, configMap(ns, "n" + std::to_string(i), "1"))
            .ok());
  }
  int64_t compacted = cp.compactEtcd();
  CHECK(compacted > std::stoll(rv_before));
  cp.stopSecondApiServer();
  cp.startApiServer();

  eventually([&] { return rec.has("delete-unknown:doomed"); }, 60s, [&] { return rec.all(); });
  expectConverged(*client, ns, inf);
  CHECK(inf.reflector().listCount() > lists_before);
  CHECK(inf.get(ns, "keep") != nullptr);
  CHECK(inf.get(ns, "n9") != nullptr);
}

TEST_CASE(
    "writes made while the informer's API server was down reach it after the restart, without "
    "a relist loop",
    "[informer][integration][restart]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("catchup");
  REQUIRE(client->create(kube::resources::kConfigMaps, ns, configMap(ns, "before", "0")).ok());
  Recorder rec;
  kube::Informer<kube::Unstructured> inf(client, kube::resources::kConfigMaps, inNamespace(ns));
  inf.addHandlers(rec.handlers());
  inf.start();
  REQUIRE(inf.waitForSync(30s));
  int64_t lists_before = inf.reflector().listCount();

  // While it is down, a second API server writes. The restarted one's watch cache starts after
  // those writes, so it refuses a watch from the informer's resourceVersion (410), while etcd
  // still answers a list at exactly that version: relisting at it would go round forever.
  cp.stopApiServer(SIGKILL);
  kube::RestConfig second = cp.restConfig();
  second.server = cp.startSecondApiServer();
  auto other = *kube::Client::create(second);
  REQUIRE(other->create(kube::resources::kConfigMaps, ns, configMap(ns, "while-down", "1")).ok());
  cp.stopSecondApiServer();
  cp.startApiServer();

  eventually([&] { return rec.has("add:while-down"); }, 60s, [&] { return rec.all(); });
  expectConverged(*client, ns, inf);
  int64_t relists = inf.reflector().listCount() - lists_before;
  CHECK(relists >= 1);
  CHECK(relists <= 3);
}

TEST_CASE("resync replays the cache to update handlers without contacting the server",
          "[informer][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("resync");
  REQUIRE(client->create(kube::resources::kConfigMaps, ns, configMap(ns, "steady", "0")).ok());
  std::atomic<int> same_version_updates{0};
  auto opts = inNamespace(ns);
  opts.resync_period = 200ms;
  kube::Informer<kube::Unstructured> inf(client, kube::resources::kConfigMaps, opts);
  inf.addHandlers({.on_update = [&](const auto& old_obj, const auto& new_obj) {
    if (old_obj->metadata.resource_version == new_obj->metadata.resource_version) {
      ++same_version_updates;
    }
  }});
  inf.start();
  REQUIRE(inf.waitForSync(30s));
  eventually([&] { return same_version_updates >= 2; }, 10s,
             [&] { return std::to_string(same_version_updates) + " resync updates"; });
  CHECK(inf.reflector().listCount() == 1);
}

TEST_CASE("a metadata-only watch completes the writer's own writes and reads everyone else's",
          "[informer][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("metadata-watch");
  REQUIRE(client->create(kube::resources::kConfigMaps, ns, configMap(ns, "a", "0")).ok());
  auto opts = inNamespace(ns);
  opts.watch_metadata_only = true;
  kube::Informer<kube::Unstructured> inf(client, kube::resources::kConfigMaps, opts);
  Recorder rec;
  inf.addHandlers(rec.handlers());
  // The test's own write: the resourceVersion of its answer, known once `answered` is set. The
  // completion waits for it, as a writer's completion waits for its write's answer.
  std::mutex mu;
  std::condition_variable cv;
  bool answered = true;
  std::string own_rv;
  std::atomic<int> completions{0};
  inf.setCompletion([&](const kube::ObjectMeta& meta,
                        const auto& cached) -> kube::Informer<kube::Unstructured>::Ptr {
    std::unique_lock lock(mu);
    cv.wait_for(lock, 10s, [&] { return answered; });
    if (!cached || meta.resource_version != own_rv) return nullptr;
    ++completions;
    return std::make_shared<const kube::Unstructured>(
        kube::Unstructured{meta, R"({"completed":true})"});
  });
  inf.start();
  REQUIRE(inf.waitForSync(30s));
  auto cachedJson = [&] {
    auto obj = inf.get(ns, "a");
    return obj ? obj->json : std::string("(none)");
  };
  auto cachedValue = [&] {
    auto doc = json::parse(cachedJson());
    return doc.ok() && doc->HasMember("data") ? json::stringOr((*doc)["data"], "v") : "";
  };

  SECTION("someone else's change is read whole; the writer's own is completed, not read") {
    REQUIRE(client
                ->patch(kube::resources::kConfigMaps, ns, "a", kube::PatchType::kMerge,
                        R"({"data":{"v":"1"}})")
                .ok());
    eventually([&] { return cachedValue() == "1"; }, 30s, cachedJson);
    CHECK(completions == 0);

    {
      std::lock_guard lock(mu);
      answered = false;
    }
    auto written = client->patch(kube::resources::kConfigMaps, ns, "a", kube::PatchType::kMerge,
                                 R"({"data":{"v":"2"}})");
    REQUIRE(written.ok());
    {
      std::lock_guard lock(mu);
      own_rv = kube::ObjectMeta::decode(*written).resource_version;
      answered = true;
    }
    cv.notify_all();
    eventually([&] { return cachedJson() == R"({"completed":true})"; }, 30s, cachedJson);
    CHECK(inf.get(ns, "a")->metadata.resource_version == own_rv);
    CHECK(completions == 1);
    CHECK(rec.has("update:a"));
  }

  SECTION("additions are read, deletions need no read") {
    REQUIRE(client->create(kube::resources::kConfigMaps, ns, configMap(ns, "b", "5")).ok());
    eventually([&] { return inf.get(ns, "b") != nullptr; }, 30s, [] { return "b not cached"; });
    auto doc = json::parse(inf.get(ns, "b")->json);
    REQUIRE(doc.ok());
    CHECK(json::stringOr((*doc)["data"], "v") == "5");
    REQUIRE(client->remove(kube::resources::kConfigMaps, ns, "a").isOk());
    eventually([&] { return inf.get(ns, "a") == nullptr; }, 30s, cachedJson);
    CHECK(rec.has("add:b"));
    CHECK(rec.has("delete:a"));
    CHECK(completions == 0);
  }
}

TEST_CASE("a metadata-only watch applies changes that arrived together in the server's order",
          "[informer][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("metadata-burst");
  constexpr int kObjects = 40;
  for (int i = 0; i < kObjects; ++i) {
    REQUIRE(
        client
            ->create(kube::resources::kConfigMaps, ns, configMap(ns, "c-" + std::to_string(i), "0"))
            .ok());
  }
  auto opts = inNamespace(ns);
  opts.watch_metadata_only = true;
  kube::Informer<kube::Unstructured> inf(client, kube::resources::kConfigMaps, opts);
  // The values each object's handlers saw, in order.
  std::mutex mu;
  std::map<std::string, std::vector<std::string>> seen;
  std::set<std::string> deleted;
  auto valueOf = [](const auto& obj) {
    auto doc = json::parse(obj->json);
    SDRA_CHECK(doc.ok());
    const json::Value* data = json::objectMember(*doc, "data");
    return data != nullptr ? std::string(json::stringOr(*data, "v")) : std::string();
  };
  auto record = [&](const kube::Informer<kube::Unstructured>::Ptr& o) {
    std::lock_guard lock(mu);
    seen[o->metadata.name].push_back(valueOf(o));
  };
  inf.addHandlers({.on_add = record,
                   .on_update = [&](const auto&, const auto& o) { record(o); },
                   .on_delete =
                       [&](const auto& o, bool) {
                         std::lock_guard lock(mu);
                         deleted.insert(o->metadata.name);
                       }});
  // The first change's completion holds the informer until the burst has been written, so the
  // rest of it arrives together; nothing is completed, everything is read.
  std::mutex gate_mu;
  std::condition_variable gate;
  bool open = false;
  inf.setCompletion([&](const kube::ObjectMeta&, const auto&) {
    std::unique_lock lock(gate_mu);
    gate.wait_for(lock, 30s, [&] { return open; });
    return kube::Informer<kube::Unstructured>::Ptr();
  });
  inf.start();
  REQUIRE(inf.waitForSync(30s));

  // Every object changes three times; five are deleted and five new ones added meanwhile.
  forEachConcurrently(kObjects, 4, [&](size_t i) {
    std::string name = "c-" + std::to_string(i);
    for (const char* v : {"1", "2", "3"}) {
      SDRA_CHECK(client
                     ->patch(kube::resources::kConfigMaps, ns, name, kube::PatchType::kMerge,
                             std::string(R"({"data":{"v":")") + v + R"("}})")
                     .ok());
    }
    if (i < 5) {
      SDRA_CHECK(client->remove(kube::resources::kConfigMaps, ns, name).isOk());
      SDRA_CHECK(client
                     ->create(kube::resources::kConfigMaps, ns,
                              configMap(ns, "d-" + std::to_string(i), "new"))
                     .ok());
    }
  });
  {
    std::lock_guard lock(gate_mu);
    open = true;
  }
  gate.notify_all();
  expectConverged(*client, ns, inf);

  std::lock_guard lock(mu);
  for (int i = 0; i < kObjects; ++i) {
    std::string name = "c-" + std::to_string(i);
    INFO(name);
    const auto& values = seen[name];
    REQUIRE_FALSE(values.empty());
    // Each object's versions arrive in order; versions changed again before they were read are
    // skipped, never repeated or reordered; a deleted object's are gone with it.
    CHECK(std::is_sorted(values.begin(), values.end()));
    CHECK(std::adjacent_find(values.begin(), values.end()) == values.end());
    if (i < 5) {
      CHECK(deleted.count(name) == 1);
    } else {
      CHECK(values.back() == "3");
      CHECK(deleted.count(name) == 0);
    }
  }
  for (int i = 0; i < 5; ++i) {
    CHECK(seen["d-" + std::to_string(i)] == std::vector<std::string>{"new"});
  }
}

TEST_CASE("a metadata-only watch's change whose read fails comes again until it can be read",
          "[informer][integration]") {
  auto& cp = ControlPlane::shared();
  auto admin = cp.client();
  std::string ns = cp.newNamespace("metadata-forbidden");
  REQUIRE(admin->create(kube::resources::kConfigMaps, ns, configMap(ns, "a", "0")).ok());
  REQUIRE(admin->create(kube::resources::kConfigMaps, ns, configMap(ns, "b", "0")).ok());
  // user-a may list and watch ConfigMaps here, not read one: every read of a change fails.
  cp.applyYaml(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: cm-watch}\n"
      "rules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [list, watch]}]\n",
      ns);
  cp.bindRole("Role", "cm-watch", "user-a", ns);
  auto opts = inNamespace(ns);
  opts.watch_metadata_only = true;
  kube::Informer<kube::Unstructured> inf(cp.client("user-a"), kube::resources::kConfigMaps, opts);
  // Called before each read of a change of "a" (and completing none): each call is one delivery.
  std::atomic<int> deliveries_of_a{0};
  inf.setCompletion([&](const kube::ObjectMeta& meta, const auto&) {
    if (meta.name == "a") ++deliveries_of_a;
    return kube::Informer<kube::Unstructured>::Ptr();
  });
  inf.start();
  REQUIRE(inf.waitForSync(30s));
  auto listed_rv = inf.get(ns, "a")->metadata.resource_version;

  for (const char* name : {"a", "b"}) {
    REQUIRE(admin
                ->patch(kube::resources::kConfigMaps, ns, name, kube::PatchType::kMerge,
                        R"({"data":{"v":"1"}})")
                .ok());
  }
  // The change of "a" came again after its read was refused, and the refusals stored nothing.
  eventually([&] { return deliveries_of_a >= 2; }, 30s,
             [&] { return std::to_string(deliveries_of_a.load()) + " deliveries of a's change"; });
  CHECK(inf.get(ns, "a")->metadata.resource_version == listed_rv);
  cp.applyYaml(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: cm-read}\n"
      "rules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}]\n",
      ns);
  cp.bindRole("Role", "cm-read", "user-a", ns);
  expectConverged(*admin, ns, inf);
  CHECK(inf.reflector().listCount() == 1);  // brought by the watch resuming, not a relist
}
