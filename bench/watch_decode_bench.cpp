// Client-side cost of a watch event, without a server: splitting the chunked stream into lines,
// parsing the JSON event and decoding the object (typed and Unstructured). The floor is parsing the
// same lines into a DOM and nothing else (BM_ParseLinesFloor): what any JSON client pays.
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "base/json.h"
#include "kube/client.h"
#include "kube/informer.h"

using namespace sriovdra;

namespace {

// Serves a prepared body in 16 KiB pieces, like a chunked response.
class MemoryStream final : public kube::HttpStream {
 public:
  explicit MemoryStream(const std::string& body) : body_(body) {}
  int status() const override { return 200; }
  Result<size_t> read(std::string& out, std::chrono::milliseconds) override {
    size_t n = std::min<size_t>(16384, body_.size() - pos_);
    out.append(body_, pos_, n);
    pos_ += n;
    return n;
  }
  void cancel() override {}

 private:
  const std::string& body_;
  size_t pos_ = 0;
};

std::string eventLine(int i) {
  return R"({"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-)" +
         std::to_string(i) +
         R"(","namespace":"scale-1","uid":"6f1c2d3e-1111-2222-3333-444455556666","resourceVersion":")" +
         std::to_string(100000 + i) +
         R"(","creationTimestamp":"2026-11-30T09:38:48Z","labels":{"app":"bench","shard":"s3"}},)"
         R"("data":{"index":")" +
         std::to_string(i) + R"(","payload":")" + std::string(256, 'x') + R"("}}})" + "\n";
}

struct ConfigMap {
  kube::ObjectMeta metadata;
  std::map<std::string, std::string> data;
  static Result<ConfigMap> decode(const json::Value& v) {
    return ConfigMap{kube::ObjectMeta::decode(v), kube::decodeStringMap(json::member(v, "data"))};
  }
};

template <typename T>
void BM_WatchEvents(benchmark::State& state) {  // NOLINT(readability-identifier-naming)
  constexpr int kEvents = 1000;
  std::string body;
  for (int i = 0; i < kEvents; ++i) body += eventLine(i);
  int64_t events = 0;
  for (auto _ : state) {
    kube::Watch watch(std::make_unique<MemoryStream>(body), "bench");
    for (;;) {
      auto ev = watch.next(std::chrono::seconds(1));
      if (!ev.ok() || !ev->has_value()) break;
      auto obj = T::decode((*ev)->object());
      benchmark::DoNotOptimize(obj);
      ++events;
    }
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(body.size()));
}

void BM_ParseLinesFloor(benchmark::State& state) {  // NOLINT(readability-identifier-naming)
  constexpr int kEvents = 1000;
  std::vector<std::string> lines;
  size_t bytes = 0;
  for (int i = 0; i < kEvents; ++i) {
    lines.push_back(eventLine(i));
    bytes += lines.back().size();
  }
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark's idiom
    for (const auto& line : lines) {
      auto doc = json::parse(line);
      benchmark::DoNotOptimize(doc);
    }
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kEvents,
                                                  benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

BENCHMARK(BM_ParseLinesFloor);
BENCHMARK_TEMPLATE(BM_WatchEvents, ConfigMap);
BENCHMARK_TEMPLATE(BM_WatchEvents, kube::Unstructured);

}  // namespace

BENCHMARK_MAIN();
