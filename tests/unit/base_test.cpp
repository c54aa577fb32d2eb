#include <atomic>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "base/base64.h"
#include "base/files.h"
#include "base/interner.h"
#include "base/json.h"
#include "base/names.h"
#include "base/parallel.h"
#include "base/process.h"
#include "base/time.h"
#include "base/yaml.h"
#include "support/temp_dir.h"

using namespace sriovdra;

TEST_CASE("YAML scalars resolve to JSON types; quoted ones stay strings", "[yaml][unit]") {
  struct Row {
    std::string yaml;
    std::string json;
  };
  std::vector<Row> rows = {
      {"a: 1", R"({"a":1})"},
      {"a: -7", R"({"a":-7})"},
      {"a: \"1\"", R"({"a":"1"})"},
      {"a: true", R"({"a":true})"},
      {"a: 'true'", R"({"a":"true"})"},
      {"a: null", R"({"a":null})"},
      {"a: ~", R"({"a":null})"},
      {"a: 1.5", R"({"a":1.5})"},
      {"a: 0000:0e:00.0", R"({"a":"0000:0e:00.0"})"},
      {"a: ibp14s0#0-3", R"({"a":"ibp14s0#0-3"})"},
      {"a: [x, 2]", R"({"a":["x",2]})"},
      {"a: {b: {c: d}}", R"({"a":{"b":{"c":"d"}}})"},
      {"a: 99999999999999999999", R"({"a":"99999999999999999999"})"},
      {"a: +5", R"({"a":5})"},
      {"a: .5e1", R"({"a":5.0})"},
      {"a: 1e", R"({"a":"1e"})"},
      {"a: 1.", R"({"a":1.0})"},
      {"a: .", R"({"a":"."})"},
      {"a: 1e999", R"({"a":"1e999"})"},  // not a finite number: kept as written
      {"a: 12-3", R"({"a":"12-3"})"},
  };
  for (const auto& row : rows) {
    INFO(row.yaml);
    auto docs = yamlToJson(row.yaml);
    REQUIRE(docs.ok());
    REQUIRE(docs->size() == 1);
    CHECK(json::dump(docs->at(0)) == row.json);
  }
}

TEST_CASE("YAML streams give one document per non-empty document", "[yaml][unit]") {
  auto docs = yamlToJson("---\na: 1\n---\n---\nb: 2\n");
  REQUIRE(docs.ok());
  CHECK(docs->size() == 2);
  auto marked = yamlToJson("%YAML 1.2\n--- {a: 1}\n...\n# note\n--- b: 2\n---\nc: 3\n");
  REQUIRE(marked.ok());
  REQUIRE(marked->size() == 3);
  CHECK(json::dump(marked->at(0)) == R"({"a":1})");
  CHECK(json::dump(marked->at(1)) == R"({"b":2})");
  // Lines count from the start of the stream, whatever document they are in.
  auto twice = yamlToJson("a: 1\n---\nb: 1\nb: 2\n");
  REQUIRE_FALSE(twice.ok());
  CHECK_THAT(twice.status().message(),
             Catch::Contains("line 4: duplicate key \"b\" (first at line 3)"));
  auto broken = yamlToJson("a: 1\n---\nb: [1\n");
  REQUIRE_FALSE(broken.ok());
  CHECK_THAT(broken.status().message(), Catch::StartsWith("invalid YAML: line 4"));
  // Found by fuzz/policy_yaml_fuzzer: yaml-cpp 0.7's LoadAll never returns on these.
  for (const char* hang : {",:", ",", "\n,\n", "a: 1\n---\n,:\n"}) {
    INFO(hang);
    CHECK(yamlToJson(hang).ok());  // null documents, as yaml-cpp reads them
  }
  auto bad = yamlToJson("a: [1, 2\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("invalid YAML") != std::string::npos);
}

TEST_CASE("hostile YAML is refused with its line, never expanded or crashed on", "[yaml][unit]") {
  // Nine levels of nine aliases each: 9^9 values if expanded.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    std::string prev = "*a" + std::to_string(i - 1);
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 9; ++k) bomb += ", " + prev;
    bomb += "]\n";
  }
  std::string big_scalar = "a: " + std::string(kYamlMaxScalar + 1, '1') + "\n";
  // Within the scalar limit, but expanded 100 times past the byte budget.
  std::string wide = "a: &w " + std::string(kYamlMaxScalar, 'w') + "\nb: [";
  for (int i = 0; i < 100; ++i) wide += std::string(i != 0 ? ", " : "") + "*w";
  wide += "]\n";
  struct Row {
    std::string name;
    std::string yaml;
    std::string error;
  };
  const std::vector<Row> rows = {
      {"alias bomb", bomb, "values (aliases?)"},
      {"a scalar over the limit", big_scalar, "line 1: a scalar of 1048577 bytes"},
      {"a big scalar expanded", wide, "bytes of text (aliases?)"},
      {"deep nesting", std::string(100000, '[') + std::string(100000, ']'), "invalid YAML"},
      {"nesting over the limit",
       std::string(kYamlMaxDepth + 1, '[') + std::string(kYamlMaxDepth + 1, ']'), "invalid YAML"},
      {"a key twice", "spec:\n  numVfs: 1\n  mtu: 9000\n  numVfs: 64\n",
       "invalid YAML: line 4: duplicate key \"numVfs\" (first at line 2)"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto docs = yamlToJson(row.yaml);
    REQUIRE_FALSE(docs.ok());
    CHECK(docs.status().code() == Code::kInvalidArgument);
    CHECK_THAT(docs.status().message(), Catch::Contains(row.error));
  }
  // A 50,000-digit number is a string, read without a regular expression.
  auto digits = yamlToJson("a: " + std::string(50000, '7'));
  REQUIRE(digits.ok());
  CHECK(digits->at(0)["a"].GetStringLength() == 50000);
  // The same key in different mappings is fine.
  CHECK(yamlToJson("a: {x: 1}\nb: {x: 2}\n").ok());
}

TEST_CASE("JSON printed as YAML reads back as the same JSON", "[yaml][unit]") {
  std::string text =
      R"({"s":"x","n":3,"f":2.5,"t":true,"z":null,"q":"123","e":"","l":[1,"true"],"o":{"k":"v"}})";
  auto doc = json::parse(text);
  REQUIRE(doc.ok());
  auto back = yamlToJson(jsonToYaml(*doc));
  REQUIRE(back.ok());
  CHECK(json::dump(back->at(0)) == text);
}

TEST_CASE("Kubernetes name grammars accept exactly what apimachinery's validation accepts",
          "[names][unit]") {
  struct Row {
    std::string_view s;
    bool label, subdomain, c_identifier, name_part;
  };
  const std::string long_label(63, 'a');
  const std::string too_long_label(64, 'a');
  std::vector<Row> rows = {
      {"a", true, true, true, true},
      {"0000-3b-02-0", true, true, false, true},
      {"dra.net", false, true, false, true},
      {"resource.kubernetes.io", false, true, false, true},
      {"pcieRoot", false, false, true, true},
      {"_x9", false, false, true, false},
      {"9x", true, true, false, true},
      {"-a", false, false, false, false},
      {"a-", false, false, false, false},
      {"a..b", false, false, false, true},
      {".a", false, false, false, false},
      {"a.", false, false, false, false},
      {"A", false, false, true, true},
      {"a_b", false, false, true, true},
      {"a b", false, false, false, false},
      {"a/b", false, false, false, false},
      {"", false, false, false, false},
      {long_label, true, true, true, true},
      {too_long_label, false, true, true, true},
  };
  for (const auto& r : rows) {
    INFO(r.s);
    CHECK(isDnsLabel(r.s) == r.label);
    CHECK(isDnsSubdomain(r.s) == r.subdomain);
    CHECK(isCIdentifier(r.s) == r.c_identifier);
    CHECK(isNamePart(r.s) == r.name_part);
  }
  CHECK(isDnsSubdomain(std::string(253, 'a').insert(60, ".")) == false);
  CHECK(isDnsSubdomain(std::string(252, 'a').insert(60, ".")));
}

TEST_CASE("RFC 3339 times parse and print as Kubernetes writes them", "[time][unit]") {
  auto t = parseRfc3339("2026-11-30T09:38:48Z");
  REQUIRE(t.ok());
  CHECK(formatRfc3339(*t) == "2026-11-30T09:38:48Z");
  auto micro = parseRfc3339("2026-11-30T09:38:48.123456Z");
  REQUIRE(micro.ok());
  CHECK(formatRfc3339Micro(*micro) == "2026-11-30T09:38:48.123456Z");
  auto offset = parseRfc3339("2026-11-30T10:38:48+01:00");
  REQUIRE(offset.ok());
  CHECK(*offset == *t);
  for (const char* bad : {"", "2026-11-30", "2026-13-01T00:00:00Z", "2026-11-30T09:38:48",
                          "2026-11-30T09:38:48Zjunk"}) {
    INFO(bad);
    CHECK_FALSE(parseRfc3339(bad).ok());
  }
}

TEST_CASE("base64 round-trips and rejects garbage", "[base64][unit]") {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    auto back = base64Decode(base64Encode(s));
    REQUIRE(back.ok());
    CHECK(*back == s);
  }
  CHECK(*base64Decode("aGVs\nbG8=") == "hello");
  CHECK_FALSE(base64Decode("abc").ok());
  CHECK_FALSE(base64Decode("@@@@").ok());
}

TEST_CASE("child processes get argv verbatim, with no shell in between", "[process][unit]") {
  auto out =
      runProcess({.argv = {"printf", "%s|", "$HOME", "a b;c", "`id`"}}, std::chrono::seconds(5));
  REQUIRE(out.ok());
  CHECK(out->exit_code == 0);
  CHECK(out->out == "$HOME|a b;c|`id`|");

  auto env = runProcess({.argv = {"sh", "-c", "printf %s \"$X\""}, .env = {{"X", "from-env"}}},
                        std::chrono::seconds(5));
  REQUIRE(env.ok());
  CHECK(env->out == "from-env");

  auto missing = runProcess({.argv = {"/nonexistent/plugin"}}, std::chrono::seconds(5));
  CHECK((!missing.ok() || missing->exit_code == 127));

  auto slow = runProcess({.argv = {"sleep", "10"}}, std::chrono::milliseconds(200));
  REQUIRE_FALSE(slow.ok());
  CHECK(slow.status().code() == Code::kTimeout);
}

TEST_CASE("a child's stdin gets the data given, however much, and may stop reading",
          "[process][unit]") {
  auto echo = runProcess({.argv = {"cat"}, .stdin_data = "{\"cniVersion\":\"1.0.0\"}"},
                         std::chrono::seconds(5));
  REQUIRE(echo.ok());
  CHECK(echo->out == "{\"cniVersion\":\"1.0.0\"}");
  std::string big(3 << 20, 'x');  // far more than a pipe or socket buffer holds
  auto counted = runProcess({.argv = {"wc", "-c"}, .stdin_data = big}, std::chrono::seconds(20));
  REQUIRE(counted.ok());
  CHECK(counted->out == std::to_string(big.size()) + "\n");
  // A child that exits without reading: no SIGPIPE for us, its exit code for the caller.
  auto ignored = runProcess({.argv = {"true"}, .stdin_data = big}, std::chrono::seconds(20));
  REQUIRE(ignored.ok());
  CHECK(ignored->exit_code == 0);
  auto none = runProcess({.argv = {"cat"}}, std::chrono::seconds(5));  // /dev/null
  REQUIRE(none.ok());
  CHECK(none->out.empty());
}

#ifdef NDEBUG
TEST_CASE("a broken invariant throws InvariantError in a release build, naming where",
          "[base][unit]") {
  auto broken = [] { SDRA_CHECK(1 + 1 == 3); };
  CHECK_THROWS_AS(broken(), InvariantError);
  CHECK_THROWS_WITH(broken(),
                    Catch::StartsWith("BUG: 1 + 1 == 3 at ") && Catch::Contains("base_test.cpp:"));
}
#endif

TEST_CASE("JSON: one member of a large answer is read without building or reading the rest",
          "[base][json][unit]") {
  std::string answer =
      R"({"apiVersion":"v1","kind":"X","metadata":{"name":"n","generation":3,"labels":{"a":"b"},)"
      R"("list":[1,{"deep":[true,null]}]},"spec":{"this part is never read": [[[ BROKEN)";
  REQUIRE_FALSE(json::parse(answer).ok());
  auto meta = json::parseMember(answer, "metadata");
  REQUIRE(meta.ok());
  CHECK(
      json::dump(*meta) ==
      R"({"metadata":{"name":"n","generation":3,"labels":{"a":"b"},"list":[1,{"deep":[true,null]}]}})");
  // A scalar member; keys of nested objects with the same name do not count.
  auto kind = json::parseMember(R"({"spec":{"kind":"inner"},"kind":"Outer","x":[)", "kind");
  REQUIRE(kind.ok());
  CHECK(json::dump(*kind) == R"({"kind":"Outer"})");
  // Without the member: the whole text, by parse()'s rules.
  auto whole = json::parseMember(R"({"a":1})", "metadata");
  REQUIRE(whole.ok());
  CHECK(json::dump(*whole) == R"({"a":1})");
  CHECK_FALSE(json::parseMember(R"({"a":1} trailing)", "metadata").ok());
  // Nesting before the member is refused as parse() refuses it; invalid UTF-8 inside it too.
  auto deep = json::parseMember(
      "{\"x\":" + std::string(600, '[') + "1" + std::string(600, ']') + ",\"metadata\":{}}",
      "metadata");
  REQUIRE_FALSE(deep.ok());
  CHECK_THAT(deep.status().message(), Catch::Contains("nested deeper than 512"));
  CHECK_FALSE(json::parseMember("{\"metadata\":{\"name\":\"\xff\"}}", "metadata").ok());
}

TEST_CASE("JSON: hostile input is refused with a message, never crashes", "[base][json][unit]") {
  std::string deep_ok = std::string(json::kMaxDepth, '[') + std::string(json::kMaxDepth, ']');
  CHECK(json::parse(deep_ok).ok());
  struct Row {
    std::string name;
    std::string text;
    std::string error;
  };
  const std::vector<Row> rows = {
      {"200,000 nested arrays (a 400 KB AdmissionReview body)", std::string(200000, '['),
       "invalid JSON at byte 512: nested deeper than 512 arrays and objects"},
      {"one level too deep", std::string(json::kMaxDepth + 1, '[') + std::string(513, ']'),
       "nested deeper than 512"},
      {"nested objects",
       [] {
         std::string s;
         for (int i = 0; i < 600; ++i) s += "{\"a\":";
         return s + "1" + std::string(600, '}');
       }(),
       "nested deeper than 512"},
      {"a value followed by garbage", R"({"kind":"AdmissionReview"} trailing)",
       "The document root must not be followed by other values"},
      {"two values", "{}{}", "The document root must not be followed by other values"},
      {"invalid UTF-8 in a string", "{\"a\":\"\xff\xfe\"}", "Invalid encoding in string"},
      {"a lone low surrogate escape", R"({"a":"x\udc00"})",
       "a \\u escape of a lone UTF-16 surrogate (\\ud800-\\udfff) is not text"},
      {"a lone surrogate escape in a key", R"({"\udfff":1})", "lone UTF-16 surrogate"},
      {"a high surrogate without its low half", R"({"a":"\ud800x"})", "surrogate"},
      {"a number beyond a double (CNI fuzzer finding)", R"({"vlan":144400000004E+300})",
       "a number beyond the range of a double"},
  };
  for (const auto& row : rows) {
    INFO(row.name);
    auto parsed = json::parse(row.text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == Code::kInvalidArgument);
    CHECK_THAT(parsed.status().message(), Catch::Contains(row.error));
  }
  CHECK(json::parse("  {\"a\": 1}\n").ok());  // whitespace around one value is fine
}

TEST_CASE("JSON is re-indented as Go's json.Indent does, tokens verbatim", "[json][unit]") {
  CHECK(json::indentLikeGo(R"( {"a" : 1e3, "b":[ ], "c":{}, "d":"x \"y\" \u00e9, {z}"} )", "  ") ==
        "{\n"
        "  \"a\": 1e3,\n"
        "  \"b\": [],\n"
        "  \"c\": {},\n"
        "  \"d\": \"x \\\"y\\\" \\u00e9, {z}\"\n"
        "}");
  CHECK(json::indentLikeGo(R"([1,[2,{"k":[true,null]}]])", "\t") ==
        "[\n\t1,\n\t[\n\t\t2,\n\t\t{\n\t\t\t\"k\": "
        "[\n\t\t\t\ttrue,\n\t\t\t\tnull\n\t\t\t]\n\t\t}\n\t]\n]");
  CHECK(json::indentLikeGo("\"s\\\\\"", "  ") == "\"s\\\\\"");
}

TEST_CASE(
    "a child that closes its outputs and keeps running is killed at the deadline, with its "
    "process group",
    "[process][unit]") {
  testing::TempDir dir;
  std::string pid_file = dir.path() + "/grandchild.pid";
  // The child starts a grandchild, closes stdout and stderr, and sleeps: EOF comes long before
  // the child exits.
  auto hung = runProcess({.argv = {"sh", "-c",
                                   "sleep 300 >/dev/null 2>&1 & echo $! > " + pid_file +
                                       "; exec >&- 2>&-; sleep 300"}},
                         std::chrono::milliseconds(500));
  REQUIRE_FALSE(hung.ok());
  CHECK(hung.status().code() == Code::kTimeout);
  CHECK_THAT(hung.status().message(), Catch::Contains("did not exit within 500 ms"));
  pid_t grandchild = std::stoi(readFile(pid_file).valueOr("0"));
  REQUIRE(grandchild > 0);
  // Killed with the group: gone, or a zombie until whoever adopted it reaps it.
  auto alive = [&] {
    std::string stat = readFile("/proc/" + std::to_string(grandchild) + "/stat").valueOr("");
    auto state = stat.find(") ");
    return state != std::string::npos && stat[state + 2] != 'Z';
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (alive() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK_FALSE(alive());

  // A child that leaves a process behind holding its stdout is done when it exits.
  auto left = runProcess({.argv = {"sh", "-c", "sleep 2 & echo done"}}, std::chrono::seconds(30));
  REQUIRE(left.ok());
  CHECK(left->exit_code == 0);
  CHECK(left->out == "done\n");
}

TEST_CASE("JSON: a surrogate pair escape decodes to UTF-8 that reads back", "[base][json][unit]") {
  auto parsed = json::parse(R"({"a":"\ud83d\ude00"})");
  REQUIRE(parsed.ok());
  std::string text = json::dump(*parsed);
  CHECK(text == "{\"a\":\"\xF0\x9F\x98\x80\"}");
  CHECK(json::parse(text).ok());
}

TEST_CASE("interned equal values share one copy until nobody holds it", "[interner][unit]") {
  Interner<std::string> interner;
  auto a = interner.intern("pci0000:3a");
  auto b = interner.intern("pci0000:3a");
  auto c = interner.intern("pci0000:80");
  CHECK(a == b);
  CHECK(a != c);
  CHECK(*a == "pci0000:3a");
  CHECK(interner.size() == 2);
  a.reset();
  CHECK(interner.size() == 2);  // b still holds it
  b.reset();
  CHECK(interner.size() == 1);
  auto again = interner.intern("pci0000:3a");
  CHECK(*again == "pci0000:3a");
  CHECK(interner.size() == 2);
}

TEST_CASE("threads interning and letting go of the same values agree on one copy",
          "[interner][unit]") {
  Interner<std::string> interner;
  auto kept = interner.intern("kept");
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        auto v = interner.intern("value-" + std::to_string((i + t) % 7));
        auto k = interner.intern("kept");
        if (k != kept || *v != "value-" + std::to_string((i + t) % 7)) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(mismatches == 0);
  CHECK(interner.size() == 1);  // only "kept" is still held
}

TEST_CASE("forEachConcurrently runs every index once on at most the threads given",
          "[parallel][unit]") {
  for (size_t threads : {size_t{1}, size_t{4}}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{50}}) {
      INFO("threads " << threads << ", n " << n);
      std::vector<std::atomic<int>> runs(n);
      std::atomic<int> running{0};
      std::atomic<int> most{0};
      forEachConcurrently(n, threads, [&](size_t i) {
        int now = ++running;
        for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        ++runs[i];
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        --running;
      });
      for (size_t i = 0; i < n; ++i) CHECK(runs[i] == 1);
      CHECK(most <= static_cast<int>(threads));
    }
  }
}

TEST_CASE("an atomic write leaves the file alone in its directory, with its mode", "[base][unit]") {
  sriovdra::testing::TempDir dir;
  const std::string path = dir.path() + "/checkpoint";
  REQUIRE(sriovdra::writeFileAtomic(path, "old", 0600).isOk());
  REQUIRE(sriovdra::writeFileAtomic(path, "new", 0640).isOk());
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    names.push_back(e.path().filename().string());
  }
  CHECK(names == std::vector<std::string>{"checkpoint"});
  CHECK(sriovdra::readFile(path).valueOr("") == "new");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  // A directory that is not there: the error names the file.
  auto missing = sriovdra::writeFileAtomic(dir.path() + "/no/such", "x");
  CHECK_THAT(missing.message(), Catch::Contains(dir.path() + "/no/such"));
}
