#include "support/prometheus.h"

#include <cctype>

#include <catch2/catch.hpp>

#include "base/files.h"
#include "kube/transport.h"
#include "support/ports.h"

namespace sriovdra::testing {

using namespace std::chrono_literals;

bool prometheusQuery(int port, const std::string& query, json::Document* out) {
  auto t = kube::Transport::create("http://127.0.0.1:" + std::to_string(port), {});
  if (!t.ok()) return false;
  std::string target = "/api/v1/query?query=";
  for (unsigned char c : query) {
    static const char* kHex = "0123456789ABCDEF";
    if (std::isalnum(c) != 0 || c == '_') {
      target += static_cast<char>(c);
    } else {
      target += '%';
      target += kHex[c >> 4];
      target += kHex[c & 15];
    }
  }
  auto r = (*t)->send({"GET", target, "", "", "application/json", {}}, 5s);
  if (!r.ok() || r->status != 200) return false;
  return !out->Parse(r->body.c_str()).HasParseError();
}

ChildProcess startPrometheus(const std::string& dir, const std::string& config, int* port) {
  REQUIRE(writeFileAtomic(dir + "/prometheus.yml", config, 0644).isOk());
  *port = freePort();
  ProcessSpec spec;
  spec.argv = {"prometheus", "--config.file=" + dir + "/prometheus.yml",
               "--storage.tsdb.path=" + dir + "/data",
               "--web.listen-address=127.0.0.1:" + std::to_string(*port)};
  spec.kill_with_parent = true;
  spec.stdout_path = dir + "/prometheus.log";
  spec.stderr_path = dir + "/prometheus.log";
  auto prometheus = ChildProcess::spawn(spec);
  REQUIRE(prometheus.ok());
  return std::move(*prometheus);
}

size_t seriesCount(int port, const std::string& query) {
  json::Document doc;
  if (!prometheusQuery(port, query, &doc)) return 0;
  const json::Value* result = json::at(doc, {"data", "result"});
  return result != nullptr && result->IsArray() ? result->Size() : 0;
}

std::string prometheusLog(const std::string& dir) {
  auto text = readFile(dir + "/prometheus.log");
  return text.ok() ? *text : std::string("(no log)");
}

}  // namespace sriovdra::testing
