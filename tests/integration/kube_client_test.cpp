#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "base/yaml.h"
#include "metrics/registry.h"
#include "support/control_plane.h"
#include "support/metrics_text.h"

using namespace sriovdra;
using namespace std::chrono_literals;
using sriovdra::testing::ControlPlane;

namespace {

json::Document configMap(const std::string& ns, const std::string& name,
                         const std::map<std::string, std::string>& data) {
  json::Document doc = kube::newObject(kube::resources::kConfigMaps, ns, name);
  doc.AddMember("data", kube::encodeStringMap(data, doc.GetAllocator()), doc.GetAllocator());
  return doc;
}

std::string dataOf(const json::Value& cm, const std::string& key) {
  const json::Value* d = json::objectMember(cm, "data");
  return d ? std::string(json::stringOr(*d, key)) : "";
}

}  // namespace

TEST_CASE("create, get, update and delete a ConfigMap", "[kube][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("crud");

  auto created =
      client->create(kube::resources::kConfigMaps, ns, configMap(ns, "a", {{"k", "v1"}}));
  REQUIRE(created.ok());
  auto meta = kube::ObjectMeta::decode(*created);
  CHECK(meta.name == "a");
  CHECK_FALSE(meta.uid.empty());

  auto got = client->get(kube::resources::kConfigMaps, ns, "a");
  REQUIRE(got.ok());
  CHECK(dataOf(*got, "k") == "v1");

  auto update = configMap(ns, "a", {{"k", "v2"}});
  json::setString(update["metadata"], "resourceVersion", meta.resource_version,
                  update.GetAllocator());
  auto updated = client->update(kube::resources::kConfigMaps, ns, update);
  REQUIRE(updated.ok());
  CHECK(dataOf(*updated, "k") == "v2");

  SECTION("a stale resourceVersion is a 409 Conflict") {
    auto stale = client->update(kube::resources::kConfigMaps, ns, update);
    REQUIRE_FALSE(stale.ok());
    CHECK(stale.status().code() == Code::kConflict);
    CHECK(stale.status().httpStatus() == 409);
    CHECK(stale.status().message().find("the object has been modified") != std::string::npos);
  }
  SECTION("creating it again is AlreadyExists") {
    auto again = client->create(kube::resources::kConfigMaps, ns, configMap(ns, "a", {}));
    REQUIRE_FALSE(again.ok());
    CHECK(again.status().code() == Code::kAlreadyExists);
    CHECK(again.status().reason() == "AlreadyExists");
  }
  SECTION("delete honours a UID precondition, then removes the object") {
    kube::DeleteOptions wrong;
    wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
    Status st = client->remove(kube::resources::kConfigMaps, ns, "a", wrong);
    CHECK(st.code() == Code::kConflict);
    kube::DeleteOptions right;
    right.precondition_uid = meta.uid;
    right.propagation_policy = "Background";
    REQUIRE(client->remove(kube::resources::kConfigMaps, ns, "a", right).isOk());
    auto gone = client->get(kube::resources::kConfigMaps, ns, "a");
    REQUIRE_FALSE(gone.ok());
    CHECK(gone.status().code() == Code::kNotFound);
    CHECK(gone.status().httpStatus() == 404);
  }
}

namespace {

const kube::ResourceType kWidgets{"test.sriov-dra.io", "v1", "widgets", "Widget", true};

json::Document widget(const std::string& ns, const std::string& name, int size) {
  auto docs = yamlToJson(
      "apiVersion: test.sriov-dra.io/v1\nkind: Widget\nmetadata: {name: " + name +
      ", namespace: " + ns + "}\nspec: {size: " + std::to_string(size) + ", color: red}\n");
  SDRA_CHECK(docs.ok());  // also called from helper threads, where Catch2 macros are unsafe
  return std::move(docs->at(0));
}

}  // namespace

TEST_CASE("list pages through 2,000 objects with limit and continue", "[kube][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("paging");
  constexpr int kObjects = 2000;
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kObjects; i += kThreads) {
        if (!client->create(kWidgets, ns, widget(ns, "w-" + std::to_string(i), i % 10)).ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(failures == 0);

  std::set<std::string> names;
  int pages = 0;
  kube::ListOptions opts;
  opts.limit = 500;
  do {
    auto page = client->list(kWidgets, ns, opts);
    REQUIRE(page.ok());
    ++pages;
    for (const auto& item : (*page)["items"].GetArray()) {
      names.insert(kube::ObjectMeta::decode(item).name);
    }
    opts.continue_token = json::stringOr(*json::at(*page, {"metadata"}), "continue");
  } while (!opts.continue_token.empty());
  CHECK(pages == 4);
  CHECK(names.size() == kObjects);
}

TEST_CASE("the status subresource writes only status", "[kube][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("status");
  auto created = client->create(kWidgets, ns, widget(ns, "s", 3));
  REQUIRE(created.ok());

  json::Document with_status;
  with_status.CopyFrom(*created, with_status.GetAllocator());
  auto& a = with_status.GetAllocator();
  json::Value status(rapidjson::kObjectType);
  json::setString(status, "phase", "Ready", a);
  json::set(with_status, "status", std::move(status), a);
  json::set(with_status["spec"], "size", json::Value(7), a);

  auto after_status = client->update(kWidgets, ns, with_status, {}, "status");
  REQUIRE(after_status.ok());
  CHECK(json::stringOr(*json::at(*after_status, {"status"}), "phase") == "Ready");
  CHECK(json::intOr(*json::at(*after_status, {"spec"}), "size", -1) == 3);

  auto& md = with_status["metadata"];
  json::setString(md, "resourceVersion", kube::ObjectMeta::decode(*after_status).resource_version,
                  a);
  json::setString(with_status["status"], "phase", "Ignored", a);
  auto after_main = client->update(kWidgets, ns, with_status);
  REQUIRE(after_main.ok());
  CHECK(json::intOr(*json::at(*after_main, {"spec"}), "size", -1) == 7);
  CHECK(json::stringOr(*json::at(*after_main, {"status"}), "phase") == "Ready");
}

TEST_CASE("writeStatus updates under a version and applies once the object moved on",
          "[kube][metrics][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("writestatus");
  auto created = client->create(kWidgets, ns, widget(ns, "w", 3));
  REQUIRE(created.ok());
  auto statusOf = [&](const char* phase) {
    json::Document doc = kube::newObject(kWidgets, ns, "w");
    json::Value status(rapidjson::kObjectType);
    json::setString(status, "phase", phase, doc.GetAllocator());
    json::set(doc, "status", std::move(status), doc.GetAllocator());
    return doc;
  };
  auto count = [&](const std::string& code, const std::string& method) {
    double v = testing::sampleValue(metrics::renderText(),
                                    "rest_client_requests_total{code=\"" + code + "\",host=\"" +
                                        client->host() + "\",method=\"" + method + "\"}");
    return std::isnan(v) ? 0.0 : v;
  };
  const kube::WriteOptions options{.field_manager = "status-writer"};
  double puts = count("200", "PUT");
  auto first = client->writeStatus(kWidgets, ns, statusOf("Ready"),
                                   kube::ObjectMeta::decode(*created).resource_version, options);
  REQUIRE(first.ok());
  CHECK(json::stringOr(*json::at(*first, {"status"}), "phase") == "Ready");
  CHECK(count("200", "PUT") == puts + 1);

  // Someone else changes the spec: the version the writer knows is old now.
  json::Document bigger;
  bigger.CopyFrom(*first, bigger.GetAllocator());
  json::set(bigger["spec"], "size", json::Value(9), bigger.GetAllocator());
  REQUIRE(client->update(kWidgets, ns, bigger).ok());
  double conflicts = count("409", "PUT");
  double patches = count("200", "PATCH");
  auto second = client->writeStatus(kWidgets, ns, statusOf("Degraded"),
                                    kube::ObjectMeta::decode(*first).resource_version, options);
  REQUIRE(second.ok());
  CHECK(count("409", "PUT") == conflicts + 1);
  CHECK(count("200", "PATCH") == patches + 1);
  auto now = client->get(kWidgets, ns, "w");
  REQUIRE(now.ok());
  CHECK(json::stringOr(*json::at(*now, {"status"}), "phase") == "Degraded");
  CHECK(json::intOr(*json::at(*now, {"spec"}), "size", -1) == 9);
}

TEST_CASE(
    "replace writes under the known version, and once more under the server's when it moved on",
    "[kube][metrics][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("replace");
  auto count = [&](const std::string& code, const std::string& method) {
    double v = testing::sampleValue(metrics::renderText(),
                                    "rest_client_requests_total{code=\"" + code + "\",host=\"" +
                                        client->host() + "\",method=\"" + method + "\"}");
    return std::isnan(v) ? 0.0 : v;
  };
  // The writer's object: its size and its label, under the metadata it is written over.
  auto body = [&](int size) {
    return [&ns, size,
            text = std::string()](const kube::ObjectMeta* current) mutable -> std::string_view {
      auto doc = widget(ns, "w", size);
      kube::ObjectMeta meta;
      if (current) meta = *current;
      meta.labels["writer"] = "replace";
      meta.encode(doc["metadata"], doc.GetAllocator());
      text = json::dump(doc);
      return text;
    };
  };
  const kube::WriteOptions options{.field_manager = "replacer", .metadata_only = true};
  auto sizeOf = [&]() {
    auto now = client->get(kWidgets, ns, "w");
    REQUIRE(now.ok());
    return json::intOr(*json::at(*now, {"spec"}), "size", -1);
  };

  double posts = count("201", "POST");
  auto created = client->replace(kWidgets, ns, "w", nullptr, body(3), options);
  REQUIRE(created.ok());
  CHECK(count("201", "POST") == posts + 1);
  auto known = kube::ObjectMeta::decode(*created);
  CHECK(known.labels.at("writer") == "replace");
  CHECK(sizeOf() == 3);

  SECTION("an update under the known version keeps the status") {
    REQUIRE(client
                ->writeStatus(kWidgets, ns,
                              [&] {
                                auto doc = kube::newObject(kWidgets, ns, "w");
                                json::Value status(rapidjson::kObjectType);
                                json::setString(status, "phase", "Ready", doc.GetAllocator());
                                json::set(doc, "status", std::move(status), doc.GetAllocator());
                                return doc;
                              }(),
                              known.resource_version, {.field_manager = "status-writer"})
                .ok());
    auto now = client->get(kWidgets, ns, "w");
    REQUIRE(now.ok());
    known = kube::ObjectMeta::decode(*now);
    double puts = count("200", "PUT");
    auto updated = client->replace(kWidgets, ns, "w", &known, body(4), options);
    REQUIRE(updated.ok());
    CHECK(count("200", "PUT") == puts + 1);
    CHECK(sizeOf() == 4);
    auto after = client->get(kWidgets, ns, "w");
    REQUIRE(after.ok());
    CHECK(json::stringOr(*json::at(*after, {"status"}), "phase") == "Ready");
  }
  SECTION("someone else's label since the known version: read again, written over, kept") {
    REQUIRE(client
                ->patch(kWidgets, ns, "w", kube::PatchType::kMerge,
                        R"({"metadata":{"labels":{"team":"net"}}})")
                .ok());
    double conflicts = count("409", "PUT");
    double gets = count("200", "GET");
    auto updated = client->replace(kWidgets, ns, "w", &known, body(5), options);
    REQUIRE(updated.ok());
    CHECK(count("409", "PUT") == conflicts + 1);
    CHECK(count("200", "GET") == gets + 1);
    auto meta = kube::ObjectMeta::decode(*updated);
    CHECK(meta.labels.at("team") == "net");
    CHECK(meta.labels.at("writer") == "replace");
    CHECK(sizeOf() == 5);
  }
  SECTION("deleted since the known version: created again") {
    REQUIRE(client->remove(kWidgets, ns, "w").isOk());
    auto again = client->replace(kWidgets, ns, "w", &known, body(6), options);
    REQUIRE(again.ok());
    CHECK(kube::ObjectMeta::decode(*again).uid != known.uid);
    CHECK(sizeOf() == 6);
  }
  SECTION("created by someone else while the writer knew of none: updated") {
    double exists = count("409", "POST");
    auto updated = client->replace(kWidgets, ns, "w", nullptr, body(7), options);
    REQUIRE(updated.ok());
    CHECK(count("409", "POST") == exists + 1);
    CHECK(kube::ObjectMeta::decode(*updated).uid == known.uid);
    CHECK(sizeOf() == 7);
  }
  SECTION("any other refusal is returned as the server gave it") {
    auto refused = client->replace(kWidgets, ns, "w", &known, body(11), options);  // over 10
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == Code::kInvalid);
    CHECK(sizeOf() == 3);
  }
}

TEST_CASE("API errors are typed and carry the server's message", "[kube][integration]") {
  auto& cp = ControlPlane::shared();
  std::string ns = cp.newNamespace("errors");

  SECTION("403 for a user without permissions") {
    auto got = cp.client("restricted")->list(kube::resources::kConfigMaps, ns);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == Code::kForbidden);
    CHECK(got.status().httpStatus() == 403);
    CHECK(got.status().message().find("User \"restricted\" cannot list resource \"configmaps\"") !=
          std::string::npos);
  }
  SECTION("422 with the validation message for an invalid object") {
    auto bad = cp.client()->create(kWidgets, ns, widget(ns, "too-big", 11));
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().code() == Code::kInvalid);
    CHECK(bad.status().httpStatus() == 422);
    CHECK(bad.status().reason() == "Invalid");
    CHECK(bad.status().message().find("spec.size") != std::string::npos);
    CHECK(bad.status().message().find("less than or equal to 10") != std::string::npos);
  }
  SECTION("401 for an unknown token") {
    auto cfg = cp.restConfig();
    cfg.bearer_token = "not-a-valid-token";
    auto client = kube::Client::create(cfg);
    REQUIRE(client.ok());
    auto got = (*client)->get(kube::resources::kNamespaces, "", ns);
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == Code::kUnauthorized);
  }
}

TEST_CASE("server-side apply conflicts between managers unless forced", "[kube][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("ssa");
  kube::WriteOptions alpha{.field_manager = "alpha"};
  auto first =
      client->apply(kube::resources::kConfigMaps, ns, configMap(ns, "shared", {{"k", "a"}}), alpha);
  REQUIRE(first.ok());
  CHECK(dataOf(*first, "k") == "a");

  kube::WriteOptions beta{.field_manager = "beta"};
  auto conflict =
      client->apply(kube::resources::kConfigMaps, ns, configMap(ns, "shared", {{"k", "b"}}), beta);
  REQUIRE_FALSE(conflict.ok());
  CHECK(conflict.status().code() == Code::kConflict);
  CHECK(conflict.status().message().find("conflict with \"alpha\"") != std::string::npos);

  beta.force = true;
  auto forced =
      client->apply(kube::resources::kConfigMaps, ns, configMap(ns, "shared", {{"k", "b"}}), beta);
  REQUIRE(forced.ok());
  CHECK(dataOf(*forced, "k") == "b");

  SECTION("merge and JSON patches") {
    auto merged = client->patch(kube::resources::kConfigMaps, ns, "shared", kube::PatchType::kMerge,
                                R"({"data":{"x":"1"}})");
    REQUIRE(merged.ok());
    CHECK(dataOf(*merged, "x") == "1");
    auto patched = client->patch(kube::resources::kConfigMaps, ns, "shared", kube::PatchType::kJson,
                                 R"([{"op":"replace","path":"/data/x","value":"2"}])");
    REQUIRE(patched.ok());
    CHECK(dataOf(*patched, "x") == "2");
    CHECK(dataOf(*patched, "k") == "b");
  }
}

TEST_CASE("a watch delivers ADDED, MODIFIED and DELETED in order", "[kube][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("watch");
  auto list = client->list(kube::resources::kConfigMaps, ns);
  REQUIRE(list.ok());
  kube::ListOptions opts;
  opts.resource_version = json::stringOr(*json::at(*list, {"metadata"}), "resourceVersion");
  opts.allow_watch_bookmarks = true;
  opts.timeout_seconds = 60;
  auto watch = client->watch(kube::resources::kConfigMaps, ns, opts);
  REQUIRE(watch.ok());

  REQUIRE(client->create(kube::resources::kConfigMaps, ns, configMap(ns, "w", {{"n", "1"}})).ok());
  REQUIRE(client
              ->patch(kube::resources::kConfigMaps, ns, "w", kube::PatchType::kMerge,
                      R"({"data":{"n":"2"}})")
              .ok());
  REQUIRE(client->remove(kube::resources::kConfigMaps, ns, "w").isOk());

  std::vector<std::string> seen;
  while (seen.size() < 3) {
    auto ev = (*watch)->next(10s);
    REQUIRE(ev.ok());
    REQUIRE(ev->has_value());
    if ((*ev)->type == kube::WatchEventType::kBookmark) continue;
    seen.push_back(std::string(kube::watchEventTypeName((*ev)->type)) + ":" +
                   dataOf((*ev)->object(), "n"));
  }
  CHECK(seen == std::vector<std::string>{"ADDED:1", "MODIFIED:2", "DELETED:2"});

  SECTION("an idle watch times out on the client's idle deadline") {
    auto ev = (*watch)->next(300ms);
    REQUIRE_FALSE(ev.ok());
    CHECK(ev.status().code() == Code::kTimeout);
  }
  SECTION("cancel() from another thread ends a blocked read") {
    std::thread canceller([&] {
      std::this_thread::sleep_for(200ms);
      (*watch)->cancel();
    });
    auto ev = (*watch)->next(30s);
    canceller.join();
    REQUIRE_FALSE(ev.ok());
    CHECK(ev.status().code() == Code::kCancelled);
  }
}

TEST_CASE("TLS verification failures name the reason", "[kube][integration]") {
  auto& cp = ControlPlane::shared();
  SECTION("a CA that did not sign the server certificate") {
    auto cfg = cp.restConfig();
    cfg.tls.ca_pem = http::makeCa("some-other-ca").cert;
    auto client = kube::Client::create(cfg);
    REQUIRE(client.ok());
    auto got = (*client)->raw("GET", "/version");
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == Code::kTlsVerification);
    CHECK(got.status().message().find("TLS verification") != std::string::npos);
    CHECK(got.status().message().find("unable to get local issuer certificate") !=
          std::string::npos);
  }
  SECTION("a server name the certificate does not carry") {
    auto cfg = cp.restConfig();
    cfg.tls.server_name = "wrong.example.com";
    auto got = (*kube::Client::create(cfg))->raw("GET", "/version");
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == Code::kTlsVerification);
    CHECK(got.status().message().find("hostname mismatch") != std::string::npos);
  }
  SECTION("insecure-skip-tls-verify, when the kubeconfig sets it, connects without a CA") {
    auto cfg = cp.restConfig();
    cfg.tls.ca_pem.clear();
    cfg.tls.insecure_skip_verify = true;
    auto got = (*kube::Client::create(cfg))->raw("GET", "/version");
    REQUIRE(got.ok());
    CHECK(got->status == 200);
  }
  SECTION("tls-server-name that the certificate does carry") {
    auto cfg = cp.restConfig();
    cfg.tls.server_name = "localhost";
    auto got = (*kube::Client::create(cfg))->raw("GET", "/version");
    REQUIRE(got.ok());
    CHECK(got->status == 200);
  }
}

TEST_CASE("requests are counted in rest_client_requests_total", "[kube][metrics][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  auto series = [&](const std::string& code, const std::string& method) {
    return "rest_client_requests_total{code=\"" + code + "\",host=\"" + client->host() +
           "\",method=\"" + method + "\"}";
  };
  double before_ok = testing::sampleValue(metrics::renderText(), series("200", "GET"));
  double before_404 = testing::sampleValue(metrics::renderText(), series("404", "GET"));
  REQUIRE(client->get(kube::resources::kNamespaces, "", "default").ok());
  REQUIRE_FALSE(client->get(kube::resources::kNamespaces, "", "does-not-exist").ok());
  std::string text = metrics::renderText();
  CHECK(testing::sampleValue(text, series("200", "GET")) ==
        (std::isnan(before_ok) ? 0 : before_ok) + 1);
  CHECK(testing::sampleValue(text, series("404", "GET")) ==
        (std::isnan(before_404) ? 0 : before_404) + 1);
}

TEST_CASE("a metadata-only write is answered with the object's metadata alone",
          "[kube][metrics][integration]") {
  auto& cp = ControlPlane::shared();
  auto client = cp.client();
  std::string ns = cp.newNamespace("metaonly");
  // What the API server sent for PATCH so far: its sum and count.
  auto sent = [&] {
    std::string text = metrics::renderText();
    std::string labels = "{host=\"" + client->host() + "\",verb=\"PATCH\"}";
    auto value = [&](const std::string& name) {
      double v = testing::sampleValue(text, name + labels);
      return std::isnan(v) ? 0.0 : v;
    };
    return std::make_pair(value("rest_client_response_size_bytes_sum"),
                          value("rest_client_response_size_bytes_count"));
  };
  constexpr size_t kPayload = size_t{200} * 1024;
  auto doc = configMap(ns, "big", {{"payload", std::string(kPayload, 'x')}});
  kube::WriteOptions options{.field_manager = "test", .force = true};

  auto before_whole = sent();
  auto whole = client->apply(kube::resources::kConfigMaps, ns, doc, options);
  REQUIRE(whole.ok());
  auto after_whole = sent();
  CHECK(dataOf(*whole, "payload").size() == kPayload);
  CHECK(after_whole.second == before_whole.second + 1);
  CHECK(after_whole.first - before_whole.first > kPayload);

  std::string changed(kPayload, 'y');
  doc["data"]["payload"].SetString(changed.c_str(), static_cast<rapidjson::SizeType>(kPayload),
                                   doc.GetAllocator());
  options.metadata_only = true;
  auto meta_only = client->apply(kube::resources::kConfigMaps, ns, doc, options);
  REQUIRE(meta_only.ok());
  auto after_meta = sent();
  CHECK_FALSE(meta_only->HasMember("data"));
  auto meta = kube::ObjectMeta::decode(*meta_only);
  CHECK(meta.name == "big");
  CHECK(meta.resource_version != kube::ObjectMeta::decode(*whole).resource_version);
  CHECK(after_meta.second == after_whole.second + 1);
  CHECK(after_meta.first - after_whole.first < 4096);  // the metadata, not the 200 KiB
  auto got = client->get(kube::resources::kConfigMaps, ns, "big");
  REQUIRE(got.ok());
  CHECK(dataOf(*got, "payload") == changed);
}
